package emu

import (
	"testing"

	"github.com/rqemu/rqemu/emu/eevdf"
)

// shortWakeup runs two hogs on CPU 0 of hikey-8 under feat with a task of
// a 0.1 ms custom slice (sched_runtime) blocked beside them. At the first
// moment curr is eligible (after update_curr()) and the short task sleeps,
// curr is given a fresh request with its RUN_TO_PARITY mark, as
// set_next_entity() does at a pick, and the short task is woken by hand
// at zero lag; it reports whether curr must reschedule.
func shortWakeup(t *testing.T, feat string) bool {
	t.Helper()
	s := newSim(t, "hikey-8", feat)
	rq := s.RQ(0)
	mustTask(t, s, TaskSpec{Comm: "hog1", CPU: 0, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Prog: Hog()})
	w := mustTask(t, s, TaskSpec{Comm: "short", CPU: 0, Slice: 100_000, Prog: Loop(Block(), Run(50_000))})
	for step := int64(1); step <= 1000; step++ {
		s.Run(step * 10_000)
		c := rq.curr
		if c == nil || w.state != TaskSleeping || w.se.SchedDelayed || rq.needResched {
			continue
		}
		cfs := c.se.cfsRq
		rq.enterKernel()
		rq.updateCurr(cfs)
		if rq.needResched || !cfs.q.Eligible(&c.se.Entity) {
			rq.resume()
			continue
		}
		c.se.Deadline = c.se.Vruntime + eevdf.CalcDeltaFair(c.se.Slice, &c.se.Entity)
		c.se.Vlag = int64(c.se.Deadline)
		w.se.Vlag = 0
		rq.tryToWakeUp(w, nil, rq.now, 0)
		if w.se.Slice != 100_000 || !cfs.q.Eligible(&w.se.Entity) || int64(w.se.Deadline-c.se.Deadline) >= 0 || !cfs.q.Eligible(&c.se.Entity) {
			t.Fatalf("%s: want both eligible and the wakee's deadline first (slice %d, deadlines %d, %d)", feat, w.se.Slice, w.se.Deadline, c.se.Deadline)
		}
		resched := rq.needResched
		rq.resume()
		return resched
	}
	t.Fatalf("%s: curr never eligible with the short task asleep", feat)
	return false
}

// TestPreemptShort (fair.c v6.12 check_preempt_wakeup_fair(),
// do_preempt_short(); 85e511df3c): a waking task with a shorter slice,
// eligible and with an earlier deadline, cancels curr's RUN_TO_PARITY
// protection and preempts it; without PREEMPT_SHORT (v6.11 tip) the
// protected curr keeps the CPU.
func TestPreemptShort(t *testing.T) {
	if !shortWakeup(t, "v6.12-eevdf") {
		t.Error("v6.12-eevdf: the short-slice wakee did not preempt a protected curr")
	}
	if shortWakeup(t, "v6.12-eevdf,-PREEMPT_SHORT") {
		t.Error("v6.12-eevdf,-PREEMPT_SHORT: the wakee preempted a protected curr")
	}
	if shortWakeup(t, "v6.11-eevdf") {
		t.Error("v6.11-eevdf: the wakee preempted a protected curr")
	}
}

// TestTaskSliceClamped: sched_runtime becomes se->slice within [0.1 ms,
// 100 ms] (v6.12 __setscheduler_params()), kept across deadline renewals
// (update_deadline(): custom_slice); a CFS profile refuses it.
func TestTaskSliceClamped(t *testing.T) {
	for _, tc := range []struct{ in, want uint64 }{{1, 100_000}, {500_000, 500_000}, {1 << 40, 100_000_000}} {
		s := newSim(t, "hikey-8", "v6.12-eevdf")
		p := mustTask(t, s, TaskSpec{Comm: "p", CPU: 0, Slice: tc.in, Prog: Hog()})
		mustTask(t, s, TaskSpec{Comm: "q", CPU: 0, Prog: Hog()})
		s.Run(50 * ms)
		if !p.se.CustomSlice || p.se.Slice != tc.want {
			t.Errorf("sched_runtime %d: slice %d custom %t, want %d", tc.in, p.se.Slice, p.se.CustomSlice, tc.want)
		}
	}
	s := newSim(t, "hikey-8", "v6.5-cfs")
	if _, err := s.NewTask(TaskSpec{Comm: "p", CPU: 0, Slice: 1000, Prog: Hog()}); err == nil {
		t.Error("a slice under CFS: no error")
	}
}

// groupCurrRenewed: on CPU 0 of hikey-8 under feat, a hog alone in a
// task group's cfs_rq beside a hog in the root; once the group's hog is
// curr and not yet asked to reschedule, its deadline is made due and
// update_curr() runs on the group's cfs_rq (one runnable entity, while
// rq->nr_running is 2); it reports whether that rescheduled.
func groupCurrRenewed(t *testing.T, feat string) bool {
	t.Helper()
	s := newSim(t, "hikey-8", feat)
	rq := s.RQ(0)
	g, err := s.NewGroup("g", nil, 1024)
	if err != nil {
		t.Fatal(err)
	}
	a := mustTask(t, s, TaskSpec{Comm: "grouped", CPU: 0, Group: g, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "root", CPU: 0, Prog: Hog()})
	for step := int64(1); step <= 1000; step++ {
		s.Run(step * 10_000)
		if rq.curr != a || rq.needResched {
			continue
		}
		cfs := a.se.cfsRq
		if cfs.NrRunning() != 1 || rq.nrRunning != 2 {
			t.Fatalf("%s: group cfs_rq nr_running %d, rq nr_running %d; want 1 and 2", feat, cfs.NrRunning(), rq.nrRunning)
		}
		rq.enterKernel()
		a.se.ExecStart -= 1000
		a.se.Deadline = a.se.Vruntime
		rq.updateCurr(cfs)
		return rq.needResched
	}
	t.Fatalf("%s: the grouped hog never ran", feat)
	return false
}

// TestUpdateCurrNrRunning (fair.c update_curr(): v6.12-rc1's
// "if (rq->nr_running == 1) return;" from 85e511df3c against the fix's
// cfs_rq->nr_running, 1c3386188ad9 / d4ac164bde): the model has only the
// fair class, so the two differ on a task group's cfs_rq with one
// runnable entity while the CPU has another task: the deadline renewal
// reschedules under the rc1 test and not under the fix (nor v6.6's
// update_deadline(), which tested cfs_rq->nr_running > 1).
func TestUpdateCurrNrRunning(t *testing.T) {
	for _, tc := range []struct {
		feat    string
		resched bool
	}{
		{"v6.12-eevdf,+RESCHED_RQ_NR_RUNNING", true},
		{"v6.12-eevdf", false},
		{"v6.6-eevdf", false},
	} {
		if got := groupCurrRenewed(t, tc.feat); got != tc.resched {
			t.Errorf("%s: update_curr() on the group's cfs_rq rescheduled: %t, want %t", tc.feat, got, tc.resched)
		}
	}
}
