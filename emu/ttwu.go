package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
)

// try_to_wake_up() in one file, in the order a wakeup runs (core.c keeps
// try_to_wake_up(), ttwu_queue_wakelist(), sched_ttwu_pending() and
// ttwu_do_activate() together; the CPU choice, select_task_rq_fair(), is
// fair.c's and lives in select.go). The package doc walks a remote wakeup
// through it.
//
//   - the waker, in its epoch: tryToWakeUp decides with what it can see
//     (its own state exactly, other CPUs and a remote wakee as published
//     at the last barrier), does its physical part at once (the remote rq
//     lock, or the wake-list push) and posts the state change (opWake);
//   - the barrier: claimWake claims the wakee in canonical order (the
//     first waker of a task asleep on the semaphore wins) and hands it to
//     the target, as a remote enqueue or onto its wake-list batch
//     (wakelistAdd, which decides the IPI);
//   - the target, at the time the kernel would: ttwuRemoteEnqueue or
//     schedTTWUPending, then ttwuDoActivate, which enqueues (core.go's
//     activate_task(), fair.go's enqueue_task_fair()).

// signal is the signalling half of a wait queue wakeup (__wake_up() on a
// queue with at most one waiter): wake the owner if it waits on sem, else
// leave the signal pending.
func (rq *RQ) signal(sem *Sem, stamp int64, wakeFlags int) {
	p := sem.owner
	if p == nil {
		panic(fmt.Sprintf("emu: CPU %d signals %v, which has no owner (bind it with TaskSpec.Sems)", rq.cpu, sem))
	}
	rq.tryToWakeUp(p, sem, stamp, wakeFlags)
}

