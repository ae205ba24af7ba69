package emu

import "github.com/rqemu/rqemu/emu/eevdf"

// updateCurrResched is the end of fair.c: update_curr() from v6.12
// (85e511df3c moved the reschedule out of update_deadline()):
//
//	if (cfs_rq->nr_running == 1) return;
//	if (resched || did_preempt_short(cfs_rq, curr)) { resched_curr(); clear_buddies(); }
//
// v6.12-rc1 tested rq->nr_running (RESCHED_RQ_NR_RUNNING); the fix
// (1c3386188ad9 / d4ac164bde) went back to cfs_rq->nr_running. The model
// has only the fair class, so the two differ where a task group's cfs_rq
// holds one entity while the CPU runs other tasks beside it.
func (rq *RQ) updateCurrResched(cfs *CfsRq, curr *SchedEntity) {
	resched := cfs.q.UpdateDeadline(&curr.Entity)
	cfs.q.UpdateMinVruntime()
	nr := cfs.q.NrRunning
	if rq.feat.Has(RESCHED_RQ_NR_RUNNING) {
		nr = rq.nrRunning
	}
	if nr == 1 {
		return
	}
	if resched || rq.didPreemptShort(cfs, curr) {
		rq.reschedCurr()
		cfs.clearBuddies(curr)
	}
}

// didPreemptShort is fair.c: did_preempt_short() (v6.12): curr's slice
// protection was cancelled (vlag no longer its deadline) and it is no
// longer eligible.
func (rq *RQ) didPreemptShort(cfs *CfsRq, curr *SchedEntity) bool {
	if !rq.feat.Has(PREEMPT_SHORT) {
		return false
	}
	if curr.Vlag == int64(curr.Deadline) {
		return false
	}
	return !cfs.q.Eligible(&curr.Entity)
}

// doPreemptShort is fair.c: do_preempt_short() (v6.12): the wakee pse has
// a shorter slice than curr se, is eligible, and has the earlier deadline
// (entity_before() orders by deadline from v6.8) or curr is not eligible.
func (rq *RQ) doPreemptShort(cfs *CfsRq, pse, se *SchedEntity) bool {
	if !rq.feat.Has(PREEMPT_SHORT) {
		return false
	}
	if pse.Slice >= se.Slice {
		return false
	}
	if !cfs.q.Eligible(&pse.Entity) {
		return false
	}
	if eevdf.DeadlineBefore(&pse.Entity, &se.Entity) {
		return true
	}
	return !cfs.q.Eligible(&se.Entity)
}
