package emu

import "github.com/rqemu/rqemu/hwmodel"

// sched_setaffinity() of a running task on itself, the hop of the
// migration stress tests (core.c v5.15 and v6.6, PREEMPT_VOLUNTARY):
//
//	__set_cpus_allowed_ptr()          // task_rq_lock(); the new mask
//	  affine_move_task()              // the task's CPU is not allowed:
//	    stop_one_cpu_nowait(migration_cpu_stop)  // wakes the stopper,
//	    wait_for_completion()         // which preempts the task here
//	migration_cpu_stop()              // on the task's CPU, stop class
//	  move_queued_task()
//	    deactivate_task(rq, p, 0)     // still queued: not a sleep
//	    set_task_cpu(p, new_cpu)
//	    rq_unlock(rq); rq_lock(new rq)
//	    activate_task(new rq, p, 0)   // not a wakeup
//	    check_preempt_curr()
//	  complete_all()                  // the task returns on the new CPU
//
// The stopper runs on the old CPU between the task and whatever it runs
// next, so its time (two context switches and the move, the new CPU's
// rq lock and lines included) is charged to that CPU's clock and to no
// fair task: the next one's exec_start is taken after it. Under the CFS
// protocol (v6.5 and before) that is what sets how fast the queues'
// min_vruntime advances against real time in a hop storm: only the
// fair tasks' own runs advance vruntime, so the larger the share of a
// CPU the stoppers take, the longer a task placed right of
// min_vruntime waits (hopper.go in bench).
//
// Simplified: the stopper's wakeup and its own __schedule() in and out
// are one more OpSchedule; the task's dequeue is done under the lock
// schedule() holds (the kernel takes it again in the stopper); the
// __do_set_cpus_allowed() requeue is its cost alone (doSetCPUsAllowed).
// A mask that keeps the task's CPU still parks the task until the
// barrier, where the kernel would return at once.

// doSetCPUsAllowed is __set_cpus_allowed_ptr() up to affine_move_task()
// for p, curr: under task_rq_lock(), __do_set_cpus_allowed()'s requeue
// (dequeue_task(DEQUEUE_SAVE) ... enqueue_task(ENQUEUE_RESTORE)) is
// neutral for vruntime and the queue, so only its work is charged, to the
// task: a dequeue's and an enqueue's base costs, update_curr() and
// set_next_entity(). Simplified: the requeue's PELT and tg->load_avg
// updates are not applied.
func (rq *RQ) doSetCPUsAllowed(p *Task) {
	rq.lockRQ(SymSetCPUsAllowedPtr)
	rq.updateRQClock()
	rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpUpdateCurr)
	rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpDequeue)
	rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpEnqueue)
	for d := p.group.depth; d >= 0; d-- {
		rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpUpdateLoadAvg)
		rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpUpdateLoadAvg)
		if d > 0 {
			rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpCfsGroup)
			rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpCfsGroup)
		}
	}
	rq.costAs(SymSetCPUsAllowedPtr, hwmodel.OpPickNext)
	rq.unlockRQ(SymSetCPUsAllowedPtr)
}

// affinityWait is what a task changing its own affinity waits on until the
// barrier moves it.
var affinityWait = &Sem{Name: "sched_setaffinity"}

// affinityTarget is the CPU a task on cur moves to under the mask cpus
// (of n CPUs): cur if allowed, else the next allowed one after it (the
// model's cpumask_any_and_distribute()).
func affinityTarget(cur int, cpus []int, n int) int {
	dst, dist := cur, n
	for _, c := range cpus {
		if d := (c - cur + n) % n; d < dist {
			dst, dist = c, d
		}
	}
	return dst
}

// migrationCPUStop is the stopper's migration_cpu_stop() ->
// move_queued_task() for p, curr, which has just called
// sched_setaffinity() on itself (rq.affinityCPUs): called from
// schedule() under this CPU's lock in place of the dequeue (it drops the
// lock for the move and takes it again, as the stopper does). When p must
// leave, the stopper takes the new CPU's rq lock and does the enqueue
// there as a direct remote wakeup's waker does (ttwudirect.go): its
// stores to that CPU's lines are logged here, the state change is the
// target's at the barrier (applyAffinity), visible once the rq_unlock()
// completes.
func (rq *RQ) migrationCPUStop(p *Task) {
	rq.deactivateTask(p, 0)
	cpus := rq.affinityCPUs
	rq.affinityCPUs = nil
	dst := affinityTarget(p.cpu, cpus, len(rq.sim.cpus))
	rq.traceAffinityMove(dst)
	op := remoteOp{kind: opAffinity, task: p, cpus: cpus, target: dst}
	// rq_unlock(rq) before rq_lock(new rq): one rq lock at a time.
	rq.unlockRQ(SymSchedule)
	if dst != rq.cpu {
		target := rq.sim.cpus[dst]
		rq.ttwuDirectLock(target, SymMigrationCPUStop)
		op.locked = true
		rq.wokeTo = append(rq.wokeTo, dst)
		rq.noteEnqueue(rq.taskView(p), dst)
		rq.ttwuDirectEnqueue(target, p, true)
		rq.ttwuDirectUnlock(target, SymMigrationCPUStop)
		op.notified = rq.markWakeupNotify()
	}
	rq.post(op)
	// The stopper was switched in by schedule()'s OpSchedule; its own
	// __schedule() out takes this CPU's lock again; the
	// next fair task starts after it: its exec_start
	// (set_next_entity()) is taken from this clock.
	rq.costAs(SymMigrationCPUStop, hwmodel.OpSchedule)
	rq.lockRQ(SymSchedule)
	rq.updateRQClock()
}

// applyAffinity is the barrier's half of the move: the mask changes, and
// the task, parked since its call, resumes on its CPU if still allowed,
// else on op.target, where the stopper enqueued it (op.locked: its lines
// were logged by the stopper's CPU; op.notified: at its rq_unlock()'s
// completion).
func (s *Sim) applyAffinity(op *remoteOp) {
	p := op.task
	// In place: a hopper changes its mask at every hop, and only the
	// barrier writes it.
	if p.affinity == nil {
		p.affinity = make([]bool, len(s.cpus))
	} else {
		clear(p.affinity)
	}
	for _, c := range op.cpus {
		p.affinity[c] = true
	}
	flags := wfAffinity
	if op.target != p.cpu {
		flags |= wfMigrated
	}
	s.claimWake(&remoteOp{t: op.t, from: op.from, seq: op.seq, kind: opWake, task: p, target: op.target,
		flags: flags, recent: -1, sem: affinityWait, stamp: op.t, locked: op.locked, notified: op.notified})
}
