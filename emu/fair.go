package emu

import (
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/hwmodel"
)

// This file is the fair class (kernel/sched/fair.c) for one runqueue:
// v6.6 EEVDF when the EEVDF feature is on, the v5.15/v6.5 CFS otherwise.
// Functions carry the kernel's names in Go style and say which function
// they mirror; where the two kernels differ the branch is on rq.feat.

func (rq *RQ) eevdf() bool { return rq.feat.Has(EEVDF) }

// updateCurr is fair.c: update_curr().
func (rq *RQ) updateCurr(cfs *CfsRq) {
	rq.cost(hwmodel.OpUpdateCurr)
	curr := cfs.curr
	if curr == nil {
		return
	}
	now := uint64(rq.clock)
	delta := int64(now - curr.ExecStart)
	if delta <= 0 {
		return
	}
	curr.ExecStart = now
	curr.SumExecRuntime += uint64(delta)
	curr.Vruntime += eevdf.CalcDeltaFair(uint64(delta), &curr.Entity)
	if curr.isTask() {
		rq.traceStatRuntime(curr.task, delta) // trace_sched_stat_runtime()
	}
	if rq.eevdf() && (rq.feat.Has(PREEMPT_SHORT) || rq.feat.Has(RESCHED_RQ_NR_RUNNING)) {
		rq.updateCurrResched(cfs, curr)
		return
	}
	if rq.eevdf() {
		// update_deadline()
		if cfs.q.UpdateDeadline(&curr.Entity) && cfs.q.NrRunning > 1 {
			rq.reschedCurr()
			cfs.clearBuddies(curr)
		}
	}
	cfs.q.UpdateMinVruntime()
}

// updateCurrFair is fair.c: update_curr_fair() for rq->curr.
func (rq *RQ) updateCurrFair() {
	if rq.curr != nil {
		rq.updateCurr(rq.curr.se.cfsRq)
	}
}

// accountEntityEnqueue / accountEntityDequeue are fair.c:
// account_entity_enqueue() / account_entity_dequeue().
func (rq *RQ) accountEntityEnqueue(cfs *CfsRq, se *SchedEntity) {
	cfs.load.Weight += se.Load.Weight
	cfs.load.InvWeight = 0
	if se.isTask() {
		rq.cfsTasks.pushFront(se.task)
	}
	cfs.q.NrRunning++
}

func (rq *RQ) accountEntityDequeue(cfs *CfsRq, se *SchedEntity) {
	cfs.load.Weight -= se.Load.Weight
	cfs.load.InvWeight = 0
	if se.isTask() {
		rq.cfsTasks.remove(se.task)
	}
	cfs.q.NrRunning--
}

// enqueueEntity is fair.c: enqueue_entity().
func (rq *RQ) enqueueEntity(cfs *CfsRq, se *SchedEntity, flags int) {
	curr := cfs.curr == se
	if rq.eevdf() {
		// If we're the current task, we must renormalise before
		// calling update_curr().
		if curr {
			rq.placeEntity(cfs, se, flags)
		}
		rq.updateCurr(cfs)
	} else {
		renorm := flags&enqueueWakeup == 0 || flags&enqueueMigrated != 0
		if renorm && curr {
			rq.renormalise(cfs, se)
		}
		rq.updateCurr(cfs)
		// Otherwise renormalise after, such that we're placed at the
		// current moment in time.
		if renorm && !curr {
			rq.renormalise(cfs, se)
		}
	}
	prev := rq.atTgSite(tgSiteEnqueue)
	rq.updateLoadAvg(cfs, se, updateTG|doAttach)
	rq.seUpdateRunnable(se)
	rq.updateCfsGroup(se)
	rq.tgSite = prev
	if rq.eevdf() {
		if !curr {
			rq.placeEntity(cfs, se, flags)
		}
		rq.accountEntityEnqueue(cfs, se)
	} else {
		rq.accountEntityEnqueue(cfs, se)
		if flags&enqueueWakeup != 0 {
			rq.placeEntityCFS(cfs, se, false)
		} else if se.migrated != 0 && rq.feat.Has(PLACE_MIGRATE) {
			rq.placeEntityMigrate(cfs, se)
		}
	}
	// (A migrated entity's exec_start = 0, "no longer consider this task
	// hot", is done in setTaskCPU as v5.15 did for every migration.)
	if !curr {
		se.waitStart = rq.clock
		cfs.q.Enqueue(&se.Entity)
	}
	se.OnRQ = true
}