// tryToWakeUp is core.c: try_to_wake_up() on this CPU, for a wakeup
// through sem (nil: a timed sleep's timer). A task not asleep on sem gets
// the signal left pending instead (asleepOn); one this CPU does not own
// gets it at the barrier (opSignal, applySignal), where the task's own
// state decides.
func (rq *RQ) tryToWakeUp(p *Task, sem *Sem, stamp int64, wakeFlags int) bool {
	defer rq.leave(rq.enter(SymTryToWakeUp))
	v := rq.taskView(p)
	owned := p.cpu == rq.cpu
	if !asleepOn(v.state, v.waitingOn, sem) {
		if !owned {
			rq.post(remoteOp{kind: opSignal, task: p, sem: sem, stamp: stamp, flags: wakeFlags, trCtx: traceWho{task: rq.curr}})
			return false
		}
		p.leavePending(sem, semSig{stamp: stamp, at: rq.now, from: rq.cpu, flags: wakeFlags, tr: traceWho{task: rq.curr}})
		return false
	}
	tr := rq.traceTTWU(p, sem == nil, false)
	rq.cost(hwmodel.OpTTWU)
	prev := v.cpu
	if v.delayed {
		// v6.12: "if (READ_ONCE(p->on_rq) && ttwu_runnable(p, wake_flags))".
		rq.ttwuRunnableDelayed(p, sem, stamp, wakeFlags, tr)
		return true
	}
	rq.sisRecent = -1
	if rq.ttwuOnCPU(p, prev) {
		// core.c: try_to_wake_up() (v6.6): "If the owning (remote) CPU
		// is still in the middle of schedule() with this task as prev,
		// considering queueing p on the remote CPUs wake_list":
		// ttwu_queue_wakelist(p, task_cpu(p), wake_flags | WF_ON_CPU),
		// before and instead of select_task_rq().
		rq.ttwuStatRQ(prev)
		rq.Stats.OnCPUWakeups++
		rq.ttwuQueueWakelist(p, prev, remoteOp{kind: opWake, task: p, target: prev, flags: wakeFlags, sem: sem, stamp: stamp, trace: tr, trCtx: traceWho{task: rq.curr}})
		return true
	}
	if !owned && v.offCPUAt >= rq.now {
		// The wakee left its CPU after this CPU's clock: a CPU the
		// weave held back (weaveBehind) acts at its old clock, and
		// then finds a sleeper the barrier published. At that clock
		// try_to_wake_up() waits for p->on_cpu to clear
		// (smp_cond_load_acquire(), core.c v6.6) before
		// select_task_rq(): the wait is spent here. Simplified: a
		// wakee not yet dequeued then (ttwu_runnable() in the kernel)
		// is woken the same way.
		rq.spend(SymTryToWakeUp, v.offCPUAt+1-rq.now)
	}
	cpu := rq.selectTaskRQ(p, v, prev, wakeFlags)
	wakeFlags |= rq.affineFlags
	if cpu != prev {
		wakeFlags |= wfMigrated
	}
	rq.traceTTWUSelected(tr, p, prev, cpu)
	rq.ttwuStatRQ(cpu)
	if owned && cpu == rq.cpu {
		rq.traceTTWULocal(tr)
		// The wakee sleeps here and wakes here: all of it is ours.
		rq.ttwuStatTask(p, cpu, wakeFlags)
		if rq.sisRecent >= 0 {
			p.recentUsedCPU = rq.sisRecent
		}
		rq.ttwuLocalActivate(p, sem, stamp, wakeFlags)
		return true
	}
	if owned {
		// set_task_cpu() -> migrate_task_rq_fair(): the wakee leaves
		// this CPU; its averages come off ours (ownRemoval).
		rq.noteRemoval(p)
	}
	// ttwu_queue(): the wake list (and an IPI) or the remote rq lock.
	op := remoteOp{kind: opWake, task: p, target: cpu, flags: wakeFlags, sem: sem, stamp: stamp, trace: tr, trCtx: traceWho{task: rq.curr}}
	target := rq.sim.cpus[cpu]
	if cpu != rq.cpu && rq.feat.Has(TTWU_QUEUE) && rq.ttwuQueueCond(p, cpu, false) {
		rq.ttwuQueueWakelist(p, cpu, op)
		return true
	}
	// rq_lock(target), update_rq_clock(), ttwu_do_activate(): the
	// waker does the enqueue under the target's lock. Its work is
	// charged here at the base costs of the path, and the target's
	// lines it writes are logged here, inside the lock
	// (ttwuDirectLocked); the target applies the state change at
	// the time the waker finished, without logging them again.
	remote := cpu != rq.cpu
	if remote {
		rq.ttwuDirectLock(target, SymTryToWakeUp)
		op.locked = true
		rq.wokeTo = append(rq.wokeTo, cpu)
		rq.noteEnqueue(v, cpu)
	}
	// enqueue_task(): uclamp_rq_inc() before the class's enqueue, the
	// waker's work on either path; a remote target's lines are logged
	// here, inside its lock, a local one's at the apply.
	rq.ttwuDirectEnqueue(target, p, remote)
	if remote {
		rq.ttwuDirectUnlock(target, SymTryToWakeUp)
		rq.Stats.DirectWakeups++
		op.notified = rq.markWakeupNotify()
	}
	rq.traceTTWUDirect(tr, p, cpu)
	rq.post(op)
	return true
}

// ttwuLocalActivate ends a wakeup of a task this CPU owns onto this CPU:
// the sleep is over (wokenBy), and under our own lock ttwu_do_activate().
func (rq *RQ) ttwuLocalActivate(p *Task, sem *Sem, stamp int64, wakeFlags int) {
	p.wokenBy(sem, stamp)
	p.setState(TaskWaking)
	rq.lockRQ(SymTryToWakeUp)
	rq.updateRQClock()
	rq.ttwuDoActivate(p, wakeFlags)
	rq.traceWakeupDone()
	rq.unlockRQ(SymTryToWakeUp)
}

// ttwuQueueWakelist is core.c: __ttwu_queue_wakelist():
// WRITE_ONCE(rq->ttwu_pending, 1) and llist_add() onto the target's
// call_single_queue; the barrier hands the wakee over (op).
func (rq *RQ) ttwuQueueWakelist(p *Task, cpu int, op remoteOp) {
	rq.sim.cpus[cpu].wake.Push(rq.log, rq.now, rq.site(SymTTWUQueueWakelist), &contention.WakeEntry{Task: p})
	op.notified = rq.markWakeupNotify()
	rq.accessCost(SymTTWUQueueWakelist, hwmodel.RMW)
	rq.wokeTo = append(rq.wokeTo, cpu)
	op.wakelist = true
	rq.Stats.WakelistWakeups++
	rq.post(op)
}

