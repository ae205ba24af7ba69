package pelt

// SubPositive subtracts v from *p, clamping at 0 instead of wrapping.
//
// fair.c: sub_positive(). v has the type of *p, as the macro converts it.
func SubPositive[T ~uint32 | ~uint64](p *T, v T) {
	res := *p - v
	if res > *p {
		res = 0
	}
	*p = res
}

// AddPositive adds the signed v to *p, clamping at 0 when a negative v would
// wrap. The addition itself wraps at the width of *p, as in C.
//
// fair.c: add_positive().
func AddPositive[T ~uint32 | ~uint64](p *T, v int64) {
	res := *p + T(v)
	if v < 0 && res > *p {
		res = 0
	}
	*p = res
}

// floorSum returns max_t(u32, sum, avg·PELT_MIN_DIVIDER): after removing an
// entity's contribution, a runqueue's sum must stay at least the smallest sum
// its avg could have come from, or rounding could leave sum = 0 with avg ≠ 0.
//
// The kernel's max_t(u32, …) casts both operands to 32 bits, so a sum of
// 2^32 or more loses its high bits. That is kept here on purpose (v6.12
// behaviour); it bites a cfs_rq whose weighted load_sum exceeds 2^32.
//
// fair.c: the "See update_cfs_rq_load_avg()" floors.
func floorSum[T ~uint32 | ~uint64](sum T, avg uint64) T {
	return T(max(uint32(sum), uint32(avg*PeltMinDivider)))
}

// enqueueLoadAvg adds an entity's load to its cfs_rq.
//
// fair.c: enqueue_load_avg().
func enqueueLoadAvg(cfsrq, se *Avg, seWeightDown uint64) {
	cfsrq.LoadAvg += se.LoadAvg
	cfsrq.LoadSum += seWeightDown * se.LoadSum
}

// dequeueLoadAvg removes an entity's load from its cfs_rq, floored.
//
// fair.c: dequeue_load_avg().
func dequeueLoadAvg(cfsrq, se *Avg, seWeightDown uint64) {
	SubPositive(&cfsrq.LoadAvg, se.LoadAvg)
	SubPositive(&cfsrq.LoadSum, seWeightDown*se.LoadSum)
	cfsrq.LoadSum = floorSum(cfsrq.LoadSum, cfsrq.LoadAvg)
}

// Attach adds an entity to its cfs_rq's PELT signal, as on an enqueue after
// a migration or fork (se.LastUpdateTime == 0). The cfs_rq must have been
// aged to now first (UpdateCfsRqLoadAvg).
//
// The entity's window is aligned to the cfs_rq's (LastUpdateTime,
// PeriodContrib); its sums are then rebuilt from its averages and the new
// divider, which truncates them slightly but keeps avg = sum/divider; and
// averages and sums are added to the cfs_rq. seWeightDown is se_weight(),
// nonzero as ScaleLoadDown makes any real weight.
//
// The kernel then calls add_tg_cfs_propagate(cfs_rq, se->avg.load_sum):
// with group scheduling, the caller does prop.Add(int64(se.LoadSum)).
//
// fair.c: attach_entity_load_avg().
func Attach(cfsrq, se *Avg, seWeightDown uint64) {
	// The cfs_rq's period_contrib is the se's after alignment.
	divider := uint64(Divider(cfsrq))

	se.LastUpdateTime = cfsrq.LastUpdateTime
	se.PeriodContrib = cfsrq.PeriodContrib

	se.UtilSum = uint32(se.UtilAvg * divider)
	se.RunnableSum = se.RunnableAvg * divider
	se.LoadSum = se.LoadAvg * divider
	if seWeightDown < se.LoadSum {
		se.LoadSum /= seWeightDown
	} else {
		se.LoadSum = 1
	}

	enqueueLoadAvg(cfsrq, se, seWeightDown)
	cfsrq.UtilAvg += se.UtilAvg
	cfsrq.UtilSum += se.UtilSum
	cfsrq.RunnableAvg += se.RunnableAvg
	cfsrq.RunnableSum += se.RunnableSum
}

// Detach removes an entity from its cfs_rq's PELT signal, as on a dequeue
// for a load-balance migration (DO_DETACH). Both must have been aged to now
// first. seWeightDown is se_weight(), needed to take the entity's weighted
// load_sum out of the cfs_rq's.
//
// Averages and sums are subtracted clamping at 0, then each sum is floored
// at avg·PELT_MIN_DIVIDER (floorSum). The kernel then calls
// add_tg_cfs_propagate(cfs_rq, -se->avg.load_sum): the caller does
// prop.Add(-int64(se.LoadSum)).
//
// fair.c: detach_entity_load_avg().
func Detach(cfsrq, se *Avg, seWeightDown uint64) {
	dequeueLoadAvg(cfsrq, se, seWeightDown)

	SubPositive(&cfsrq.UtilAvg, se.UtilAvg)
	SubPositive(&cfsrq.UtilSum, se.UtilSum)
	cfsrq.UtilSum = floorSum(cfsrq.UtilSum, cfsrq.UtilAvg)

	SubPositive(&cfsrq.RunnableAvg, se.RunnableAvg)
	SubPositive(&cfsrq.RunnableSum, se.RunnableSum)
	cfsrq.RunnableSum = floorSum(cfsrq.RunnableSum, cfsrq.RunnableAvg)
}

