package emu

import (
	"slices"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestRacedWakeupLatency: on xeon-e5-2x10 (v5.15-cfs with UCLAMP, the
// uclamp-pipe study's kernel) a pipe's writer and reader on idle CPUs of
// one LLC: every wakeup takes ttwu_queue()'s direct path (core.c v5.15:
// try_to_wake_up(); ttwu_queue_cond() declines inside the LLC), and the
// wakee is on its runqueue only once the waker's rq_unlock() is done:
// after try_to_wake_up()'s frame, select_task_rq() and the enqueue under
// the target's lock. Then the idle CPU's exit and __schedule(). A waker
// that saw the wakee running (published at the last barrier) while it had
// gone to sleep has the wakeup completed at the barrier (ttwuRaced);
// before the fix that wakeup enqueued the wakee at the signal's time, so
// it ran sooner than any kernel path allows (issue 42: the row's
// UCLAMP-on run took that path for a quarter of its wakeups and came out
// faster than UCLAMP off). Two loads: perf bench sched pipe's pair, whose
// wakeups no longer race (a settled held signal goes on in the next
// epoch: TestHeldSignalEpochIndependent), and a writer that computes
// 2.5 us between writes to a reader that sleeps in each read, which
// sleeps in the epoch of the next write and races at most of them.
func TestRacedWakeupLatency(t *testing.T) {
	const trips = 400
	pair := func(s *Sim) [2]*Task { return pipePair(t, s, trips, nil) }
	stream := func(s *Sim) [2]*Task {
		sem := NewSem("pipe0", 0)
		p, err := s.NewPipe(PipeSpec{Name: sem.Name, Data: sem, Writers: 1, Size: 4, CPU: 7})
		if err != nil {
			t.Fatal(err)
		}
		read := Wait(sem).With(hwmodel.OpSyscall).OnPipe(p, PipeReadWait, 0)
		write := Signal(sem).With(hwmodel.OpSyscall).WithSync().OnPipe(p, PipeWrite, 0)
		return [2]*Task{
			mustTask(t, s, TaskSpec{Comm: "reader", CPU: 7, Sems: []*Sem{sem}, Prog: Loop(read)}),
			mustTask(t, s, TaskSpec{Comm: "writer", CPU: 8, Prog: Loop(Run(2500), write)}),
		}
	}
	for _, tc := range []struct {
		name      string
		load      func(*Sim) [2]*Task
		wantRaces bool
	}{{"pipe pair", pair, false}, {"stream", stream, true}} {
		s := newSim(t, "xeon-e5-2x10", "v5.15-cfs,+UCLAMP")
		s.EnableTrace(time10s, 0)
		tasks := tc.load(s)
		s.Run(4 * ms)
		raced := int64(0)
		for _, rq := range s.cpus {
			raced += rq.Stats.RacedWakeups
		}
		// The wakee's switch-in after each sched_waking of it.
		floor := s.m.Cost(hwmodel.OpTTWU) + s.m.Cost(hwmodel.OpEnqueue) + s.m.Cost(hwmodel.OpIdleExit) + s.m.Cost(hwmodel.OpSchedule)
		checked, short := 0, 0
		var lats []int64
		for i, p := range tasks {
			var in, out, waking []int64
			for _, r := range s.cpus[p.cpu].trace {
				if r.kind == trSwitch && r.next.task == p {
					in = append(in, r.t)
				}
				if r.kind == trSwitch && r.ctx.task == p {
					out = append(out, r.t)
				}
			}
			for _, r := range s.cpus[tasks[1-i].cpu].trace {
				if r.kind == trWaking && r.task == p && !r.pending {
					waking = append(waking, r.t)
				}
			}
			for _, w := range waking {
				// The wakee's next switch-in after the signal, once it
				// has switched out: before the signal (it slept, and the
				// waker saw it running), or after it (the race: it slept
				// after the waker's decision and before the barrier).
				k, _ := slices.BinarySearch(in, w+1)
				if k == len(in) {
					continue // not back in
				}
				if j, _ := slices.BinarySearch(out, in[k]); j == 0 || k > 0 && out[j-1] < in[k-1] {
					continue // no switch-out between its last run and this one
				}
				checked++
				lat := in[k] - w
				lats = append(lats, lat)
				if lat < floor {
					short++
					if short <= 5 {
						t.Errorf("%s: %v woken at %d ns ran at %d ns, %d ns later: sooner than try_to_wake_up(), the enqueue, the idle exit and __schedule() take (%d ns)", tc.name, p, w, in[k], lat, floor)
					}
				}
			}
		}
		if checked < trips || tc.wantRaces && raced < trips/4 {
			t.Fatalf("%s: %d wakeups checked, %d raced: the scenario tests nothing", tc.name, checked, raced)
		}
		if short > 0 {
			t.Errorf("%s: %d of %d wakeups too soon (%d raced)", tc.name, short, checked, raced)
		}
		slices.Sort(lats)
		t.Logf("%s: %d wakeups checked, %d raced; signal to switch-in min %d, median %d, max %d ns", tc.name, checked, raced, lats[0], lats[len(lats)/2], lats[len(lats)-1])
	}
}