// ttwuOnCPU is try_to_wake_up()'s p->on_cpu test and the
// ttwu_queue_wakelist() condition it goes with: the wakee's CPU is still
// switching it out (onCPUSnap) and ttwu_queue_cond() lets the wakeup
// queue there. Where the condition fails the kernel spins on p->on_cpu
// and then selects a CPU as usual; the model selects at once
// (simplified: the spin's wait is not charged).
func (rq *RQ) ttwuOnCPU(p *Task, prev int) bool {
	if prev == rq.cpu || !rq.feat.Has(TTWU_QUEUE) {
		return false
	}
	oc := rq.onCPUOf(prev)
	return oc.task == p && rq.now < oc.until && rq.ttwuQueueCond(p, prev, true)
}

// ttwuQueueCond is core.c: ttwu_queue_cond(), with Mathieu Desnoyers'
// TTWU_QUEUE_L2 variant keying the first test on the L2. onCPU is
// WF_ON_CPU: the wakee is still descheduling on cpu (ttwuOnCPU).
//
// v6.0-6.12 (TTWU_QUEUE_IDLE, f3dd3f674555 and 28156108fecb): inside the
// LLC, "if (!cpu_rq(cpu)->nr_running) return true" for any wakeup. v5.10
// and v5.15: only "if ((wake_flags & WF_ON_CPU) && cpu_rq(cpu)->nr_running
// <= 1) return true": every other wakeup inside the LLC is enqueued by the
// waker under the target's rq lock (ttwu_queue()'s rq_lock path), so its
// rq->nr_running and rd->overload are the waker's own writes at once.
// (The v6.0 test that the task may run on cpu is kept in both.)
func (rq *RQ) ttwuQueueCond(p *Task, cpu int, onCPU bool) bool {
	if !p.allowedOn(cpu) {
		return false
	}
	// If the CPU does not share cache, then queue the task on the remote
	// rq's wake list to avoid accessing remote data.
	share := rq.sim.cpusShareCache(rq.cpu, cpu)
	if rq.feat.Has(TTWU_QUEUE_L2) {
		share = rq.sim.cpusShareL2(rq.cpu, cpu)
	}
	if !share {
		return true
	}
	if cpu == rq.cpu {
		return false
	}
	if !rq.feat.Has(TTWU_QUEUE_IDLE) {
		// If the task is descheduling and the only running task on
		// the CPU then use the wakelist to offload the task
		// activation to the soon-to-be-idle CPU (v5.15).
		return onCPU && rq.readNrRunning(cpu, SymTryToWakeUp) <= 1
	}
	// If the wakee CPU is idle, offload the activation to it.
	return rq.readNrRunning(cpu, SymTryToWakeUp) == 0
}

// ttwuStatRQ is the waker's half of core.c: ttwu_stat().
func (rq *RQ) ttwuStatRQ(cpu int) {
	rq.Stats.TTWUCount++
	if cpu == rq.cpu {
		rq.Stats.TTWULocal++
		return
	}
	for _, d := range rq.sim.domains[rq.cpu] {
		if d.Contains(cpu) {
			d.Stats.TTWUWakeRemote++
			break
		}
	}
}

// ttwuStatTask is the wakee's half of ttwu_stat() (done by the wakee's
// owner, or at the barrier).
func (p *Task) ttwuStatTask(cpu, waker, wakeFlags int) {
	p.Stats.NrWakeups++
	if cpu == waker {
		p.Stats.NrWakeupsLoc++
	} else {
		p.Stats.NrWakeupsRem++
	}
	if wakeFlags&wfMigrated != 0 {
		p.Stats.NrWakeupsMig++
	}
	if wakeFlags&wfSync != 0 {
		p.Stats.NrWakeupsSync++
	}
	if wakeFlags&wfAffineTried != 0 {
		p.Stats.NrWakeupsAffineAttempts++
	}
	if wakeFlags&wfAffine != 0 {
		p.Stats.NrWakeupsAffine++
	}
}

func (rq *RQ) ttwuStatTask(p *Task, cpu, wakeFlags int) { p.ttwuStatTask(cpu, rq.cpu, wakeFlags) }

// wokenBy ends the task's sleep: the signal's stamp is delivered and any
// armed sleep timer is cancelled (by the owner, or at the barrier).
func (p *Task) wokenBy(sem *Sem, stamp int64) {
	if sem != nil {
		p.stamp = stamp
	}
	p.waitingOn = nil
	if p.timer != nil {
		p.timer.cancelled = true
		p.timer = nil
	}
}

