package emu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu/eevdf"
)

var profiles = []string{"v5.15-cfs", "v6.5-cfs", "v6.6-eevdf", "v6.7-eevdf", "v6.12-eevdf"}

// TestHogsShare: two nice-0 CPU hogs share one CPU 50/50 within 1% over
// 1 s, and nice 0 vs nice 5 share ≈ 3:1 (1024:335) by weight, under every
// profile.
func TestHogsShare(t *testing.T) {
	for _, prof := range profiles {
		t.Run(prof, func(t *testing.T) {
			s := newSim(t, "hikey-8", prof)
			a := mustTask(t, s, TaskSpec{Comm: "a", CPU: 0, Prog: Hog()})
			b := mustTask(t, s, TaskSpec{Comm: "b", CPU: 0, Prog: Hog()})
			c := mustTask(t, s, TaskSpec{Comm: "c", CPU: 1, Prog: Hog()})
			d := mustTask(t, s, TaskSpec{Comm: "d", CPU: 1, Nice: 5, Prog: Hog()})
			s.Run(1000 * ms)
			ra, rb := float64(a.SumExecRuntime()), float64(b.SumExecRuntime())
			if share := ra / (ra + rb); math.Abs(share-0.5) > 0.01 {
				t.Errorf("nice 0 vs 0: share %.4f, want 0.5 within 1%%", share)
			}
			want := float64(eevdf.PrioToWeight[20]) / float64(eevdf.PrioToWeight[25])
			got := float64(c.SumExecRuntime()) / float64(d.SumExecRuntime())
			if math.Abs(got/want-1) > 0.05 {
				t.Errorf("nice 0 vs 5: ratio %.3f, want %.3f within 5%%", got, want)
			}
			checkAccounting(t, s)
		})
	}
}

// checkAccounting: every virtual ns of every CPU is charged to a symbol.
func checkAccounting(t *testing.T, s *Sim) {
	t.Helper()
	for _, rq := range s.cpus {
		var sum int64
		for _, ns := range rq.profile {
			sum += ns
		}
		if sum != rq.now {
			t.Errorf("CPU %d: profile sums to %d ns but the clock is at %d", rq.cpu, sum, rq.now)
		}
	}
}

// TestNewTaskHalfSlice: with PLACE_DEADLINE_INITIAL a new task's first
// deadline is half a slice after its vruntime; without it, a whole one.
func TestNewTaskHalfSlice(t *testing.T) {
	for _, tc := range []struct {
		feat string
		div  uint64
	}{{"v6.6-eevdf", 2}, {"v6.6-eevdf,-PLACE_DEADLINE_INITIAL", 1}} {
		s := newSim(t, "hikey-8", tc.feat)
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
		s.Run(10 * ms)
		p := mustTask(t, s, TaskSpec{Comm: "new", CPU: 0, Prog: Hog()})
		vslice := eevdf.CalcDeltaFair(s.tun.BaseSlice, &p.se.Entity)
		if got, want := p.se.Deadline-p.se.Vruntime, vslice/tc.div; got != want {
			t.Errorf("%s: new task's deadline - vruntime = %d, want %d", tc.feat, got, want)
		}
	}
}

// sleeper runs run ns, then sleeps sleep ns, forever.
func sleeper(run, sleep int64) Program { return Loop(Run(run), Sleep(sleep)) }

// TestWakeupPlacedByLag: a sleeper that wakes is placed by its lag: the
// lag saved at its dequeue is what it has after the enqueue, V' - v = vlag
// (PLACE_LAG inflates it so the insertion's shift of V does not eat it).
func TestWakeupPlacedByLag(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	rq := s.RQ(0)
	mustTask(t, s, TaskSpec{Comm: "hog1", CPU: 0, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Nice: 3, Prog: Hog()})
	p := mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: sleeper(1*ms, 7*ms)})
	checked := 0
	for step := int64(1); step <= 400; step++ {
		s.Run(step * ms / 2)
		if p.state != TaskSleeping {
			continue
		}
		// Wake it by hand now, as its timer would, and compare.
		lag := p.se.Vlag
		rq.enterKernel()
		rq.tryToWakeUp(p, nil, rq.now, 0)
		cfs := p.se.cfsRq
		got := int64(cfs.q.AvgVruntimeV() - p.se.Vruntime)
		if d := got - lag; d < -1 || d > 1 {
			t.Fatalf("at %d ns: saved lag %d, lag after placement %d", rq.now, lag, got)
		}
		if lag != 0 {
			checked++
		}
		rq.resume()
	}
	if checked < 10 {
		t.Fatalf("only %d wakeups with a non-zero lag checked", checked)
	}
}

// wakerWakee: on one CPU, groups of one waker and two wakees: the waker
// computes 100 us and wakes a wakee, alternately; a wakee computes 50 us
// and blocks. Many runnable tasks per CPU, as in Chen Yu's hackbench -g
// 112 (40 tasks per CPU), so that curr is often still eligible when a
// wakee arrives.
func wakerWakee(t *testing.T, feat string, groups int) RQStats {
	s := newSim(t, "hikey-8", feat)
	for g := 0; g < groups; g++ {
		w1 := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 0, Prog: Loop(Block(), Run(50_000))})
		w2 := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 0, Prog: Loop(Block(), Run(50_000))})
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(100_000), Wake(w1), Run(100_000), Wake(w2))})
	}
	s.Run(500 * ms)
	return s.RQ(0).Stats
}

