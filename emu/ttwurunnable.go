package emu

import "github.com/rqemu/rqemu/hwmodel"

// A wakeup of a task that is still queued, sched_delayed (v6.12
// DELAY_DEQUEUE, delayed.go), takes core.c v6.12 try_to_wake_up()'s
// first branch: "if (READ_ONCE(p->on_rq) && ttwu_runnable(p,
// wake_flags))": under the task's rq lock, enqueue_task(ENQUEUE_DELAYED)
// (requeue_delayed_entity()), wakeup_preempt() and TASK_RUNNING; no
// select_task_rq(), no wake list, no migration. The waker decides from
// what it sees (the published task, or its own exactly); a wakee picked
// and dequeued since is woken the usual way at the barrier (ttwuRaced).

// ttwuRunnableDelayed is the waker's ttwu_runnable() of p, delayed as it
// sees it: on its own runqueue at once; on another CPU's it takes that
// rq lock and does the requeue's work there (as the direct path's waker
// does, ttwudirect.go), and the barrier applies it (claimDelayed).
// Simplified: the requeue is charged as an enqueue.
func (rq *RQ) ttwuRunnableDelayed(p *Task, sem *Sem, stamp int64, wakeFlags int, tr int32) {
	cpu := p.cpu
	rq.ttwuStatRQ(cpu)
	rq.Stats.DelayedWakeups++
	if cpu == rq.cpu {
		rq.traceTTWULocal(tr)
		rq.ttwuStatTask(p, cpu, wakeFlags)
		rq.ttwuLocalActivate(p, sem, stamp, wakeFlags)
		return
	}
	target := rq.sim.cpus[cpu]
	rq.ttwuDirectLock(target, SymTryToWakeUp)
	rq.wokeTo = append(rq.wokeTo, cpu)
	rq.ttwuDirectEnqueue(target, p, true)
	rq.ttwuDirectUnlock(target, SymTryToWakeUp)
	op := remoteOp{kind: opWake, task: p, target: cpu, flags: wakeFlags, sem: sem, stamp: stamp, trace: tr, trCtx: traceWho{task: rq.curr}, locked: true, delayed: true}
	op.notified = rq.markWakeupNotify()
	rq.traceTTWUDirect(tr, p, cpu)
	rq.post(op)
}

// claimDelayed is claimWake for a wakee that is, or was seen, delayed; it
// reports whether it handled op. One still delayed is requeued on its CPU
// (msgEnqueue, applied by ttwuDoActivate); whatever path its waker took
// (one that saw it otherwise goes there all the same, simplified). One
// that its CPU picked and dequeued since the waker saw it has slept for
// good: ttwu_runnable() finds it off the runqueue and try_to_wake_up()
// goes on, completed here as the waker's debt (ttwuRaced).
func (s *Sim) claimDelayed(op *remoteOp) bool {
	p := op.task
	if !p.se.SchedDelayed {
		if !op.delayed {
			return false
		}
		if op.notified {
			s.queueWakeOf(op, deferredWake{dropped: true})
		}
		c := *op
		c.delayed = false
		s.ttwuRaced(&c)
		return true
	}
	dst := s.cpus[p.cpu]
	s.touch(dst)
	s.touch(s.cpus[op.from])
	s.traceClaim(op, false)
	p.wokenBy(op.sem, op.stamp)
	p.setState(TaskWaking)
	p.ttwuStatTask(p.cpu, op.from, op.flags)
	dst.markDirty(p)
	dst.republish = true
	ev := event{t: op.t, kind: evMsg, msg: &message{kind: msgEnqueue, task: p, flags: op.flags, from: op.from, locked: op.locked}}
	if op.notified {
		s.queueWakeOf(op, deferredWake{dst: dst, ev: ev})
		return true
	}
	s.pushEnqueue(dst, ev)
	return true
}

// ttwuRacedDelayed is ttwuRaced for a wakee that went to sleep delayed in
// the epoch its waker saw it running: the waker's ttwu_runnable(),
// completed at the barrier as its debt.
func (s *Sim) ttwuRacedDelayed(op *remoteOp) {
	p := op.task
	waker := s.cpus[op.from]
	waker.Stats.RacedWakeups++
	c := *op
	c.kind, c.target, c.recent, c.locked, c.notified, c.wakelist, c.delayed = opWake, p.cpu, -1, false, false, false, true
	c.t = max(op.t, p.sleptAt)
	waker.atBarrierLogged(func() {
		waker.cost(hwmodel.OpTTWU)
		waker.ttwuStatRQ(p.cpu)
		waker.Stats.DelayedWakeups++
		c.locked = waker.ttwuDirectAt(s.cpus[p.cpu], p)
		s.claimWake(&c)
	})
}

// ttwuRequeueDelayed is the wakee's CPU's part of ttwu_runnable() for a
// delayed task (core.c v6.12): enqueue_task(rq, p, ENQUEUE_DELAYED), then
// wakeup_preempt() (it is not on_cpu) and ttwu_do_wakeup().
func (rq *RQ) ttwuRequeueDelayed(p *Task, wakeFlags int) {
	rq.activateTask(p, enqueueDelayed)
	p.setState(TaskRunnable)
	rq.traceWakeup(p, trWakeup)
	rq.wakeupPreempt(p, wakeFlags)
}