// renormalise adds the queue's min_vruntime to a CFS entity carried
// relative (the v5.15/v6.5 migration protocol).
func (rq *RQ) renormalise(cfs *CfsRq, se *SchedEntity) {
	se.Vruntime += cfs.q.MinVruntime
	se.relative = false
}

// placeEntity is fair.c: place_entity() (v6.6): lag-based placement.
func (rq *RQ) placeEntity(cfs *CfsRq, se *SchedEntity, flags int) {
	cfs.q.PlaceEntity(&se.Entity, rq.feat.Has(PLACE_LAG), rq.feat.Has(PLACE_DEADLINE_INITIAL), flags&enqueueInitial != 0)
}

// placeEntityCFS is fair.c: place_entity() (v6.5 and before).
func (rq *RQ) placeEntityCFS(cfs *CfsRq, se *SchedEntity, initial bool) {
	vruntime := cfs.q.MinVruntime
	// The 'current' period is already promised to the current tasks.
	if initial && rq.feat.Has(START_DEBIT) {
		vruntime += rq.schedVslice(cfs, se)
	}
	// sleeps up to a single latency don't count.
	if !initial {
		thresh := rq.tun.Latency
		if rq.feat.Has(GENTLE_FAIR_SLEEPERS) {
			thresh >>= 1
		}
		vruntime -= thresh
	}
	// ensure we never gain time by being placed backwards (a long
	// sleeper, > 2^63/1024 ns, is placed at vruntime: entity_is_long_sleeper()).
	if int64(rq.clock)-int64(se.ExecStart) > (1<<63-1)/1024 && se.ExecStart != 0 {
		se.Vruntime = vruntime
	} else if int64(vruntime-se.Vruntime) > 0 {
		se.Vruntime = vruntime
	}
}

// placeEntityMigrate is PLACE_MIGRATE's place_entity_migrate(): a task
// migrated to a shorter queue goes first, to a longer one last.
func (rq *RQ) placeEntityMigrate(cfs *CfsRq, se *SchedEntity) {
	if cfs.q.NrRunning < se.migrated {
		se.Vruntime = cfs.q.MinVruntime
		return
	}
	se.Vruntime = cfs.q.MinVruntime + rq.schedVslice(cfs, se)
}

// schedPeriod is fair.c: __sched_period().
func (rq *RQ) schedPeriod(nr uint64) uint64 {
	if nr > rq.tun.NrLatency {
		return nr * rq.tun.MinGranularity
	}
	return rq.tun.Latency
}

// schedSlice is fair.c: sched_slice() (v6.5, ALT_PERIOD and BASE_SLICE
// on): the wall-time slice of se in a period sized by the CPU's
// h_nr_running, walked down the hierarchy by weight.
func (rq *RQ) schedSlice(cfs *CfsRq, se *SchedEntity) uint64 {
	nr := uint64(rq.cfs.hNrRunning)
	if !se.OnRQ {
		nr++
	}
	slice := rq.schedPeriod(nr)
	for s := se; s != nil; s = s.parent {
		q := s.cfsRq
		lw := q.load
		if !s.OnRQ {
			lw.Weight += s.Load.Weight
			lw.InvWeight = 0
		}
		if lw.Weight == 0 {
			continue
		}
		slice = eevdf.CalcDelta(slice, s.Load.Weight, &lw)
	}
	return max(slice, rq.tun.MinGranularity)
}

