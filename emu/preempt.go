package emu

import "github.com/rqemu/rqemu/emu/eevdf"

// The fair class's preemption checks (fair.c): the tick's
// check_preempt_tick() (CFS) and check_preempt_wakeup() with its
// helpers; v6.12's PREEMPT_SHORT is preemptshort.go.

// checkPreemptTick is fair.c: check_preempt_tick() (CFS).
func (rq *RQ) checkPreemptTick(cfs *CfsRq, curr *SchedEntity) {
	ideal := min(rq.schedSlice(cfs, curr), rq.tun.Latency)
	ran := curr.SumExecRuntime - curr.PrevSumExecRuntime
	if ran > ideal {
		rq.reschedCurr()
		// The current task ran long enough, ensure it doesn't get
		// re-elected due to buddy favours.
		cfs.clearBuddies(curr)
		return
	}
	// Ensure that a task that missed wakeup preemption by a narrow
	// margin doesn't have to wait for a full slice.
	if ran < rq.tun.MinGranularity {
		return
	}
	left := seOf(cfs.q.PickFirst())
	if left == nil {
		return
	}
	delta := int64(curr.Vruntime - left.Vruntime)
	if delta < 0 {
		return
	}
	if uint64(delta) > ideal {
		rq.reschedCurr()
	}
}

// wakeupGran is fair.c: wakeup_gran().
func (rq *RQ) wakeupGran(se *SchedEntity) uint64 {
	return eevdf.CalcDeltaFair(rq.tun.WakeupGranularity, &se.Entity)
}

// wakeupPreemptEntity is fair.c: wakeup_preempt_entity(curr, se): 1 if se
// should preempt curr, 0 within the granularity, -1 if se is right of it.
func (rq *RQ) wakeupPreemptEntity(curr, se *SchedEntity) int {
	vdiff := int64(curr.Vruntime - se.Vruntime)
	if vdiff <= 0 {
		return -1
	}
	if uint64(vdiff) > rq.wakeupGran(se) {
		return 1
	}
	return 0
}

// findMatchingSE is fair.c: find_matching_se().
func findMatchingSE(se, pse *SchedEntity) (*SchedEntity, *SchedEntity) {
	for se.depth > pse.depth {
		se = se.parent
	}
	for pse.depth > se.depth {
		pse = pse.parent
	}
	for sameGroup(se, pse) == nil {
		se, pse = se.parent, pse.parent
	}
	return se, pse
}

// checkPreemptWakeup is fair.c: check_preempt_wakeup() (v6.6 EEVDF and
// the v6.5 CFS version), with Chen Yu's check_preempt_count and
// need_preempt_count where his schedstat patch puts them (the seed thread,
// "sched/eevdf: Curb wakeup-preemption"): a check on entry, before any
// early return (need_resched already set included), a preemption at the
// preempt label.
func (rq *RQ) checkPreemptWakeup(p *Task, wakeFlags int) {
	curr := rq.curr
	se, pse := &curr.se, &p.se
	rq.Stats.CheckPreemptCount++
	if se == pse {
		return
	}
	// We can come here with TIF_NEED_RESCHED already set.
	if rq.needResched {
		return
	}
	if !rq.feat.Has(WAKEUP_PREEMPTION) {
		return
	}
	se, pse = findMatchingSE(se, pse)
	cfs := se.cfsRq
	rq.updateCurr(cfs)
	preempt := false
	if rq.eevdf() {
		// v6.12: "If @p has a shorter slice than current and @p is
		// eligible, override current's slice protection in order to
		// allow preemption."
		if rq.doPreemptShort(cfs, pse, se) && se.Vlag == int64(se.Deadline) {
			se.Vlag = int64(se.Deadline) + 1
		}
		// XXX pick_eevdf(cfs_rq) != se ?
		preempt = seOf(cfs.q.PickEEVDF(rq.feat.Has(RUN_TO_PARITY))) == pse
		if preempt && rq.feat.Has(WAKEUP_DEADLINE) {
			// PeterZ's experiment: only if the wakee's deadline is
			// earlier than curr's.
			preempt = int64(pse.Deadline-se.Deadline) < 0
		}
	} else {
		preempt = rq.wakeupPreemptEntity(se, pse) == 1
	}
	if !preempt {
		return
	}
	rq.Stats.NeedPreemptCount++
	curr.Stats.NrPreempted++
	if !rq.eevdf() {
		// Bias pick_next to pick the sched entity that is triggering
		// this preemption (CFS).
		rq.setNextBuddy(pse)
	}
	rq.reschedCurr()
	if !rq.eevdf() && se.OnRQ {
		// LAST_BUDDY (on in the CFS kernels): try to return the CPU to
		// the preempted task, when the queue is long enough to scale.
		scale := uint64(curr.se.cfsRq.q.NrRunning) >= rq.tun.NrLatency
		if scale && se.isTask() {
			rq.setLastBuddy(se)
		}
	}
}
