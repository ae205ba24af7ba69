package pelt

// UpdateBlockedSE ages a sleeping (dequeued) entity to now: its sums only
// decay. weight is the entity's scale_load_down() weight, used to recompute
// LoadAvg. It reports whether the averages were recomputed.
//
// The kernel calls it from the waker's CPU (migrate_task_rq_fair() →
// remove_entity_load_avg() → sync_entity_load_avg()) with now set to the old
// cfs_rq's last_update_time, and from set_task_rq_fair().
//
// pelt.c: __update_load_avg_blocked_se().
func UpdateBlockedSE(now uint64, sa *Avg, weight uint64) bool {
	if !UpdateLoadSum(now, sa, 0, 0, 0) {
		return false
	}
	UpdateLoadAvg(sa, weight)
	return true
}

// UpdateSE ages a sched_entity to now and reports whether its averages were
// recomputed (a period boundary was crossed).
//
// The inputs are what the kernel reads from the entity and its cfs_rq:
//   - onRQ: se->on_rq, the load_sum input (0/1);
//   - runnable: se_runnable(): onRQ as 0/1 for a task; for a group entity
//     se->runnable_weight, its group runqueue's h_nr_runnable;
//   - running: cfs_rq->curr == se;
//   - weight: se_weight(), i.e. scale_load_down(se->load.weight).
//
// When the averages change, the UtilAvgUnchanged flag in UtilEst is
// cleared (cfs_se_util_change(); the kernel tests sched_feat(UTIL_EST)
// first, which changes nothing here: with the feature off no sample is
// taken and the flag is never read).
//
// pelt.c: __update_load_avg_se().
func UpdateSE(now uint64, sa *Avg, onRQ bool, runnable uint64, running bool, weight uint64) bool {
	if !UpdateLoadSum(now, sa, b2u(onRQ), runnable, b2u(running)) {
		return false
	}
	UpdateLoadAvg(sa, weight)
	cfsSEUtilChange(sa)
	return true
}

// UpdateCfsRq ages a cfs_rq's own signal to now and reports whether its
// averages were recomputed.
//
//   - loadWeightDown: scale_load_down(cfs_rq->load.weight), the summed
//     weight of the queued entities (so load_sum is already weighted and
//     load_avg uses a multiplier of 1);
//   - hNrRunnable: cfs_rq->h_nr_runnable (h_nr_queued − h_nr_delayed);
//   - hasCurr: cfs_rq->curr != NULL.
//
// pelt.c: __update_load_avg_cfs_rq().
func UpdateCfsRq(now uint64, sa *Avg, loadWeightDown, hNrRunnable uint64, hasCurr bool) bool {
	if !UpdateLoadSum(now, sa, loadWeightDown, hNrRunnable, b2u(hasCurr)) {
		return false
	}
	UpdateLoadAvg(sa, 1)
	return true
}

// UpdateClassRq ages a per-rq signal of a class without entities (rt or
// dl): load, runnable and running are all "this class is running".
//
// pelt.c: update_rt_rq_load_avg(), update_dl_rq_load_avg().
func UpdateClassRq(now uint64, sa *Avg, running bool) bool {
	r := b2u(running)
	if !UpdateLoadSum(now, sa, r, r, r) {
		return false
	}
	UpdateLoadAvg(sa, 1)
	return true
}

// cfsSEUtilChange clears UTIL_AVG_UNCHANGED once util_avg has moved.
//
// pelt.h: cfs_se_util_change().
func cfsSEUtilChange(sa *Avg) {
	if sa.UtilEst.Enqueued&UtilAvgUnchanged == 0 {
		return
	}
	sa.UtilEst.Enqueued &^= UtilAvgUnchanged
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