// asleepOn is the test every wakeup through sem makes first: is the
// task, in state st and waiting on w as the waker sees it, asleep on sem?
// A timer (sem nil) wakes it whatever it sleeps on. The waker tests what
// it can see (taskView); the barrier tests the task itself.
func asleepOn(st TaskState, w, sem *Sem) bool {
	return st == TaskSleeping && (sem == nil || w == sem)
}

// leavePending is the other branch of asleepOn, run by the task's owner or
// at the barrier: the task is running, runnable and about to wait, or
// waiting on something else, so the signal stays pending on sem for its
// next Wait. This is the condition check after prepare_to_wait() that
// makes the kernel's sleep race-free; no ttwu runs, as the wait queue is
// empty. A dead task's signal is dropped; a timer leaves none.
func (p *Task) leavePending(sem *Sem, sig semSig) {
	if p.state != TaskDead && sem != nil {
		sem.push(sig)
	}
}

// pendingSig is op's signal as it waits on its semaphore.
func (op *remoteOp) pendingSig() semSig {
	return semSig{stamp: op.stamp, at: op.t, from: op.from, flags: op.flags, tr: op.trCtx}
}

// claimWake carries out a waker's decision: the first waker (in canonical
// order) of a task sleeping on the semaphore wins; a later one finds it
// awake and leaves its signal pending, as try_to_wake_up() on a running
// task does.
func (s *Sim) claimWake(op *remoteOp) {
	p := op.task
	if !asleepOn(p.state, p.waitingOn, op.sem) {
		p.leavePending(op.sem, op.pendingSig())
		if op.notified {
			s.queueWakeOf(op, deferredWake{dropped: true})
		}
		return
	}
	if s.claimDelayed(op) {
		return
	}
	// The wakee's CPU (its sleep timer, its queue if it moves) and the
	// waker change here; the target does below (markDirty).
	s.touch(s.cpus[p.cpu])
	s.redirectClaimedIdle(op)
	waker := s.cpus[op.from]
	s.touch(waker)
	s.traceClaim(op, op.target != p.cpu)
	p.wokenBy(op.sem, op.stamp)
	p.setState(TaskWaking)
	p.ttwuStatTask(op.target, op.from, op.flags)
	if op.recent >= 0 {
		p.recentUsedCPU = op.recent
	}
	if op.target != p.cpu {
		s.setTaskCPUFrom(p, op.target, waker, op.t)
	}
	dst := s.cpus[op.target]
	dst.markDirty(p)
	dst.republish = true
	if op.wakelist {
		if op.notified {
			s.queueWakeOf(op, deferredWake{dst: dst, wl: true, task: p, flags: op.flags, ev: event{t: op.t + op.lag}})
			return
		}
		s.wakelistAdd(dst, waker, p, op.t+op.lag, op.flags)
		return
	}
	ev := event{t: op.t + op.lag, kind: evMsg, msg: &message{kind: msgEnqueue, task: p, flags: op.flags, from: op.from, locked: op.locked}}
	if op.notified {
		// The enqueue is visible when the waker's rq_unlock() is done,
		// stall included: the weave says when (deliverWake).
		s.queueWakeOf(op, deferredWake{dst: dst, ev: ev})
		return
	}
	s.pushEnqueue(dst, ev)
}

// pushEnqueue hands a direct remote enqueue to its target, at its time.
func (s *Sim) pushEnqueue(dst *RQ, ev event) {
	if ev.t < dst.lastEvent {
		// The target handled an event (a scheduling point) after the
		// enqueue's time without seeing the wakee: the message is late
		// by up to an epoch (DESIGN.md "Virtual time").
		s.LateMsgs++
		s.LateNS += dst.lastEvent - ev.t
	}
	dst.events.push(ev)
}

// applySignal handles a signal to a task the signaller saw not waiting on
// the semaphore: if it has gone to sleep on it since, the signaller's
// try_to_wake_up() is completed here (ttwuRaced); else the signal stays
// pending (asleepOn's other branch).
func (s *Sim) applySignal(op *remoteOp) {
	p := op.task
	if !asleepOn(p.state, p.waitingOn, op.sem) {
		p.leavePending(op.sem, op.pendingSig())
		return
	}
	s.ttwuRaced(op)
}

