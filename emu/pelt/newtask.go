package pelt

// InitEntityRunnableAverage resets a new entity's PELT state. A task starts
// with load_avg at its full weight (weightDown = scale_load_down(weight)),
// so it looks heavy until its own history builds up; a group entity starts
// at zero, since nothing is attached to its group yet. Everything else is
// zero, LastUpdateTime included, so the first enqueue attaches it.
//
// fair.c: init_entity_runnable_average().
func InitEntityRunnableAverage(sa *Avg, isTask bool, weightDown uint64) {
	*sa = Avg{}
	if isTask {
		sa.LoadAvg = weightDown
	}
}

// PostInitEntityUtilAvg gives a new fair task its first util_avg, on the
// CPU it will first run on, before it is attached there. With no history,
// util is extrapolated from the cfs_rq's:
//
//	util_avg = cfs_rq util_avg · se_weight / (cfs_rq load_avg + 1)
//
// and capped at half the capacity the cfs_rq leaves free,
// (cpuCapacity − cfs_rq util_avg) / 2, or set to the cap if the cfs_rq has
// no utilisation. Successive forks on an idle CPU of capacity 1024 thus get
// 512, 256, 128, … and the cfs_rq 512, 768, 896, …. runnable_avg starts
// equal to util_avg.
//
// cfsrq is the destination cfs_rq's signal, seWeightDown se_weight(), and
// cpuCapacity arch_scale_cpu_capacity() (1024 on a symmetric machine).
// The !fair branch (a task forked into another class gets only
// se->avg.last_update_time = cfs_rq_clock_pelt()) is the caller's.
//
// fair.c: post_init_entity_util_avg(), the fair-class part.
func PostInitEntityUtilAvg(sa, cfsrq *Avg, seWeightDown, cpuCapacity uint64) {
	capLeft := int64(cpuCapacity-cfsrq.UtilAvg) / 2

	if capLeft > 0 {
		if cfsrq.UtilAvg != 0 {
			sa.UtilAvg = cfsrq.UtilAvg * seWeightDown / (cfsrq.LoadAvg + 1)
			if sa.UtilAvg > uint64(capLeft) {
				sa.UtilAvg = uint64(capLeft)
			}
		} else {
			sa.UtilAvg = uint64(capLeft)
		}
	}
	sa.RunnableAvg = sa.UtilAvg
}