// schedVslice is fair.c: sched_vslice().
func (rq *RQ) schedVslice(cfs *CfsRq, se *SchedEntity) uint64 {
	return eevdf.CalcDeltaFair(rq.schedSlice(cfs, se), &se.Entity)
}

// dequeueEntity is fair.c: dequeue_entity(); false when v6.12's
// DELAY_DEQUEUE keeps se queued (delayEntity).
func (rq *RQ) dequeueEntity(cfs *CfsRq, se *SchedEntity, flags int) bool {
	action := updateTG
	if se.isTask() && se.task.state == TaskMigrating {
		action |= doDetach
	}
	rq.updateCurr(cfs)
	if rq.delayEntity(cfs, se, flags) {
		return false
	}
	prev := rq.atTgSite(tgSiteDequeue)
	defer func() { rq.tgSite = prev }()
	rq.updateLoadAvg(cfs, se, action)
	rq.seUpdateRunnable(se)
	cfs.clearBuddies(se)
	if rq.eevdf() {
		cfs.q.UpdateEntityLag(&se.Entity)
		if rq.feat.Has(PLACE_REL_DEADLINE) && flags&dequeueSleep == 0 {
			// v6.12: "se->deadline -= se->vruntime; se->rel_deadline = 1".
			se.Deadline -= se.Vruntime
			se.RelDeadline = true
		}
	}
	if se != cfs.curr {
		rq.updateStatsWaitEnd(se)
		cfs.q.Dequeue(&se.Entity)
	}
	se.OnRQ = false
	rq.accountEntityDequeue(cfs, se)
	if !rq.eevdf() && flags&dequeueSleep == 0 {
		// Normalize after update_curr(): carried relative to
		// min_vruntime to the next queue (v6.5 and before).
		se.Vruntime -= cfs.q.MinVruntime
		se.relative = true
	}
	rq.updateCfsGroup(se)
	if flags&(dequeueSave|dequeueMove) != dequeueSave {
		cfs.q.UpdateMinVruntime()
	}
	if flags&dequeueDelayed != 0 {
		rq.finishDelayedDequeueEntity(se)
	}
	return true
}

// enqueueTaskFair is fair.c: enqueue_task_fair().
func (rq *RQ) enqueueTaskFair(p *Task, flags int) {
	defer rq.leave(rq.enter(SymEnqueueTaskFair))
	rq.cost(hwmodel.OpEnqueue)
	// Add the task's estimated utilization to the root cfs_rq's before
	// the PELT updates below (schedutil reads it there).
	rq.utilEstEnqueue(p)
	if flags&enqueueDelayed != 0 {
		// v6.12: ttwu_runnable() of a delayed task: still queued.
		rq.requeueDelayedEntity(&p.se)
		return
	}
	se := &p.se
	for ; se != nil; se = se.parent {
		if se.OnRQ {
			break
		}
		cfs := se.cfsRq
		rq.enqueueEntity(cfs, se, flags)
		cfs.hNrRunning++
		flags = enqueueWakeup
	}
	prev := rq.atTgSite(tgSiteEnqueueTask)
	for ; se != nil; se = se.parent {
		cfs := se.cfsRq
		rq.updateLoadAvg(cfs, se, updateTG)
		rq.seUpdateRunnable(se)
		rq.updateCfsGroup(se)
		cfs.hNrRunning++
	}
	rq.tgSite = prev
	rq.addNrRunning(1, SymEnqueueTaskFair)
}

// dequeueTaskFair is fair.c: dequeue_task_fair(); false when the task
// stays queued, delayed (v6.12: the util_est updates are done either
// way, here after the dequeue as v6.6 orders them).
func (rq *RQ) dequeueTaskFair(p *Task, flags int) bool {
	defer rq.leave(rq.enter(SymDequeueTaskFair))
	rq.cost(hwmodel.OpDequeue)
	taskSleep := flags&dequeueSleep != 0
	rq.utilEstDequeue(p)
	done := rq.dequeueEntities(&p.se, flags) > 0
	rq.utilEstUpdate(p, taskSleep)
	return done
}

