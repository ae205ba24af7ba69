package eevdf

// Reweight is the timeline part of fair.c: reweight_entity() with
// reweight_eevdf(), as in v6.6.y stable (eab03c23c2a1 "sched/eevdf: Fix
// vruntime adjustment on reweight", with the follow-ups that sample V
// before se leaves the sums and update min_vruntime for curr too). It sets
// se's scaled weight to newWeight. For a running entity the caller has
// already run update_curr() (see UpdateCurr); PELT and cfs_rq->load stay
// with the caller.
//
// On the queue (tree or Curr) the lag w·(V − v) and V itself are kept:
//
//	v' = V − (V − v)·w/w'      d' = V + (d − V)·w/w'
//
// the deadline staying the same real-time distance from V at the new
// slope. A queued entity leaves and re-enters the tree around
// the change, because its key moves. Off the queue only the saved virtual
// lag is rescaled, vlag' = vlag·w/w', so that the real lag survives.
//
// Curr's RUN_TO_PARITY marker goes stale when its deadline moves, exactly
// as in the kernel.
func (q *Queue) Reweight(se *Entity, newWeight uint64) {
	if newWeight == 0 {
		panic("eevdf: Reweight to zero weight: " + se.String())
	}
	if !se.OnRQ {
		// se->vlag = div_s64(se->vlag * se->load.weight, weight)
		se.Vlag = se.Vlag * int64(se.Load.Weight) / int64(newWeight)
		se.Load.Set(newWeight)
		return
	}

	isCurr := se == q.Curr
	avruntime := q.AvgVruntimeV()
	if !isCurr {
		q.Dequeue(se)
	}
	reweightEEVDF(se, avruntime, newWeight)
	se.Load.Set(newWeight)
	if !isCurr {
		q.Enqueue(se)
	}
	// The vruntime moved; min_vruntime may follow. Done last because the
	// arithmetic above needs a stable v0.
	q.UpdateMinVruntime()
}

// ReweightTask mirrors core/fair.c: reweight_task(): Reweight to the nice
// level's table weight, then install the table inverse, as the kernel does
// for tasks.
func (q *Queue) ReweightTask(se *Entity, nice int) {
	q.Reweight(se, NiceToWeight(nice))
	se.Load.InvWeight = PrioToWmult[prioIndex(nice)]
}

// reweightEEVDF mirrors fair.c: reweight_eevdf(se, avruntime, weight).
// The weights are the scaled ones, as in the kernel.
func reweightEEVDF(se *Entity, avruntime, weight uint64) {
	oldWeight := int64(se.Load.Weight)

	// VRUNTIME: keep lag_i = w_i·(V − v_i), which also leaves V unchanged.
	if avruntime != se.Vruntime {
		vlag := int64(avruntime - se.Vruntime)
		vlag = vlag * oldWeight / int64(weight)
		se.Vruntime = avruntime - uint64(vlag)
	}

	// DEADLINE: the virtual slope changes with w, so rescale the relative
	// virtual deadline around V.
	vslice := int64(se.Deadline - avruntime)
	vslice = vslice * oldWeight / int64(weight)
	se.Deadline = avruntime + uint64(vslice)
}
