package emu

import (
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// The barrier half of a pull (the waker's half of a wakeup is in ttwu.go,
// its barrier half in ttwudeliver.go): loadBalance (balance.go) decides a
// pull with what its CPU sees and posts it; doPull carries it out at the
// barrier on the source's exact state, detach_tasks() and attach_tasks()
// logged and charged to the balancing CPU.

// pullReq is a pull decided by load balancing, carried out at the barrier.
type pullReq struct {
	src, dst      int
	sd            *Domain
	idle          int
	imbalance     int64
	migrationType int
	loopMax       int

	// posted: the pull waits for the barrier (it was not decided there),
	// so rebalance_domains() went on as if it would move a task;
	// nextIfNone is the rq->next_balance of that pass had it moved none
	// (set by rebalanceDomains for a CPU_IDLE pass, with idlePass). moved
	// is the number of tasks doPull moved.
	posted     bool
	idlePass   bool
	nextIfNone int64
	moved      int
	// at is when the balancing CPU ran the balance (the pull's post):
	// doPull sets it, canMigrateTask reads it.
	at int64
}

// holdsEnqueueFrom reports whether this CPU has yet to apply a direct
// remote enqueue (msgEnqueue) that CPU from did at or before time t.
func (rq *RQ) holdsEnqueueFrom(from int, t int64) bool {
	if rq.sim.holdsDirectFrom(from, rq, t) {
		return true
	}
	for i := range rq.events.h {
		e := &rq.events.h[i].V
		if e.kind == evMsg && e.msg.kind == msgEnqueue && e.msg.from == from && e.t <= t {
			return true
		}
	}
	return false
}

// doPull carries out a pull at the barrier: detach_tasks() from the
// source's queue under its lock, attach_tasks() on the destination, and
// load_balance()'s bookkeeping of the outcome (failures, active balance,
// the interval).
func (s *Sim) doPull(op *remoteOp) {
	r := op.pull
	s.touch(s.cpus[op.from])
	s.touch(s.cpus[r.src])
	s.touch(s.cpus[r.dst])
	if op.t > s.epochEnd {
		// The balancing CPU's work ran past the epoch's end: its
		// detach_tasks() is later than this barrier. As a decision
		// past the epoch's end waits for the epoch of its time
		// (hold.go: park), the pull waits for the barrier after it.
		actor := s.cpus[op.from]
		actor.outbox = append(actor.outbox, *op)
		return
	}
	if r.posted && s.cpus[r.src].holdsEnqueueFrom(op.from, op.t) {
		// The puller counted its own direct enqueues onto the source
		// (ownEnqueues): in the kernel they are on the source's queue
		// before its detach_tasks() runs. The source applies them
		// later than this barrier here, so the pull waits for the
		// barrier after they are applied.
		actor := s.cpus[op.from]
		actor.outbox = append(actor.outbox, *op)
		return
	}
	r.at = op.t
	src, dst := s.cpus[r.src], s.cpus[r.dst]
	src.catchUp(s.epochEnd)
	dst.catchUp(s.epochEnd)
	actor := s.cpus[op.from]
	moved := 0
	hot := 0
	if src.nrRunning > 1 && dst.cpu != src.cpu {
		// load_balance() runs on the balancing CPU: detach_tasks()
		// under the busiest runqueue's lock and attach_tasks() under
		// dst's are its work, so their accesses go on its log and
		// their stalls are its own. A newidle pull's are timed with
		// the rest of its balance (newidlePulled): dst is the puller.
		newidle := r.idle == cpuNewlyIdle && actor == dst
		saved := src.logOn(newidle)
		src.lockRQ(SymLoadBalance)
		src.updateRQClock()
		src.remoteAt = r.at
		tasks, hotMoved := src.detachTasks(r, dst)
		src.remoteAt = 0
		src.unlockRQ(SymLoadBalance)
		src.logBack(saved, actor)
		for _, p := range tasks {
			s.tracePull(actor, p, src.cpu, dst.cpu, r.idle == cpuNewlyIdle)
		}
		hot = hotMoved
		saved = dst.logOn(newidle)
		dst.lockRQ(SymLoadBalance)
		dst.updateRQClock()
		for _, p := range tasks {
			s.attachTask(p, dst, actor)
		}
		dst.unlockRQ(SymLoadBalance)
		dst.logBack(saved, actor)
		moved = len(tasks)
		work := int64(moved) * (s.m.Cost(hwmodel.OpMigrate) + s.m.Cost(hwmodel.OpEnqueue) + s.m.Cost(hwmodel.OpDequeue))
		actor.addDebt(SymLoadBalance, work)
		if s.uclampUsed {
			// detach_task() -> dequeue_task() -> uclamp_rq_dec() on
			// src, attach_task() -> enqueue_task() -> uclamp_rq_inc()
			// on dst: the balancing CPU's too (the rqs charge
			// nothing, onBehalf), their lines already on its log.
			uc := int64(moved) * s.m.Cost(hwmodel.OpUclamp)
			actor.addDebt(SymUclampRQDec, uc)
			actor.addDebt(SymUclampRQInc, uc)
			work += 2 * uc
		}
		if newidle {
			dst.newidlePulled(r.sd, moved, work, s.epochEnd)
		}
	} else if r.idle == cpuNewlyIdle && actor == dst {
		dst.newidlePulled(r.sd, 0, 0, s.epochEnd)
	}
	r.moved = moved
	sd := r.sd
	sd.Stats.LBGained[r.idle] += int64(moved)
	sd.Stats.LBHotGained[r.idle] += int64(hot)
	if moved == 0 {
		sd.Stats.LBFailed[r.idle]++
		if r.idle != cpuNewlyIdle {
			sd.nrBalanceFailed++
		}
		// need_active_balance(): the imbalance keeps failing to
		// move tasks (imbalanced_active_balance()).
		if r.migrationType == migrateTask && sd.nrBalanceFailed > sd.CacheNiceTries+2 {
			s.activeBalance(src, dst, sd)
		}
	} else {
		sd.nrBalanceFailed = 0
	}
	// We were unbalanced, so reset the balancing interval.
	sd.balanceInterval = sd.MinInterval
	if moved == 0 && r.posted && r.idlePass {
		// rebalance_domains() of an idle CPU took the busy intervals
		// on the prediction that this pull would move a task; it
		// moved none, and the kernel's pass (v5.15, v6.6: idle and
		// busy recomputed only "if (load_balance(...))") keeps the
		// idle intervals: rq->next_balance from those, this domain's
		// from its interval just reset. (Higher domains the pass
		// skipped as not yet due at their busy interval are balanced
		// at the next tick or ILB pass instead of in the same pass.)
		next := min(r.nextIfNone, sd.lastBalance+dst.balanceInterval(sd, false))
		dst.nextBalance = min(dst.nextBalance, next)
	}
}

// logOn makes this RQ's code log its accesses for actor's log until
// logBack: the kernel runs it on actor's CPU (load_balance() detaching
// from, or attaching to, another CPU's runqueue), so the weave charges
// actor the stalls. newidle: the accesses are a newidle balance's
// (RQ.site), timed in its cost. They go to scratch (toScratch), and
// logBack appends them to actor's log in their order at actor's clock
// (logNow): the two CPUs' clocks differ, and the replay spaces a CPU's
// requests by their own costs. actor may be this RQ. It returns this
// RQ's own log, for logBack.
func (rq *RQ) logOn(newidle bool) *weave.Log {
	rq.inNewidle = newidle
	return rq.toScratch()
}

// logBack ends logOn: the accesses move to actor's log.
func (rq *RQ) logBack(own *weave.Log, actor *RQ) {
	rq.fromScratch(own, actor, func(weave.Entry) (int64, bool) { return actor.logNow(), true })
	rq.inNewidle = false
}

// detachTasks is fair.c: detach_tasks(): from the least recently run,
// take what can migrate until the imbalance is met (one task for a newly
// idle puller on a preemptible kernel).
func (src *RQ) detachTasks(r *pullReq, dst *RQ) (tasks []*Task, hotMoved int) {
	imbalance := r.imbalance
	if src.nrRunning <= 1 || imbalance <= 0 {
		return nil, 0
	}
	loop := 0
	for p := src.cfsTasks.tail; p != nil; {
		prevP := p.tlPrev
		// We don't want to steal all.
		if r.idle != cpuNotIdle && src.nrRunning <= 1 {
			break
		}
		loop++
		if loop > r.loopMax {
			break
		}
		ok, hot := src.canMigrateTask(p, r, dst)
		if ok {
			take := true
			switch r.migrationType {
			case migrateLoad:
				load := max(src.taskHLoad(p), 1)
				if load>>min(uint(r.sd.nrBalanceFailed), 63) > uint64(imbalance) {
					take = false
				} else {
					imbalance -= int64(load)
				}
			case migrateUtil:
				// v5.15..v6.7 detach_tasks(): "if (util >
				// env->imbalance) goto next": the test is not relaxed
				// by nr_balance_failed, as migrate_load's is; that
				// came with v6.8 (3af7524b1419, Pierre Gondois), which
				// no profile models. task_util_est(): a task that ran
				// long before its last sleep keeps its size (~1000 after
				// 1 s of spinning) while its util_avg decays.
				util := taskUtilEst(p)
				if util > uint64(imbalance) {
					take = false
				} else {
					imbalance -= int64(util)
				}
			case migrateTask:
				imbalance--
			}
			if take {
				src.detachTask(p, dst.cpu)
				tasks = append(tasks, p)
				if hot {
					hotMoved++
				}
				// NEWIDLE balancing is a source of latency, so
				// preemptible kernels stop after the first task.
				if r.idle == cpuNewlyIdle || imbalance <= 0 {
					break
				}
			}
		}
		p = prevP
	}
	return tasks, hotMoved
}

// canMigrateTask is fair.c: can_migrate_task(); hot reports a cache-hot
// task forced over by repeated failures (lb_hot_gained).
func (src *RQ) canMigrateTask(p *Task, r *pullReq, dst *RQ) (ok, hot bool) {
	if !p.allowedOn(dst.cpu) {
		return false, false
	}
	if src.curr == p {
		return false, false // task_on_cpu()
	}
	if r.idle == cpuNewlyIdle && (p.offCPUAt > r.at || p.queuedAt > r.at) {
		// A newidle balance ran inside its CPU's __schedule() (the
		// barrier applies it later): a task still on src's CPU then
		// (task_on_cpu(), switched out since), or queued on src only
		// after it, was not there for its detach_tasks() to take.
		return false, false
	}
	if p.se.SchedDelayed {
		// Simplified (delayed.go): v6.12 migrates a delayed task,
		// still delayed; the model leaves it to its pick or wakeup.
		return false, false
	}
	h := src.taskHot(p, r.sd, dst)
	if !h || r.sd.nrBalanceFailed > r.sd.CacheNiceTries {
		return true, h
	}
	return false, false
}

// taskHot is fair.c: task_hot(): ran within sysctl_sched_migration_cost
// (500 us), or a buddy, and not across SMT siblings. A migrated task is
// cold (exec_start = 0, or PLACE_MIGRATE's se->migrated).
func (src *RQ) taskHot(p *Task, sd *Domain, dst *RQ) bool {
	if sd.Flags&SD_SHARE_CPUCAPACITY != 0 {
		return false
	}
	if p.se.migrated != 0 {
		return false
	}
	cfs := p.se.cfsRq
	if dst.nrRunning > 0 && (cfs.next == &p.se || cfs.last == &p.se) {
		return true
	}
	delta := int64(src.clock) - int64(p.se.ExecStart)
	return delta < src.tun.MigrationCost
}

// detachTask is fair.c: detach_task(): dequeue as TASK_ON_RQ_MIGRATING
// and set the new CPU.
func (src *RQ) detachTask(p *Task, dst int) {
	p.setState(TaskMigrating)
	src.onBehalf(src.sim.cpus[dst], func() { src.deactivateTask(p, 0) })
	src.sim.setTaskCPU(p, dst)
}

// attachTask is fair.c: attach_task(), done by actor (the balancing CPU).
func (s *Sim) attachTask(p *Task, dst, actor *RQ) {
	dst.onBehalf(actor, func() {
		dst.activateTask(p, 0)
		p.setState(TaskRunnable)
		dst.wakeupPreempt(p, 0)
	})
	dst.markDirty(p)
	dst.republish = true
}

// activeBalance is the active_load_balance_cpu_stop() path: the busiest
// CPU's stopper preempts its running task and pushes it to dst. Done here
// at the barrier: the task comes off src's CPU as if preempted, moves, and
// src reschedules at once.
func (s *Sim) activeBalance(src, dst *RQ, sd *Domain) {
	s.touch(src)
	s.touch(dst)
	p := src.curr
	// Simplified: a task stopped at an action's decision point (parked
	// or held, hold.go) is inside its syscall until the barrier resumes
	// it, and the model cannot take it off its CPU there: the push fails
	// this time, as one that finds the task no longer alone does.
	if p == nil || !p.allowedOn(dst.cpu) || src.nrRunning != 1 || src.parked.task != nil {
		sd.Stats.ALBFailed++
		return
	}
	sd.Stats.ALBCount++
	src.catchUp(s.epochEnd)
	src.enterKernel()
	src.lockRQ(SymLoadBalance)
	src.updateRQClock()
	src.putPrevTaskFair(p)
	p.setState(TaskRunnable)
	p.Stats.NrInvolSwitch++
	src.schedInfoDepart(p)
	src.curr = nil
	src.mode = modeIdle
	src.log.Record(src.logNow(), src.currLine, hwmodel.Write, src.site(SymLoadBalance))
	src.unlockRQ(SymLoadBalance)
	s.traceActiveBalance(src, p, dst.cpu)
	// The stopper on src attaches p to dst: attach_one_task() ->
	// wakeup_preempt() -> resched_curr(dst), which must reach dst (an
	// idle dst has no other event to notice need_resched by). dst's
	// clock is brought to the barrier first (an idle CPU's stands at its
	// last event), and its new nr_running is published.
	dst.catchUp(s.epochEnd)
	dst.onBehalf(src, func() { s.moveQueuedTask(p, dst.cpu) })
	dst.markDirty(p)
	dst.republish = true
	sd.Stats.ALBPushed++
	src.events.push(event{t: src.now, kind: evMsg, msg: &message{kind: msgResched, from: dst.cpu}})
	src.markDirty(p)
	src.republish = true
}

// willMove is whether the caller is to go on as if load_balance() returned
// ld_moved > 0: a posted pull is predicted to move (doPull corrects the
// prediction's rq->next_balance if it does not).
func (r *pullReq) willMove() bool { return r != nil && (r.posted || r.moved > 0) }
