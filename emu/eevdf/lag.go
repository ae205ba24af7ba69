package eevdf

// lagLimit is the clamp bound of update_entity_lag(): the virtual time of
// max(2·slice, TICK_NSEC) of service for se.
func (q *Queue) lagLimit(se *Entity) int64 {
	return int64(CalcDeltaFair(max(2*se.Slice, q.TickNsec), se))
}

// EntityLag is the virtual lag update_entity_lag() would store, without
// storing it:
//
//	vlag = clamp(V − v, −limit, +limit),  limit = calc_delta_fair(max(2·slice, TICK_NSEC))
//
// lag_i = w_i·(V − v_i) is the service owed to the entity; the kernel keeps
// only the virtual part V − v_i and bounds it because V moves as entities
// join and leave, which could otherwise inflate lag without limit.
func (q *Queue) EntityLag(se *Entity) int64 {
	lag := int64(q.AvgVruntimeV() - se.Vruntime)
	limit := q.lagLimit(se)
	return min(max(lag, -limit), limit)
}

// UpdateEntityLag mirrors fair.c: update_entity_lag(): save se's clamped
// virtual lag in Vlag. Call it while se is still counted in V (on_rq), as
// dequeue_entity() does.
func (q *Queue) UpdateEntityLag(se *Entity) {
	se.Vlag = q.EntityLag(se)
}

// PlaceEntity mirrors fair.c: place_entity() (v6.6), the placement every
// enqueue does. Call it before se is accounted (NrRunning excludes se, and
// se is neither in the tree nor an on_rq Curr).
//
//   - The slice becomes BaseSlice and vslice = calc_delta_fair(slice).
//   - placeLag is sched_feat(PLACE_LAG): with other entities present, se
//     keeps its saved lag. Adding se with lag vl moves V to
//     V' = V − w·vl/(W + w), which would shrink the lag it gets; so the
//     lag is first inflated to vl·(W + w)/W, W being the current load
//     with Curr included, and then vruntime = V − vl'. Without it (or on
//     an empty queue) vruntime = V: zero lag.
//   - deadline = vruntime + vslice, with vslice halved when initial
//     (ENQUEUE_INITIAL, a new task) and placeDeadlineInitial
//     (sched_feat(PLACE_DEADLINE_INITIAL)): existing entities are on
//     average half way through their slice.
func (q *Queue) PlaceEntity(se *Entity, placeLag, placeDeadlineInitial, initial bool) {
	v := q.AvgVruntimeV()
	var lag int64

	// v6.12: "if (!se->custom_slice) se->slice = sysctl_sched_base_slice".
	if !se.CustomSlice {
		se.Slice = q.BaseSlice
	}
	vslice := CalcDeltaFair(se.Slice, se)

	if placeLag && q.NrRunning > 0 {
		lag = se.Vlag
		// W: the load se joins, Curr included.
		_, load := q.currSums()
		lag *= load + int64(ScaleLoadDown(se.Load.Weight))
		if load == 0 { // WARN_ON_ONCE(!load)
			load = 1
		}
		lag /= load // div_s64(): truncates toward zero
	}

	se.Vruntime = v - uint64(lag)

	// v6.12 PLACE_REL_DEADLINE: a deadline saved relative by a dequeue
	// that was not a sleep (the caller sets RelDeadline only under it).
	if se.RelDeadline {
		se.Deadline += se.Vruntime
		se.RelDeadline = false
		return
	}

	if placeDeadlineInitial && initial {
		vslice /= 2
	}
	// EEVDF: vd_i = ve_i + r_i/w_i
	se.Deadline = se.Vruntime + vslice
}

// UpdateDeadline mirrors fair.c: update_deadline() (v6.6), called from
// update_curr() after curr's vruntime advanced. Once the entity has
// consumed its request (vruntime ≥ deadline) it gets a new one: slice =
// BaseSlice, deadline = vruntime + calc_delta_fair(slice). The new
// deadline also cancels RUN_TO_PARITY protection, since Vlag no longer
// equals it.
//
// It reports whether the deadline was renewed. The kernel then calls
// resched_curr() and clear_buddies() if NrRunning > 1; that decision is
// the caller's.
func (q *Queue) UpdateDeadline(se *Entity) (renewed bool) {
	if int64(se.Vruntime-se.Deadline) < 0 {
		return false
	}
	if !se.CustomSlice { // v6.12: a custom slice is kept
		se.Slice = q.BaseSlice
	}
	se.Deadline = se.Vruntime + CalcDeltaFair(se.Slice, se)
	return true
}

// UpdateCurr is the timeline part of fair.c: update_curr(): Curr ran for
// deltaExec ns, so its vruntime advances by calc_delta_fair(deltaExec),
// its deadline may renew (UpdateDeadline) and min_vruntime follows
// (UpdateMinVruntime). Clock reading, exec_start, sum_exec_runtime, stats
// and bandwidth accounting stay with the caller. It reports whether the
// deadline was renewed; a no-op without Curr.
func (q *Queue) UpdateCurr(deltaExec uint64) (renewed bool) {
	c := q.Curr
	if c == nil {
		return false
	}
	c.Vruntime += CalcDeltaFair(deltaExec, c)
	renewed = q.UpdateDeadline(c)
	q.UpdateMinVruntime()
	return renewed
}
