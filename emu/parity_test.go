package emu

import (
	"testing"
)

// The RUN_TO_PARITY rule of v6.6 (63304558ba5d "sched/eevdf: Curb
// wakeup-preemption"), case by case, from the code:
//
//   - fair.c: set_next_entity() stamps vlag = deadline when the entity is
//     picked; update_deadline() gives a new request (a new deadline), which
//     leaves the stamp stale;
//   - fair.c: pick_eevdf() drops curr unless it is on_rq and eligible, and
//     returns a kept curr at once while the stamp still matches;
//   - fair.c: check_preempt_wakeup() preempts iff pick_eevdf() picks the
//     wakee; Chen Yu's instrumentation (the study's counters) increments
//     check_preempt_count on entry, before any early return, and
//     need_preempt_count at the preempt label.
//
// Each case builds one CPU with curr (a hog), another hog in the tree and
// a sleeper W, sets their virtual times by hand (nice 0: virtual time is
// real time), wakes W and reads the decision.

// parityCase is one arrangement, in µs of virtual time above min_vruntime.
type parityCase struct {
	name string
	// curr's vruntime and deadline; stamped: its vlag holds the deadline
	// (the set_next_entity() marker); renew: it then consumes the request
	// and update_deadline() runs.
	cv, cd  int64
	stamped bool
	renew   bool
	// the queued hog's vruntime (its deadline is a slice later), and W's
	// saved lag.
	ov, wlag int64
	// needResched: TIF_NEED_RESCHED is already set when W wakes.
	needResched bool
}

type parityOutcome struct {
	checks, preempts int64
	resched          bool
	currEligible     bool // just before the wakee's check (after placement)
	wakeeEarlier     bool // the wakee's deadline is before curr's
}

func parityScene(t *testing.T, feat string, c parityCase) parityOutcome {
	t.Helper()
	s := newSim(t, "hikey-8", feat)
	a := mustTask(t, s, TaskSpec{Comm: "a", CPU: 0, Prog: Hog()})
	b := mustTask(t, s, TaskSpec{Comm: "b", CPU: 0, Prog: Hog()})
	w := mustTask(t, s, TaskSpec{Comm: "w", CPU: 0, Prog: Loop(Block(), Run(50_000))})
	rq := s.RQ(0)
	at := 20 * ms
	for s.Run(at); rq.curr == nil || rq.needResched || w.state != TaskSleeping; s.Run(at) {
		at += ms / 8
	}
	rq.enterKernel()
	rq.updateRQClock()
	cfs := rq.cfs
	rq.updateCurr(cfs)
	curr, other := &a.se, &b.se
	if rq.curr == b {
		curr, other = other, curr
	}
	us := uint64(1000)
	m := cfs.q.MinVruntime
	vs := rq.tun.BaseSlice // nice 0: vslice == slice

	cfs.q.Dequeue(&other.Entity)
	other.Vruntime = m + uint64(c.ov)*us
	other.Deadline = other.Vruntime + vs
	cfs.q.Enqueue(&other.Entity)

	curr.Vruntime = m + uint64(c.cv)*us
	curr.Deadline = m + uint64(c.cd)*us
	curr.Vlag = 0
	if c.stamped {
		curr.Vlag = int64(curr.Deadline)
	}
	if c.renew {
		// update_deadline(): the request is used up, a new one starts.
		curr.Vruntime = curr.Deadline
		if !cfs.q.UpdateDeadline(&curr.Entity) {
			t.Fatal("update_deadline() did not renew a consumed request")
		}
	}
	w.se.Vlag = c.wlag * int64(us)
	// TIF_NEED_RESCHED is part of the arrangement (the update_curr()
	// above may have set it for the state it replaced).
	rq.needResched = c.needResched

	before := rq.Stats
	var out parityOutcome
	rq.tryToWakeUp(w, nil, rq.now, 0)
	out.checks = rq.Stats.CheckPreemptCount - before.CheckPreemptCount
	out.preempts = rq.Stats.NeedPreemptCount - before.NeedPreemptCount
	out.resched = rq.needResched
	out.currEligible = cfs.q.Eligible(&curr.Entity)
	out.wakeeEarlier = int64(w.se.Deadline-curr.Deadline) < 0
	return out
}

// TestRunToParityRule: fair.c: pick_eevdf(), set_next_entity(),
// update_deadline() and check_preempt_wakeup() (v6.6, 63304558ba5d), with
// the study's counters where Chen Yu's schedstat patch puts them.
func TestRunToParityRule(t *testing.T) {
	cases := []struct {
		c parityCase
		// whether the wakee preempts with RUN_TO_PARITY and without it
		rtp, noRtp bool
	}{
		// curr stamped and eligible, the wakee eligible with an earlier
		// deadline: RUN_TO_PARITY keeps curr; without it the wakee wins.
		{parityCase{name: "stamped-eligible", cv: 2500, cd: 4600, stamped: true, ov: 5000, wlag: 2000}, false, true},
		// curr stamped but not eligible: pick_eevdf() drops it first.
		{parityCase{name: "stamped-ineligible", cv: 4000, cd: 6000, stamped: true, ov: 5000, wlag: 2000}, true, true},
		// curr picked, then given a new slice: the stamp is stale.
		{parityCase{name: "new-slice", cv: 2500, cd: 4600, stamped: true, renew: true, ov: 9000, wlag: 2000}, true, true},
	}
	for _, tc := range cases {
		for _, mode := range []struct {
			feat string
			want bool
		}{{"v6.6-eevdf", tc.rtp}, {"v6.6-eevdf,-RUN_TO_PARITY", tc.noRtp}} {
			o := parityScene(t, mode.feat, tc.c)
			t.Logf("%-18s %-26s curr eligible %v, wakee's deadline earlier %v: checks %d preempts %d", tc.c.name, mode.feat, o.currEligible, o.wakeeEarlier, o.checks, o.preempts)
			if !o.wakeeEarlier {
				t.Errorf("%s: the arrangement is wrong: the wakee's deadline is not before curr's", tc.c.name)
			}
			wantPreempts := int64(0)
			if mode.want {
				wantPreempts = 1
			}
			if o.checks != 1 || o.preempts != wantPreempts || o.resched != mode.want {
				t.Errorf("%s under %s: checks %d preempts %d resched %v, want 1 check, %d preemption(s), resched %v",
					tc.c.name, mode.feat, o.checks, o.preempts, o.resched, wantPreempts, mode.want)
			}
		}
	}
}

// TestPreemptCountOnEntry: Chen Yu's check_preempt_count counts every call
// of check_preempt_wakeup(), also one that returns at once because
// TIF_NEED_RESCHED is already set; that call is no preemption. The study's
// success ratio is need_preempt_count / check_preempt_count over these.
func TestPreemptCountOnEntry(t *testing.T) {
	for _, feat := range []string{"v6.6-eevdf", "v6.6-eevdf,-RUN_TO_PARITY", "v6.5-cfs"} {
		o := parityScene(t, feat, parityCase{cv: 2500, cd: 4600, stamped: true, ov: 5000, wlag: 2000, needResched: true})
		if o.checks != 1 || o.preempts != 0 {
			t.Errorf("%s: a wakeup with need_resched set counted %d checks and %d preemptions, want 1 and 0", feat, o.checks, o.preempts)
		}
	}
}