// dequeueEntities is fair.c: dequeue_entities() (v6.12; v6.6's
// dequeue_task_fair() loops): dequeue se and the group entities above it
// left empty; -1 when the task's entity is delayed instead, 1 when done.
// DEQUEUE_DELAYED finishes a delayed task's dequeue (pick_next_entity()),
// whose h_nr_delayed the entity's clear_delayed() takes back.
func (rq *RQ) dequeueEntities(se *SchedEntity, flags int) int {
	p := se.task
	taskSleep := flags&dequeueSleep != 0
	hNr, hDelayed := 0, 0
	if p != nil {
		hNr = 1
		if !taskSleep && flags&dequeueDelayed == 0 && se.SchedDelayed {
			hDelayed = 1
		}
	}
	for ; se != nil; se = se.parent {
		cfs := se.cfsRq
		if !rq.dequeueEntity(cfs, se, flags) {
			if p != nil && &p.se == se {
				return -1
			}
			break
		}
		cfs.hNrRunning -= hNr
		cfs.hNrDelayed -= hDelayed
		// Don't dequeue parent if it has other entities besides us.
		if cfs.load.Weight != 0 {
			se = se.parent
			// Bias pick_next to pick a task from this cfs_rq, as p
			// is sleeping when it is within its sched_slice.
			if taskSleep && se != nil {
				rq.setNextBuddy(se)
			}
			break
		}
		flags |= dequeueSleep
		flags &^= dequeueDelayed | dequeueSpecial
	}
	prev := rq.atTgSite(tgSiteDequeueTask)
	for ; se != nil; se = se.parent {
		cfs := se.cfsRq
		rq.updateLoadAvg(cfs, se, updateTG)
		rq.seUpdateRunnable(se)
		rq.updateCfsGroup(se)
		cfs.hNrRunning -= hNr
		cfs.hNrDelayed -= hDelayed
	}
	rq.tgSite = prev
	rq.addNrRunning(-hNr, SymDequeueTaskFair)
	return 1
}

// setNextBuddy is fair.c: set_next_buddy().
func (rq *RQ) setNextBuddy(se *SchedEntity) {
	for ; se != nil; se = se.parent {
		if !se.OnRQ {
			return
		}
		se.cfsRq.next = se
	}
}

// setLastBuddy is fair.c: set_last_buddy() (CFS only).
func (rq *RQ) setLastBuddy(se *SchedEntity) {
	for ; se != nil; se = se.parent {
		if !se.OnRQ {
			return
		}
		se.cfsRq.last = se
	}
}

// setNextEntity is fair.c: set_next_entity().
func (rq *RQ) setNextEntity(cfs *CfsRq, se *SchedEntity) {
	cfs.clearBuddies(se)
	if se.OnRQ {
		rq.updateStatsWaitEnd(se)
		// 'current' is not kept within the tree (SetCurr also stashes
		// the deadline in vlag: the RUN_TO_PARITY marker).
		cfs.q.SetCurr(&se.Entity)
		prev := rq.atTgSite(tgSiteSetNext)
		rq.updateLoadAvg(cfs, se, updateTG)
		rq.tgSite = prev
	} else {
		cfs.q.SetCurr(&se.Entity)
	}
	// update_stats_curr_start(): exec_start; PLACE_MIGRATE clears the
	// migrated mark when the task runs.
	se.ExecStart = uint64(rq.clock)
	se.migrated = 0
	cfs.setCurr(se)
	if se.isTask() && rq.cfs.load.Weight >= 2*se.Load.Weight {
		ran := int64(se.SumExecRuntime - se.PrevSumExecRuntime)
		se.task.Stats.SliceMax = max(se.task.Stats.SliceMax, ran)
	}
	se.PrevSumExecRuntime = se.SumExecRuntime
}