// ttwuRaced completes at the barrier, on the waker's behalf and as its
// debt, the try_to_wake_up() of a signal whose waker saw the wakee running
// (published at the last barrier) while it went to sleep in the same epoch.
// The waker's path is the kernel's for where the wakee was at the signal's
// time (core.c v5.15/v6.6: try_to_wake_up()):
//   - still on_cpu (switching out): "If the owning (remote) CPU is still in
//     the middle of schedule() with this task as prev", ttwu_queue_wakelist()
//     with WF_ON_CPU onto its CPU when ttwu_queue_cond() allows; else the
//     waker spins on p->on_cpu (smp_cond_load_acquire()) until the switch is
//     done and goes on as below;
//   - off the CPU: select_task_rq() and ttwu_queue(): the wake list, or the
//     target's rq lock and ttwu_do_activate() under it.
//
// The costs the waker's CPU would have paid (OpTTWU, select, the direct
// path's lock and enqueue) become its debt. A signal that came before the
// wakee's dequeue is a ttwu_runnable() in the kernel (RacedRunnable):
// simplified, it is woken as one still on_cpu.
func (s *Sim) ttwuRaced(op *remoteOp) {
	p := op.task
	if p.se.SchedDelayed {
		s.ttwuRacedDelayed(op)
		return
	}
	waker := s.cpus[op.from]
	prev := p.cpu
	t := op.t
	waker.Stats.RacedWakeups++
	if t < p.sleptAt {
		waker.Stats.RacedRunnable++
		t = p.sleptAt
	}
	c := *op
	c.kind, c.target, c.recent, c.locked, c.notified, c.wakelist, c.delayed, c.raced, c.lag = opWake, prev, -1, false, false, false, false, false, 0
	c.signalAt = op.t
	waker.atBarrierLogged(func() {
		// The wakee is woken (enqueued, or on the wake list) after the
		// waker's work for it, as on the waker's own path (tryToWakeUp:
		// its post carries the clock past OpTTWU, select_task_rq() and
		// the enqueue under the target's lock). Here that work is debt,
		// so its length (spent) is the wakeup's lag behind the signal.
		debt0 := waker.debt
		spent := func() int64 { return waker.debt - debt0 }
		waker.cost(hwmodel.OpTTWU)
		if t < p.offCPUAt && prev != waker.cpu && s.feat.Has(TTWU_QUEUE) && waker.ttwuQueueCond(p, prev, true) {
			waker.ttwuStatRQ(prev)
			waker.Stats.OnCPUWakeups++
			waker.Stats.WakelistWakeups++
			c.t, c.lag, c.wakelist = t, spent(), true
			s.claimWake(&c)
			return
		}
		if t < p.offCPUAt {
			waker.addDebt(SymTryToWakeUp, p.offCPUAt-t)
			t = p.offCPUAt
			debt0 = waker.debt // the spin is in t now
		}
		waker.sisRecent = -1
		// The wakee as its owner sees it: the barrier sees every CPU exactly.
		cpu := waker.selectTaskRQ(p, s.cpus[prev].exactTaskSnap(p), prev, op.flags)
		c.flags |= waker.affineFlags
		if cpu != prev {
			c.flags |= wfMigrated
		}
		c.target, c.recent = cpu, waker.sisRecent
		waker.ttwuStatRQ(cpu)
		if cpu != waker.cpu && s.feat.Has(TTWU_QUEUE) && waker.ttwuQueueCond(p, cpu, false) {
			waker.Stats.WakelistWakeups++
			c.t, c.lag, c.wakelist = t, spent(), true
			s.claimWake(&c)
			return
		}
		if c.locked = waker.ttwuDirectAt(s.cpus[cpu], p); c.locked {
			waker.Stats.DirectWakeups++
			// The enqueue is seen when the rq_unlock() completes, its
			// misses under the target's lock included, as a direct
			// wakeup's is (markWakeupNotify): the weave serves the
			// accesses just logged at racedAt, and deliverWake moves
			// the wakeup by what they took.
			waker.log.MarkNotify()
			c.notified, c.raced, c.racedAt = true, true, waker.now
		}
		c.t, c.lag = t, spent()
		s.claimWake(&c)
	})
}

