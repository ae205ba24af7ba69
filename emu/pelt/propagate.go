package pelt

// Propagation mirrors a cfs_rq's pending hierarchy update: cfs_rq->propagate
// and cfs_rq->prop_runnable_sum. When an entity is attached to, detached
// from or removed from a group runqueue, the change must be carried up to
// the group's entity on the parent runqueue at the group entity's next
// update_load_avg().
type Propagation struct {
	Pending     bool  // propagate
	RunnableSum int64 // prop_runnable_sum: unweighted load_sum to add (or remove, < 0)
}

// Add records a change of runnableSum (an unweighted load_sum) to carry up.
//
// fair.c: add_tg_cfs_propagate().
func (p *Propagation) Add(runnableSum int64) {
	p.Pending = true
	p.RunnableSum += runnableSum
}

// PropagateEntity carries a group runqueue's pending change up to its group
// entity se and the parent runqueue cfsrq, and reports whether it did
// anything (which counts as "decayed" in update_load_avg()). It is a no-op
// for tasks: call it for group entities only.
//
//   - cfsrq, prop: the parent runqueue (cfs_rq_of(se)) and its Propagation;
//   - se, seWeightDown: the group entity and se_weight();
//   - grq, gprop, grqWeightDown: the group's own runqueue (se->my_q), its
//     Propagation and scale_load_down(grq->load.weight).
//
// The pending sum moves on to prop, then util and runnable are copied over
// from grq (UpdateTgCfsUtil, UpdateTgCfsRunnable) and load is re-estimated
// (UpdateTgCfsLoad).
//
// fair.c: propagate_entity_load_avg().
func PropagateEntity(cfsrq *Avg, prop *Propagation, se *Avg, seWeightDown uint64,
	grq *Avg, gprop *Propagation, grqWeightDown uint64) bool {
	if !gprop.Pending {
		return false
	}
	gprop.Pending = false

	prop.Add(gprop.RunnableSum)

	UpdateTgCfsUtil(cfsrq, se, grq)
	UpdateTgCfsRunnable(cfsrq, se, grq)
	UpdateTgCfsLoad(cfsrq, se, seWeightDown, grq, gprop, grqWeightDown)
	return true
}

// UpdateTgCfsUtil sets a group entity's util_avg to its group runqueue's
// (they stand for the same running time), rebuilds its util_sum with the
// parent's divider, and applies the difference to the parent cfsrq.
//
// fair.c: update_tg_cfs_util().
func UpdateTgCfsUtil(cfsrq, se, grq *Avg) {
	deltaAvg := int64(grq.UtilAvg - se.UtilAvg)
	if deltaAvg == 0 {
		return
	}
	// The parent's period_contrib is the group entity's too.
	divider := uint64(Divider(cfsrq))

	se.UtilAvg = grq.UtilAvg
	newSum := uint32(se.UtilAvg * divider)
	deltaSum := int64(newSum) - int64(se.UtilSum)
	se.UtilSum = newSum

	AddPositive(&cfsrq.UtilAvg, deltaAvg)
	AddPositive(&cfsrq.UtilSum, deltaSum)
	cfsrq.UtilSum = floorSum(cfsrq.UtilSum, cfsrq.UtilAvg)
}

// UpdateTgCfsRunnable is UpdateTgCfsUtil for runnable_avg/runnable_sum.
//
// fair.c: update_tg_cfs_runnable().
func UpdateTgCfsRunnable(cfsrq, se, grq *Avg) {
	deltaAvg := int64(grq.RunnableAvg - se.RunnableAvg)
	if deltaAvg == 0 {
		return
	}
	divider := uint64(Divider(cfsrq))

	se.RunnableAvg = grq.RunnableAvg
	newSum := uint32(se.RunnableAvg * divider) // u32 new_sum in the kernel
	deltaSum := int64(newSum) - int64(se.RunnableSum)
	se.RunnableSum = uint64(newSum)

	AddPositive(&cfsrq.RunnableAvg, deltaAvg)
	AddPositive(&cfsrq.RunnableSum, deltaSum)
	cfsrq.RunnableSum = floorSum(cfsrq.RunnableSum, cfsrq.RunnableAvg)
}

// UpdateTgCfsLoad re-estimates a group entity's unweighted load_sum from
// the group runqueue's pending prop_runnable_sum (which it consumes) and
// applies the change of load_avg and weighted load_sum to the parent cfsrq.
//
// Load cannot be copied like util: the group runqueue's load_avg keeps
// blocked load at historical weights, and runnable time does not add up
// across tasks. So an addition assumes minimal overlap (add, clip at the
// divider); a removal assumes all tasks equally runnable
// (grq load_sum / grq weight, without inflating the entity); and the result
// is never below the entity's running time (util_sum >> 10).
//
// fair.c: update_tg_cfs_load().
func UpdateTgCfsLoad(cfsrq, se *Avg, seWeightDown uint64, grq *Avg, gprop *Propagation, grqWeightDown uint64) {
	runnableSum := gprop.RunnableSum
	if runnableSum == 0 {
		return
	}
	gprop.RunnableSum = 0

	divider := uint64(Divider(cfsrq))

	if runnableSum >= 0 {
		runnableSum += int64(se.LoadSum)
		runnableSum = min(runnableSum, int64(divider))
	} else {
		var loadSum uint64
		if grqWeightDown != 0 {
			loadSum = grq.LoadSum / grqWeightDown
		}
		runnableSum = int64(min(se.LoadSum, loadSum))
	}

	runningSum := int64(se.UtilSum >> SchedCapacityShift)
	runnableSum = max(runnableSum, runningSum)

	loadSum := seWeightDown * uint64(runnableSum)
	loadAvg := loadSum / divider

	deltaAvg := int64(loadAvg - se.LoadAvg)
	if deltaAvg == 0 {
		return
	}
	deltaSum := int64(loadSum) - int64(seWeightDown*se.LoadSum)

	se.LoadSum = uint64(runnableSum)
	se.LoadAvg = loadAvg
	AddPositive(&cfsrq.LoadAvg, deltaAvg)
	AddPositive(&cfsrq.LoadSum, deltaSum)
	cfsrq.LoadSum = floorSum(cfsrq.LoadSum, cfsrq.LoadAvg)
}