// putPrevEntity is fair.c: put_prev_entity().
func (rq *RQ) putPrevEntity(cfs *CfsRq, prev *SchedEntity) {
	if prev.OnRQ {
		rq.updateCurr(cfs)
	}
	if prev.OnRQ {
		prev.waitStart = rq.clock
	}
	cfs.q.PutCurr(&prev.Entity)
	if prev.OnRQ {
		rq.updateLoadAvg(cfs, prev, 0)
	}
	cfs.setCurr(nil)
}

// pickNextEntity is fair.c: pick_next_entity(): EEVDF's pick_eevdf(), or
// CFS's leftmost with the next/last buddies.
func (rq *RQ) pickNextEntity(cfs *CfsRq, curr *SchedEntity) *SchedEntity {
	if rq.eevdf() {
		// v6.12 PICK_BUDDY: "Picking the ->next buddy will affect
		// latency but not fairness."
		if rq.feat.Has(PICK_BUDDY) && cfs.next != nil && cfs.q.Eligible(&cfs.next.Entity) {
			return cfs.next
		}
		se := seOf(cfs.q.PickEEVDF(rq.feat.Has(RUN_TO_PARITY)))
		if se.SchedDelayed {
			rq.dequeueDelayedOnPick(se)
			return nil
		}
		return se
	}
	left := seOf(cfs.q.PickFirst())
	// If curr is set we have to see if its left of the leftmost entity
	// still in the tree.
	if left == nil || curr != nil && int64(curr.Vruntime-left.Vruntime) < 0 {
		left = curr
	}
	se := left
	// Avoid running the skip buddy, if running something else can be
	// done without getting too unfair.
	if cfs.skip != nil && cfs.skip == se {
		var second *SchedEntity
		if se == curr {
			second = seOf(cfs.q.PickFirst())
		} else {
			second = seOf(cfs.q.Next(&se.Entity))
			if second == nil || curr != nil && int64(curr.Vruntime-second.Vruntime) < 0 {
				second = curr
			}
		}
		if second != nil && rq.wakeupPreemptEntity(second, left) < 1 {
			se = second
		}
	}
	if cfs.next != nil && rq.wakeupPreemptEntity(cfs.next, left) < 1 {
		se = cfs.next
	} else if cfs.last != nil && rq.wakeupPreemptEntity(cfs.last, left) < 1 {
		se = cfs.last
	}
	return se
}

// pickNextTaskFair is fair.c: pick_next_task_fair(), with the group
// scheduling fast path that only puts and sets the part of the hierarchy
// that changes.
func (rq *RQ) pickNextTaskFair(prev *Task) *Task {
	defer rq.leave(rq.enter(SymPickNextTaskFair))
	cfs := rq.cfs
	if rq.cfs.hNrRunning == 0 {
		return nil
	}
	var se *SchedEntity
	if prev == nil {
		goto simple
	}
	for cfs != nil {
		curr := cfs.curr
		// Since we got here without doing put_prev_entity() we also
		// have to consider cfs_rq->curr.
		if curr != nil {
			if curr.OnRQ {
				rq.updateCurr(cfs)
			} else {
				curr = nil
			}
		}
		se = rq.pickNextEntity(cfs, curr)
		if se == nil {
			// v6.12 pick_task_fair(): a delayed entity was picked and
			// dequeued; "goto again" from the top.
			if cfs = rq.cfs; cfs.hNrRunning == 0 {
				return nil
			}
			continue
		}
		cfs = se.myQ
	}
	if p := se.task; p != prev {
		rq.cfsTasks.moveFront(p)
		pse := &prev.se
		for {
			if c := sameGroup(se, pse); c != nil {
				cfs = c
				break
			}
			sd, pd := se.depth, pse.depth
			if sd <= pd {
				rq.putPrevEntity(pse.cfsRq, pse)
				pse = pse.parent
			}
			if sd >= pd {
				rq.setNextEntity(se.cfsRq, se)
				se = se.parent
			}
		}
		rq.putPrevEntity(cfs, pse)
		rq.setNextEntity(cfs, se)
		return p
	}
	rq.cfsTasks.moveFront(prev)
	return prev

simple:
	if rq.feat.Has(DELAY_DEQUEUE) {
		return rq.pickSimpleDelayed()
	}
	for cfs != nil {
		se = rq.pickNextEntity(cfs, nil)
		rq.setNextEntity(cfs, se)
		cfs = se.myQ
	}
	rq.cfsTasks.moveFront(se.task)
	return se.task
}

