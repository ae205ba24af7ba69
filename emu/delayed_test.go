package emu

import "testing"

// delayedScenario runs, on CPU 0 of hikey-8 under feat, two hogs and a
// task that runs 1 ms and sleeps sleep ns: each time it has just gone to
// sleep it runs the sleeper through check, for 200 ms.
func delayedScenario(t *testing.T, feat string, sleep int64, check func(s *Sim, p *Task)) *Sim {
	t.Helper()
	s := newSim(t, "hikey-8", feat)
	mustTask(t, s, TaskSpec{Comm: "hog1", CPU: 0, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Prog: Hog()})
	p := mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: sleeper(1*ms, sleep)})
	for step := int64(1); step <= 2000; step++ {
		s.Run(step * ms / 10)
		check(s, p)
	}
	return s
}

// TestDelayDequeueKeepsLag (fair.c v6.12: dequeue_entity()'s
// DELAY_DEQUEUE branch, pick_next_entity() and dequeue_entities(rq, se,
// DEQUEUE_SLEEP | DEQUEUE_DELAYED), finish_delayed_dequeue_entity()): a
// task that sleeps ineligible stays queued with the vruntime it slept
// with, counted in nr_running, so its negative lag is not saved and
// forgiven; it leaves the runqueue when a pick picks it, by then eligible,
// and DELAY_ZERO leaves it zero lag. Without DELAY_DEQUEUE (v6.6's
// dequeue) it leaves at once with its negative lag saved.
func TestDelayDequeueKeepsLag(t *testing.T) {
	for _, tc := range []struct {
		feat    string
		delayed bool
	}{{"v6.12-eevdf", true}, {"v6.11-eevdf", true}, {"v6.12-eevdf,-DELAY_DEQUEUE", false}, {"v6.6-eevdf", false}} {
		t.Run(tc.feat, func(t *testing.T) {
			var delayedSeen, picked, negSaved int
			var v uint64
			wasDelayed := false
			s := delayedScenario(t, tc.feat, 20*ms, func(s *Sim, p *Task) {
				se := &p.se
				switch {
				case p.state == TaskSleeping && se.SchedDelayed:
					if !se.OnRQ || !se.InTree() || s.RQ(0).nrRunning != 3 {
						t.Fatalf("delayed sleeper: on_rq=%t in_tree=%t nr_running=%d, want queued and counted (3)", se.OnRQ, se.InTree(), s.RQ(0).nrRunning)
					}
					if wasDelayed && se.Vruntime != v {
						t.Fatalf("delayed sleeper's vruntime moved: %d -> %d", v, se.Vruntime)
					}
					v, wasDelayed = se.Vruntime, true
					delayedSeen++
				case p.state == TaskSleeping:
					if wasDelayed {
						// Dequeued by a pick (its timer is 20 ms away).
						picked++
						if se.Vlag != 0 {
							t.Fatalf("dequeued on pick with vlag %d, want 0 (DELAY_ZERO: picked eligible)", se.Vlag)
						}
					} else if se.Vlag < 0 {
						negSaved++
					}
					wasDelayed = false
				default:
					wasDelayed = false
				}
			})
			var dq int64
			for _, rq := range s.cpus {
				dq += rq.Stats.DelayedDequeues
			}
			t.Logf("%s: %d samples delayed, %d dequeued on pick (%d counted), %d sleeps with negative vlag saved", tc.feat, delayedSeen, picked, dq, negSaved)
			if tc.delayed {
				if delayedSeen == 0 || picked == 0 || dq == 0 {
					t.Errorf("want delayed sleeps dequeued on pick: %d delayed samples, %d seen dequeued, %d counted", delayedSeen, picked, dq)
				}
				if negSaved != 0 {
					t.Errorf("%d sleeps left the runqueue with negative lag", negSaved)
				}
			} else if delayedSeen != 0 || negSaved == 0 {
				t.Errorf("without DELAY_DEQUEUE: %d delayed samples (want 0), %d sleeps with negative lag saved (want some)", delayedSeen, negSaved)
			}
		})
	}
}