// Reweight is the PELT part of a weight change of an entity attached to
// cfsrq: its load leaves the cfs_rq at the old weight, its LoadAvg is
// recomputed from its unweighted LoadSum at the new weight, and it comes
// back. The caller updates load.weight (and, if queued, cfs_rq->load).
//
// fair.c: reweight_entity() (dequeue_load_avg, the load_avg recompute,
// enqueue_load_avg).
func Reweight(cfsrq, se *Avg, oldWeightDown, newWeightDown uint64) {
	dequeueLoadAvg(cfsrq, se, oldWeightDown)
	se.LoadAvg = newWeightDown * se.LoadSum / uint64(Divider(se))
	enqueueLoadAvg(cfsrq, se, newWeightDown)
}

// Removed mirrors cfs_rq->removed: the averages of entities that left this
// cfs_rq while asleep (wakeup migration), queued by another CPU under
// removed.lock and applied by the owner at its next update. The lock is the
// caller's.
type Removed struct {
	Nr          int    // removed.nr
	LoadAvg     uint64 // removed.load_avg
	UtilAvg     uint64 // removed.util_avg
	RunnableAvg uint64 // removed.runnable_avg
}

// Add queues a sleeping entity's averages for removal. The entity must
// first be synced to the cfs_rq's last_update_time (UpdateBlockedSE); the
// kernel then sets se->avg.last_update_time = 0 so that the new CPU
// attaches it.
//
// fair.c: remove_entity_load_avg() (the part under removed.lock).
func (r *Removed) Add(se *Avg) {
	r.Nr++
	r.UtilAvg += se.UtilAvg
	r.LoadAvg += se.LoadAvg
	r.RunnableAvg += se.RunnableAvg
}

// PropSum is the runnable_sum update_cfs_rq_load_avg() propagates to the
// parent after applying r: −(runnable_avg·divider) >> SCHED_CAPACITY_SHIFT,
// where divider is Divider(cfs_rq) (ApplyRemoved does not move it).
// runnable_avg is the unweighted removed load, so this estimates the
// removed unweighted load_sum.
func (r Removed) PropSum(divider uint32) int64 {
	return -int64(r.RunnableAvg*uint64(divider)) >> SchedCapacityShift
}

// ApplyRemoved subtracts the removed averages, and avg·divider from each
// sum, from cfsrq, with the same floors as Detach. It reports whether
// anything was removed (r.Nr != 0), which counts as "decayed" for the
// caller. Propagation, if any, is prop.Add(r.PropSum(Divider(cfsrq))).
//
// fair.c: update_cfs_rq_load_avg(), the removed.nr branch.
func ApplyRemoved(cfsrq *Avg, r Removed) (decayed bool) {
	if r.Nr == 0 {
		return false
	}
	divider := uint64(Divider(cfsrq))

	SubPositive(&cfsrq.LoadAvg, r.LoadAvg)
	SubPositive(&cfsrq.LoadSum, r.LoadAvg*divider)
	cfsrq.LoadSum = floorSum(cfsrq.LoadSum, cfsrq.LoadAvg)

	SubPositive(&cfsrq.UtilAvg, r.UtilAvg)
	SubPositive(&cfsrq.UtilSum, uint32(r.UtilAvg*divider))
	cfsrq.UtilSum = floorSum(cfsrq.UtilSum, cfsrq.UtilAvg)

	SubPositive(&cfsrq.RunnableAvg, r.RunnableAvg)
	SubPositive(&cfsrq.RunnableSum, r.RunnableAvg*divider)
	cfsrq.RunnableSum = floorSum(cfsrq.RunnableSum, cfsrq.RunnableAvg)
	return true
}

// UpdateCfsRqLoadAvg is the whole cfs_rq half of update_load_avg(): apply
// the removed load r (already swapped out of cfs_rq->removed by the
// caller), queue its propagation on prop (nil without group scheduling), and
// age the cfs_rq to now (UpdateCfsRq). It reports "decayed": load was
// removed or a period boundary was crossed, in which case the kernel calls
// update_tg_load_avg().
//
// fair.c: update_cfs_rq_load_avg().
func UpdateCfsRqLoadAvg(now uint64, sa *Avg, r Removed, prop *Propagation,
	loadWeightDown, hNrRunnable uint64, hasCurr bool) bool {
	decayed := ApplyRemoved(sa, r)
	if decayed && prop != nil {
		prop.Add(r.PropSum(Divider(sa)))
	}
	if UpdateCfsRq(now, sa, loadWeightDown, hNrRunnable, hasCurr) {
		decayed = true
	}
	return decayed
}