// TestRunToParity: RUN_TO_PARITY lowers the number of wakeup preemptions
// (kernel-mechanisms.md 7.7: curr keeps the CPU while protected, so only
// some checks preempt; without it a wakee placed left of V preempts
// almost every time).
func TestRunToParity(t *testing.T) {
	on := wakerWakee(t, "v6.6-eevdf", 8)
	off := wakerWakee(t, "v6.6-eevdf,-RUN_TO_PARITY", 8)
	t.Logf("RUN_TO_PARITY:    %d checks, %d preemptions (%.1f%%)", on.CheckPreemptCount, on.NeedPreemptCount, 100*float64(on.NeedPreemptCount)/float64(on.CheckPreemptCount))
	t.Logf("NO_RUN_TO_PARITY: %d checks, %d preemptions (%.1f%%)", off.CheckPreemptCount, off.NeedPreemptCount, 100*float64(off.NeedPreemptCount)/float64(off.CheckPreemptCount))
	if on.CheckPreemptCount == 0 || off.CheckPreemptCount == 0 {
		t.Fatal("no wakeup preemption checks")
	}
	rOn := float64(on.NeedPreemptCount) / float64(on.CheckPreemptCount)
	rOff := float64(off.NeedPreemptCount) / float64(off.CheckPreemptCount)
	if !(rOn < rOff) || on.NeedPreemptCount >= off.NeedPreemptCount {
		t.Errorf("RUN_TO_PARITY should preempt less: on %.3f (%d), off %.3f (%d)", rOn, on.NeedPreemptCount, rOff, off.NeedPreemptCount)
	}
}

// TestScenarioGolden pins a few single-CPU scenarios under every profile:
// per-task runtime, wait, switches and the CPU's schedstat line.
func TestScenarioGolden(t *testing.T) {
	for _, prof := range profiles {
		s := newSim(t, "hikey-8", prof)
		wakee := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 0, Prog: Loop(Block(), Run(200_000))})
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(500_000), Wake(wakee))})
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
		mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Nice: -5, Prog: sleeper(3*ms, 5*ms)})
		mustTask(t, s, TaskSpec{Comm: "nice10", CPU: 0, Nice: 10, Prog: Hog()})
		s.Run(500 * ms)
		var b strings.Builder
		fmt.Fprintf(&b, "%s on hikey-8 CPU 0, 500 ms\n", prof)
		for _, p := range s.Tasks() {
			fmt.Fprintf(&b, "  %-8s nice %3d  run %10d ns  wait %10d ns  max-wait %9d ns  slices %5d  vol %5d  invol %5d  preempted %4d\n",
				p.Comm, p.Nice, p.SumExecRuntime(), p.Stats.RunDelay, p.Stats.WaitMax, p.Stats.Pcount, p.Stats.NrVolSwitch, p.Stats.NrInvolSwitch, p.Stats.NrPreempted)
		}
		st := s.RQ(0).Stats
		fmt.Fprintf(&b, "  cpu0 %d %d %d %d %d %d %d %d  checks %d preempts %d\n", st.YldCount, st.SchedCount, st.SchedGoidle,
			st.TTWUCount, st.TTWULocal, st.RQCPUTime, st.RunDelay, st.Pcount, st.CheckPreemptCount, st.NeedPreemptCount)
		golden(t, "scenarios/mix-"+prof+".golden", []byte(b.String()))
		checkAccounting(t, s)
	}
}

// TestStaleRelativeVruntime: under the CFS migration protocol a task
// carries its vruntime relative to the source's min_vruntime, unbounded;
// one that arrives 500 ms right of the destination's min_vruntime waits
// until both hogs there have caught up (about 1 s). PLACE_MIGRATE places
// a task migrating to a longer queue at the back instead: a bounded wait
// of about two slices. EEVDF carries a clamped lag and needs no fix.
func TestStaleRelativeVruntime(t *testing.T) {
	for _, tc := range []struct {
		feat    string
		minWait int64
		maxWait int64
	}{
		{"v5.15-cfs", 900 * ms, 1100 * ms},
		{"v5.15-cfs,+PLACE_MIGRATE", 0, 60 * ms},
		{"v6.6-eevdf", 0, 30 * ms},
	} {
		s := newSim(t, "hikey-8", tc.feat)
		mustTask(t, s, TaskSpec{Comm: "hog1", CPU: 0, Prog: Hog()})
		mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Prog: Hog()})
		mustTask(t, s, TaskSpec{Comm: "busy", CPU: 1, Prog: Hog()})
		p := mustTask(t, s, TaskSpec{Comm: "hopper", CPU: 1, Prog: Hog()})
		at := 100 * ms
		for s.Run(at); p.state != TaskRunnable || p.se.cfsRq.curr == &p.se; s.Run(at) {
			at += ms / 4
		}
		// Skew the hopper 500 ms of virtual time right of CPU 1's
		// min_vruntime (an over-served task, or a stale offset), then
		// let load balancing move it.
		src := s.RQ(1)
		src.enterKernel()
		cfs := p.se.cfsRq
		cfs.q.Dequeue(&p.se.Entity)
		p.se.Vruntime = cfs.q.MinVruntime + uint64(500*ms)
		cfs.q.Enqueue(&p.se.Entity)
		// (Under EEVDF the skew is a negative lag, clamped at the
		// dequeue to max(2 slices, a tick) of service.)
		ranBefore := p.SumExecRuntime()
		s.moveQueuedTask(p, 0)
		src.resume()
		start := s.RQ(0).now
		var waited int64 = -1
		for step := int64(1); step <= 1500; step++ {
			s.Run(at + step*ms)
			if p.SumExecRuntime() > ranBefore {
				waited = s.RQ(0).now - start
				break
			}
		}
		t.Logf("%-26s hopper waited %d ms after migrating", tc.feat, waited/ms)
		if waited < tc.minWait || waited > tc.maxWait {
			t.Errorf("%s: the migrated task waited %d ms, want [%d, %d] ms", tc.feat, waited/ms, tc.minWait/ms, tc.maxWait/ms)
		}
	}
}