// sameGroup is fair.c: is_same_group().
func sameGroup(se, pse *SchedEntity) *CfsRq {
	if se.cfsRq == pse.cfsRq {
		return se.cfsRq
	}
	return nil
}

// putPrevTaskFair is fair.c: put_prev_task_fair().
func (rq *RQ) putPrevTaskFair(prev *Task) {
	for se := &prev.se; se != nil; se = se.parent {
		if se.cfsRq.curr == se {
			rq.putPrevEntity(se.cfsRq, se)
		}
	}
}

// taskTickFair is fair.c: task_tick_fair() with entity_tick() per level.
func (rq *RQ) taskTickFair(p *Task) {
	defer func(prev tgSite) { rq.tgSite = prev }(rq.atTgSite(tgSiteTick))
	for se := &p.se; se != nil; se = se.parent {
		cfs := se.cfsRq
		rq.updateCurr(cfs)
		rq.updateLoadAvg(cfs, se, updateTG)
		rq.updateCfsGroup(se)
		if !rq.eevdf() && cfs.q.NrRunning > 1 {
			rq.checkPreemptTick(cfs, se)
		}
	}
}

// taskForkFair is fair.c: task_fork_fair() for a task created directly on
// this CPU (there is no parent to copy from): EEVDF places it at enqueue
// (ENQUEUE_INITIAL); CFS gives it min_vruntime plus a vslice (START_DEBIT),
// carried relative until the enqueue renormalises.
func (rq *RQ) taskForkFair(p *Task) {
	if rq.eevdf() {
		return
	}
	cfs := p.se.cfsRq
	if cfs.curr != nil {
		rq.updateCurr(cfs)
	}
	p.se.Vruntime = cfs.q.MinVruntime
	if cfs.curr != nil {
		p.se.Vruntime = cfs.curr.Vruntime
	}
	rq.placeEntityCFS(cfs, &p.se, true)
	p.se.Vruntime -= cfs.q.MinVruntime
	p.se.relative = true
}

// yieldTaskFair is fair.c: yield_task_fair().
func (rq *RQ) yieldTaskFair(p *Task) {
	if rq.nrRunning == 1 {
		return
	}
	cfs := p.se.cfsRq
	cfs.clearBuddies(&p.se)
	rq.updateCurrFair()
	if rq.eevdf() {
		// v6.6: se->deadline += calc_delta_fair(se->slice, se).
		p.se.Deadline += eevdf.CalcDeltaFair(p.se.Slice, &p.se.Entity)
	} else {
		for se := &p.se; se != nil; se = se.parent {
			se.cfsRq.skip = se
		}
	}
}

// updateStatsWaitEnd is update_stats_wait_end_fair(): the wait that ends
// when the entity is picked (or dequeued while waiting).
func (rq *RQ) updateStatsWaitEnd(se *SchedEntity) {
	if !se.isTask() {
		return
	}
	d := rq.clock - se.waitStart
	if d < 0 {
		return
	}
	st := &se.task.Stats
	st.WaitMax = max(st.WaitMax, d)
	st.WaitSum += d
	st.WaitCount++
}