// wakelistAdd puts p on dst's wake list as of time t (its llist_add()):
// it joins the batch the next drain will take, or opens a new one,
// sending an IPI unless the target idles polling (TIF_POLLING_NRFLAG:
// set_nr_if_polling() avoids the IPI and the monitored write wakes it).
//
// A batch ends at its drain's llist_del_all() (sched_ttwu_pending(),
// core.c v6.6), wlCut: a wakeup added after it finds the list empty, and
// __smp_call_single_queue() (smp.c v6.6) sends an IPI only then, so it
// opens the next batch with its own IPI. The barrier delivers wakeups late
// (the weave serves the llist_add() when it does), so the cut is by time:
// one added before the last drain's cut (wlLastDrain) belongs to the batch
// that drain took, and the target drains it late, as that batch's handler
// would have, with no IPI.
func (s *Sim) wakelistAdd(dst, waker *RQ, p *Task, t int64, flags int) {
	if dst.wlDrainAt > 0 {
		// A drain is on its way. Its cut takes this wakeup if added
		// before it, or while the target, held by the weave, has not
		// got there (it cuts when it does). Otherwise the wakeup joins
		// the batch opened after the cut, or opens it: this waker's IPI,
		// the next batch drained after the first (schedTTWUPending).
		// The target is then busy with what that drain woke: an IPI,
		// not a poll.
		next := dst.wlNextAt > 0
		if !next && t > dst.wlCut && !dst.weaveBehind {
			next = true
			dst.wlNextAt = t + s.ipiDelay
			dst.wlNextFrom = waker.cpu
			waker.sendIPIDebt()
		}
		dst.wlBatch = append(dst.wlBatch, wlEntry{task: p, flags: flags, next: next})
		return
	}
	dst.wlBatch = append(dst.wlBatch, wlEntry{task: p, flags: flags})
	at, polled, late := t, false, false
	// core.c v6.6 send_call_function_single_ipi(): no IPI to a polling
	// idle CPU (set_nr_if_polling()), which its monitor wakes.
	ipi := dst.curr != nil || dst.nrRunning > 0 || !s.idlePolls
	switch {
	case t < dst.wlLastDrain:
		// The kernel would have drained it with the last batch, which
		// this CPU already ran: drain again as soon as it can, as part
		// of that batch's handler (no IPI sent or received), cut where
		// that batch was.
		at = max(dst.now, dst.lastEvent, dst.wlLastDrain)
		ipi, late = false, true
		s.LateMsgs++
		s.LateNS += dst.wlLastDrain - t
	case ipi:
		at = t + s.ipiDelay
		waker.sendIPIDebt()
	default:
		at, polled = t+s.pollDelay, true
	}
	dst.wlDrainAt = max(at, 1)
	dst.wlCut = dst.wlDrainAt
	if late {
		dst.wlCut = dst.wlLastDrain
	}
	dst.events.push(event{t: dst.wlDrainAt, kind: evMsg, msg: &message{kind: msgDrain, ipi: ipi, from: waker.cpu, polled: polled, late: late}})
}

type wlEntry struct {
	task  *Task
	flags int
	next  bool // added after the pending drain's llist_del_all()
}

// ttwuRemoteEnqueue applies a direct remote wakeup (msgEnqueue) on the
// target: the waker took our rq lock and did ttwu_do_activate() under
// it, and paid for it (tryToWakeUp); we only apply the state change, at
// the time its rq_unlock() completed (deferredWake).
func (rq *RQ) ttwuRemoteEnqueue(m *message) {
	p := m.task
	if p.state != TaskWaking || p.cpu != rq.cpu {
		panic(fmt.Sprintf("emu: CPU %d: remote enqueue of %v in state %v on CPU %d", rq.cpu, p, p.state, p.cpu))
	}
	// The waker did this work under our lock; we only apply it.
	apply := func() {
		rq.onBehalf(rq.sim.cpus[m.from], func() {
			rq.lockRQ(SymTryToWakeUp)
			rq.updateRQClock()
			rq.remoteAt = rq.lastEvent // the waker's time (step)
			rq.ttwuDoActivate(p, m.flags)
			rq.remoteAt = 0
			rq.unlockRQ(SymTryToWakeUp)
		})
	}
	if m.locked {
		rq.withoutWakerLines(apply)
		return
	}
	apply()
}

