package eevdf

// EnqueueEntity is the timeline part of fair.c: enqueue_entity() (v6.6):
// place se (PlaceEntity with the given features), account it
// (account_entity_enqueue()'s nr_running++), insert it unless it is Curr,
// and mark it on_rq. The caller runs update_curr() first (for se == Curr
// the kernel places before update_curr(); the difference is PELT-only)
// and does the PELT, group and stats work.
func (q *Queue) EnqueueEntity(se *Entity, placeLag, placeDeadlineInitial, initial bool) {
	if se.OnRQ {
		panic("eevdf: EnqueueEntity of an on_rq entity: " + se.String())
	}
	q.PlaceEntity(se, placeLag, placeDeadlineInitial, initial)
	q.NrRunning++
	if se != q.Curr {
		q.Enqueue(se)
	}
	se.OnRQ = true
}

// DequeueEntity is the timeline part of fair.c: dequeue_entity() (v6.6):
// save the clamped lag (update_entity_lag(), on every dequeue in v6.6),
// remove se from the tree unless it is Curr, clear on_rq, unaccount it,
// and advance min_vruntime unless updateMin is false, which is the
// kernel's DEQUEUE_SAVE-without-DEQUEUE_MOVE case (the entity is put back
// at once and must not be penalised by a min_vruntime that moved past it).
// The caller runs update_curr() first.
func (q *Queue) DequeueEntity(se *Entity, updateMin bool) {
	if !se.OnRQ {
		panic("eevdf: DequeueEntity of an entity not on_rq: " + se.String())
	}
	q.UpdateEntityLag(se)
	if se != q.Curr {
		q.Dequeue(se)
	}
	se.OnRQ = false
	q.NrRunning--
	if updateMin {
		q.UpdateMinVruntime()
	}
}

// SetCurr is the timeline part of fair.c: set_next_entity(): the picked
// entity leaves the tree ("'current' is not kept within the tree") and its
// deadline is stashed in Vlag, the RUN_TO_PARITY marker PickEEVDF tests.
func (q *Queue) SetCurr(se *Entity) {
	if q.Curr != nil && q.Curr != se {
		panic("eevdf: SetCurr while another entity is curr: " + q.Curr.String())
	}
	if se.OnRQ {
		q.Dequeue(se)
		// HACK, stash a copy of deadline at the point of pick in vlag,
		// which isn't used until dequeue.
		se.Vlag = int64(se.Deadline)
	}
	q.Curr = se
}

// PutCurr is the timeline part of fair.c: put_prev_entity(): a still
// runnable prev goes back into the tree and the queue has no Curr. The
// caller runs update_curr() first (as put_prev_entity() does for an
// on_rq prev).
func (q *Queue) PutCurr(se *Entity) {
	if q.Curr != se {
		panic("eevdf: PutCurr of an entity that is not curr: " + se.String())
	}
	if se.OnRQ {
		q.Enqueue(se)
	}
	q.Curr = nil
}
