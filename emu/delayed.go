package emu

// v6.12's delayed dequeue (DELAY_DEQUEUE, DELAY_ZERO; fair.c v6.12
// "sched/fair: Implement delayed dequeue" and its series): a task that
// goes to sleep with negative lag (not eligible) stays queued, marked
// se->sched_delayed, and keeps competing so that it cannot shed its
// negative lag by sleeping. It leaves when pick_next_entity() picks it
// (dequeue_entities(DEQUEUE_DELAYED), then __block_task()) or a wakeup
// finds it still queued (ttwu_runnable(): requeue_delayed_entity(), no
// select_task_rq()). While delayed it counts in rq->nr_running and
// h_nr_running, as select_task_rq_fair() and the load balancer see them,
// and in h_nr_delayed, which the PELT runnable sums subtract (6.12.y,
// "sched/eevdf: More PELT vs DELAY_DEQUEUE"). Simplified: only task
// entities are delayed (v6.12 delays a group entity left empty and
// ineligible too), and the load balancer does not move a delayed task
// (can_migrate_task() in v6.12 does, still delayed).

// delayEntity is dequeue_entity()'s DELAY_DEQUEUE branch (fair.c v6.12):
// a sleep (not DEQUEUE_SPECIAL) of an ineligible entity only updates its
// load and marks it delayed; it reports whether it did.
func (rq *RQ) delayEntity(cfs *CfsRq, se *SchedEntity, flags int) bool {
	if !rq.feat.Has(DELAY_DEQUEUE) || flags&dequeueDelayed != 0 || flags&dequeueSleep == 0 || flags&dequeueSpecial != 0 {
		return false
	}
	if !se.isTask() || cfs.q.Eligible(&se.Entity) {
		return false
	}
	cfs.clearBuddies(se)
	rq.updateLoadAvg(cfs, se, 0)
	rq.setDelayed(se)
	return true
}

// setDelayed is fair.c: set_delayed() (6.12.y): h_nr_delayed++ at every
// level above a task's entity.
func (rq *RQ) setDelayed(se *SchedEntity) {
	se.SchedDelayed = true
	for s := se; s != nil; s = s.parent {
		s.cfsRq.hNrDelayed++
	}
}

// clearDelayed is fair.c: clear_delayed() (6.12.y).
func (rq *RQ) clearDelayed(se *SchedEntity) {
	se.SchedDelayed = false
	for s := se; s != nil; s = s.parent {
		s.cfsRq.hNrDelayed--
	}
}

// finishDelayedDequeueEntity is fair.c: finish_delayed_dequeue_entity()
// (6.12.y; v6.12's pick_next_entity() did the same after the dequeue):
// DELAY_ZERO drops the positive lag the entity gathered while delayed.
func (rq *RQ) finishDelayedDequeueEntity(se *SchedEntity) {
	rq.clearDelayed(se)
	if rq.feat.Has(DELAY_ZERO) && se.Vlag > 0 {
		se.Vlag = 0
	}
}

// requeueDelayedEntity is fair.c: requeue_delayed_entity() (v6.12), for a
// wakeup that finds the task still queued (enqueue_task_fair() with
// ENQUEUE_DELAYED): with DELAY_ZERO an entity whose lag turned positive
// is placed again at zero lag; it stays where it is otherwise.
func (rq *RQ) requeueDelayedEntity(se *SchedEntity) {
	cfs := se.cfsRq
	if rq.feat.Has(DELAY_ZERO) {
		cfs.q.UpdateEntityLag(&se.Entity)
		if se.Vlag > 0 {
			cfs.q.NrRunning--
			if se != cfs.curr {
				cfs.q.Dequeue(&se.Entity)
			}
			se.Vlag = 0
			rq.placeEntity(cfs, se, 0)
			if se != cfs.curr {
				cfs.q.Enqueue(&se.Entity)
			}
			cfs.q.NrRunning++
		}
	}
	rq.updateLoadAvg(cfs, se, 0)
	rq.clearDelayed(se)
}

// dequeueDelayedOnPick is pick_next_entity()'s delayed branch (fair.c
// v6.12): "dequeue_entities(rq, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED)" and
// __block_task(): the sleep the task began when it was delayed is
// complete (its owner republishes it: no longer on the runqueue).
func (rq *RQ) dequeueDelayedOnPick(se *SchedEntity) {
	rq.dequeueEntities(se, dequeueSleep|dequeueDelayed)
	rq.Stats.DelayedDequeues++
	rq.markDirty(se.task)
}

// pickSimpleDelayed is pick_next_task_fair()'s simple path under
// DELAY_DEQUEUE: pick_task_fair() walks down with its "goto again" when a
// pick dequeued a delayed entity, then put_prev_set_next_task() sets the
// path (v6.12 picks before it sets).
func (rq *RQ) pickSimpleDelayed() *Task {
	var se *SchedEntity
	for cfs := rq.cfs; cfs != nil; {
		if se = rq.pickNextEntity(cfs, nil); se == nil {
			if cfs = rq.cfs; cfs.hNrRunning == 0 {
				return nil
			}
			continue
		}
		cfs = se.myQ
	}
	var path []*SchedEntity
	for s := se; s != nil; s = s.parent {
		path = append(path, s)
	}
	for i := len(path) - 1; i >= 0; i-- {
		rq.setNextEntity(path[i].cfsRq, path[i])
	}
	rq.cfsTasks.moveFront(se.task)
	return se.task
}