// schedTTWUPending is core.c: sched_ttwu_pending(): activate the batch of
// queued wakeups under our own lock.
func (rq *RQ) schedTTWUPending(late bool) {
	defer rq.leave(rq.enter(SymSchedTTWUPending))
	// llist_del_all(): from here a new wakeup finds the list empty. A
	// late drain (wakelistAdd) takes what the last one would have: that
	// one's llist_del_all() is the last.
	if !late {
		rq.wlLastDrain = rq.now
	}
	rq.wake.Drain(rq.log, rq.now, rq.site(SymSchedTTWUPending))
	rq.lockRQ(SymSchedTTWUPending)
	rq.updateRQClock()
	// The wakeups added after this drain's cut (wakelistAdd sorted them
	// by its time, wlCut) are the next batch: they stay.
	k := 0
	for _, e := range rq.wlBatch {
		if e.next {
			e.next = false
			rq.wlBatch[k] = e
			k++
			continue
		}
		rq.spend(SymSchedTTWUPending, 0)
		rq.ttwuDoActivate(e.task, e.flags)
		rq.traceWakeupDone()
	}
	clear(rq.wlBatch[k:])
	rq.wlBatch = rq.wlBatch[:k]
	rq.wlDrainAt = 0
	if k > 0 {
		rq.wlDrainAt, rq.wlCut = rq.wlNextAt, rq.wlNextAt
		rq.events.push(event{t: rq.wlDrainAt, kind: evMsg, msg: &message{kind: msgDrain, ipi: true, from: rq.wlNextFrom}})
	}
	rq.wlNextAt = 0
	rq.unlockRQ(SymSchedTTWUPending)
}

// ttwuDoActivate is core.c: ttwu_do_activate().
func (rq *RQ) ttwuDoActivate(p *Task, wakeFlags int) {
	if p.se.SchedDelayed {
		rq.ttwuRequeueDelayed(p, wakeFlags)
		return
	}
	flags := enqueueWakeup
	if wakeFlags&wfAffinity != 0 {
		// move_queued_task(): activate_task(rq, p, 0), not a wakeup.
		flags = 0
	}
	if wakeFlags&wfMigrated != 0 {
		flags |= enqueueMigrated
	}
	rq.activateTask(p, flags)
	p.setState(TaskRunnable)
	if wakeFlags&wfAffinity == 0 {
		// move_queued_task()'s activate_task() logs no wakeup.
		rq.traceWakeup(p, trWakeup)
	}
	rq.wakeupPreempt(p, wakeFlags)
	rq.updateAvgIdle()
}

// idleClaim is the first wake-list wakeup of the current barrier onto a
// CPU whose snapshot showed it idle: when, and from where. Barrier only.
type idleClaim struct {
	epoch int64
	t     int64
	from  int
}

// redirectClaimedIdle is what a later waker would have seen of an earlier
// one's wake-list claim on an idle CPU (core.c v6.6: rq->ttwu_pending,
// set before the IPI, makes idle_cpu() false): the barrier moves the later
// wakeup of the epoch to the next CPU in the target's LLC, in
// select_idle_cpu()'s wrap order and SIS_UTIL budget, that is idle and
// unclaimed; with none it stays. Simplified: no retry of prev and
// recent_used_cpu, the extra scan not charged, direct wakeups not moved.
func (s *Sim) redirectClaimedIdle(op *remoteOp) {
	target := op.target
	if !op.wakelist || op.locked || target == op.from || !s.snap[target].at(op.t).idle {
		return
	}
	c := &s.idleClaims[target]
	if c.epoch != s.Epochs {
		*c = idleClaim{epoch: s.Epochs, t: op.t, from: op.from}
		return
	}
	if float64(op.t-c.t) < s.m.Lat.Transfer[s.m.Class(op.from, c.from)] {
		return // both read it idle before either write arrived
	}
	llc := s.llc[target]
	if llc.sd == nil {
		return
	}
	span := llc.sd.Span
	nr := len(span)
	if s.feat.Has(SIS_UTIL) {
		nr = s.llcSnap[llc.id].nrIdleScan
	}
	start := wrapStart(span, target)
	for k := 0; k < len(span) && nr > 0; k++ {
		cpu := span[(start+k)%len(span)]
		if cpu == target || !op.task.allowedOn(cpu) {
			continue
		}
		nr--
		if s.snap[cpu].at(op.t).idle && s.idleClaims[cpu].epoch != s.Epochs {
			op.target = cpu
			s.idleClaims[cpu] = idleClaim{epoch: s.Epochs, t: op.t, from: op.from}
			return
		}
	}
}