// TestDelayedWakeupRequeues (core.c v6.12 try_to_wake_up(): "if
// (READ_ONCE(p->on_rq) && ttwu_runnable(p, wake_flags))"; fair.c v6.12
// requeue_delayed_entity()): a task woken while still delayed is requeued
// where it is, with the vruntime it slept with, and no enqueue.
func TestDelayedWakeupRequeues(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.12-eevdf")
	rq := s.RQ(0)
	mustTask(t, s, TaskSpec{Comm: "hog1", CPU: 0, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Prog: Hog()})
	p := mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: sleeper(1*ms, 50*ms)})
	woken := 0
	for step := int64(1); step <= 2000 && woken < 5; step++ {
		s.Run(step * ms / 10)
		if p.state != TaskSleeping || !p.se.SchedDelayed {
			continue
		}
		v, nr, enq := p.se.Vruntime, rq.nrRunning, rq.Stats.Enqueues
		rq.enterKernel()
		rq.tryToWakeUp(p, nil, rq.now, 0)
		if p.state != TaskRunnable || p.se.SchedDelayed || !p.se.InTree() {
			t.Fatalf("woken delayed task: state %v delayed %t in_tree %t, want runnable in the tree", p.state, p.se.SchedDelayed, p.se.InTree())
		}
		if rq.nrRunning != nr || rq.Stats.Enqueues != enq+1 {
			t.Fatalf("requeue changed nr_running %d -> %d (enqueues %d -> %d)", nr, rq.nrRunning, enq, rq.Stats.Enqueues)
		}
		if lag := int64(p.se.cfsRq.q.AvgVruntimeV() - p.se.Vruntime); lag <= 0 && p.se.Vruntime != v {
			t.Fatalf("negative lag %d requeued at a new vruntime (%d -> %d)", lag, v, p.se.Vruntime)
		}
		rq.resume()
		woken++
	}
	if woken == 0 || rq.Stats.DelayedWakeups < int64(woken) {
		t.Fatalf("%d delayed wakeups done, %d counted", woken, rq.Stats.DelayedWakeups)
	}
}

// TestNrRunningNSIsWhatSnapshotsSample: Stats.NrRunningNS integrates
// rq->nr_running over time, delayed sleepers included (fair.c v6.12:
// dequeue_entities() returns before sub_nr_running() for a delayed
// entity), so over a run it is the mean of snapshots of nr_running (what
// /proc/sched_debug's .nr_running shows), while the tasks' running and
// waiting time (rq_cpu_time + run_delay, Little's law over runnable
// tasks) leave the delayed ones out.
func TestNrRunningNSIsWhatSnapshotsSample(t *testing.T) {
	for _, tc := range []struct {
		feat    string
		delayed bool
	}{{"v6.12-eevdf", true}, {"v6.6-eevdf", false}} {
		t.Run(tc.feat, func(t *testing.T) {
			var sum, n float64
			s := delayedScenario(t, tc.feat, 3*ms, func(s *Sim, p *Task) {
				sum += float64(s.RQ(0).nrRunning)
				n++
			})
			rq := s.RQ(0)
			el := float64(rq.now)
			integral := float64(rq.Stats.NrRunningNS) / el
			little := float64(rq.Stats.RQCPUTime+rq.Stats.RunDelay) / el
			sampled := sum / n
			delayed := rq.Stats.DelayedDequeues + rq.Stats.DelayedWakeups
			t.Logf("%s: nr_running integral %.3f, snapshots %.3f, running+waiting %.3f, %d delayed sleeps", tc.feat, integral, sampled, little, delayed)
			if d := integral/sampled - 1; d > 0.02 || d < -0.02 {
				t.Errorf("integral %.3f, snapshots' mean %.3f: more than 2%% apart", integral, sampled)
			}
			if tc.delayed && (delayed == 0 || integral < little+0.05) {
				t.Errorf("delayed sleepers: integral %.3f should exceed running+waiting %.3f (%d delayed sleeps)", integral, little, delayed)
			}
			if !tc.delayed && (integral-little > 0.05 || little-integral > 0.05) {
				t.Errorf("no delayed dequeue: integral %.3f, running+waiting %.3f, want equal", integral, little)
			}
		})
	}
}

// TestNrRunningNSWithoutChanges: a runqueue whose nr_running does not
// change (three hogs, no sleep) still counts its time: Counters() closes
// each CPU's open interval at the sim's time.
func TestNrRunningNSWithoutChanges(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	for i := 0; i < 3; i++ {
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, CPUs: []int{0}, Prog: Hog()})
	}
	s.Run(20 * ms)
	c := s.Counters()
	got := c["sched.NrRunningNS"] / float64(s.Now())
	if got < 2.99 || got > 3.01 {
		t.Errorf("three hogs on one CPU for 20 ms: nr_running integral %.3f per ns of the run, want 3", got)
	}
}

// TestNrRunningNSIdleGaps: a CPU whose one task runs 1 ms and sleeps 1 ms
// has nr_running 1 half the time and 0 the other half; the integral counts
// no time of the idle gaps.
func TestNrRunningNSIdleGaps(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, CPUs: []int{0}, Prog: Loop(Run(ms), Sleep(ms))})
	s.Run(40 * ms)
	got := s.Counters()["sched.NrRunningNS"] / float64(s.Now())
	if got < 0.45 || got > 0.56 {
		t.Errorf("a task running half the time: nr_running integral %.3f, want about 0.5", got)
	}
}
