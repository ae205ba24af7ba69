package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
)

// core.c's rules for one runqueue: the rq clock and lock, nr_running,
// resched_curr(), __schedule() and the class hooks it calls, the tick,
// and sched_info (stats.h). The engine that runs them is cpu.go.

// updateRQClock is core.c: update_rq_clock() with
// update_rq_clock_task()'s update_rq_clock_pelt().
func (rq *RQ) updateRQClock() {
	delta := rq.now - rq.clock
	rq.clock = rq.now
	rq.updateRQClockPelt(delta)
}

// lockRQ / unlockRQ take and release this CPU's own rq lock (the line is
// shared: remote wakers and load balancers take it too).
func (rq *RQ) lockRQ(sym Symbol) {
	rq.lock.Lock(rq.log, rq.now, rq.site(sym))
	rq.accessCost(sym, hwmodel.Lock)
}

func (rq *RQ) unlockRQ(sym Symbol) {
	rq.lock.Unlock(rq.log, rq.now, rq.site(sym))
}

// setNrRunning writes rq->nr_running (on the lock line, read remotely by
// idle_cpu() and load balancing).
func (rq *RQ) addNrRunning(d int, sym Symbol) {
	// NrRunningNS integrates rq->nr_running over the CPU's clock: what
	// /proc/sched_debug's snapshots of it sample (delayed tasks included,
	// as they count in nr_running). The integral is closed at each change;
	// Counters() adds each CPU's open interval up to the sim's time.
	if rq.now > rq.nrRunningSince {
		rq.Stats.NrRunningNS += rq.nrRunningOpenNS(rq.now)
		rq.nrRunningSince = rq.now
	}
	rq.nrRunning += d
	if rq.nrRunning < 0 {
		panic(fmt.Sprintf("emu: CPU %d: nr_running went negative", rq.cpu))
	}
	rq.lock.SetNrRunning(rq.log, rq.now, rq.site(sym), uint32(rq.nrRunning))
}

// nrRunningOpenNS is Stats.NrRunningNS's open part at now: nr_running
// times the time since it last changed (0 for a now not after it).
func (rq *RQ) nrRunningOpenNS(now int64) int64 {
	if dt := now - rq.nrRunningSince; dt > 0 {
		return int64(rq.nrRunning) * dt
	}
	return 0
}

// reschedCurr is core.c: resched_curr(): set need_resched. Asked by
// another CPU (while applying its wakeup), the reschedule also needs the
// IPI (or a polling idle CPU's wakeup) to reach this CPU before it acts.
func (rq *RQ) reschedCurr() {
	if rq.needResched {
		return
	}
	rq.needResched = true
	if by := rq.pay.paidBy; by != nil {
		delay, polled := rq.sim.ipiDelay, false
		switch {
		case by == rq:
			delay = 0 // our own pull, landing at a barrier
		case rq.curr == nil && rq.sim.idlePolls:
			delay, polled = rq.sim.pollDelay, true
		}
		rq.events.push(event{t: rq.now + delay, kind: evMsg, msg: &message{kind: msgResched, from: by.cpu, polled: polled}})
	}
}

// schedule is core.c: __schedule(): deactivate prev if it blocks, pick the
// next task, switch.
func (rq *RQ) schedule(block bool) {
	defer rq.leave(rq.enter(SymSchedule))
	prev := rq.curr
	rq.Stats.SchedCount++
	rq.cost(hwmodel.OpSchedule)
	rq.lockRQ(SymSchedule)
	rq.updateRQClock()
	if prev != nil && block {
		prev.setState(TaskSleeping)
		if prev.waitingOn == affinityWait {
			// The stopper's move_queued_task(): deactivate_task(rq,
			// p, 0), not a sleep, and the enqueue on the new CPU.
			rq.migrationCPUStop(prev)
		} else {
			prev.sleptAt = rq.now
			rq.deactivateTask(prev, dequeueSleep)
		}
	}
	next := rq.pickNextTask(prev)
	rq.needResched = false
	rq.switchedOut = nil
	if next == nil && block && prev != nil && prev.state == TaskSleeping {
		rq.switchedOut = prev
	}
	if next != prev {
		rq.Stats.NrSwitches++
		if prev != nil {
			switch {
			case prev.state == TaskDead:
				// do_task_dead(): exitTask dequeued it already.
			case block:
				prev.Stats.NrVolSwitch++
			default:
				prev.Stats.NrInvolSwitch++
				prev.setState(TaskRunnable)
			}
			rq.schedInfoDepart(prev)
		}
		if next != nil {
			next.setState(TaskRunning)
			rq.schedInfoArrive(next)
		} else {
			rq.Stats.SchedGoidle++
			// pick_next_task_fair()'s idle exit: "rq is about to be
			// idle, check if we need to update the lost_idle_time of
			// clock_pelt".
			rq.updateIdleRQClockPelt()
		}
		rq.traceSwitch(prev, next)
		rq.switchMM(next)
		rq.curr = next
		rq.log.Record(rq.now, rq.currLine, hwmodel.Write, rq.site(SymSchedule))
		if prev != nil {
			prev.offCPUAt = rq.now
			rq.markDirty(prev)
		}
		if next != nil {
			rq.markDirty(next)
		} else {
			rq.updateIdleCore()
		}
	}
	rq.unlockRQ(SymSchedule)
}

// switchMM is the mm half of core.c: context_switch() (v6.6): idle
// borrows the previous task's mm (enter_lazy_tlb()), and
// switch_mm_irqs_off() does nothing when the next task's mm is the one the
// CPU has loaded (threads of one process); a switch to another process's
// mm pays the CR3/TTBR0 write and the refill after it.
func (rq *RQ) switchMM(next *Task) {
	if next == nil || next.mm == 0 || next.mm == rq.loadedMM {
		return
	}
	if rq.loadedMM != 0 {
		rq.cost(hwmodel.OpSwitchMM)
	}
	rq.loadedMM = next.mm
}

// pickNextTask is core.c: __pick_next_task() with only the fair and idle
// classes: the fair pick, or put_prev_task() and the idle task.
func (rq *RQ) pickNextTask(prev *Task) *Task {
	rq.cost(hwmodel.OpPickNext)
	p := rq.pickNextTaskFair(prev)
	if p == nil {
		if prev != nil && rq.cfs.curr != nil {
			rq.putPrevTaskFair(prev)
		}
		rq.newidleBalance()
	}
	return p
}

// activateTask / deactivateTask are core.c: activate_task() and
// deactivate_task().
func (rq *RQ) activateTask(p *Task, flags int) {
	p.queuedAt = rq.now
	rq.enqueueTask(p, flags)
}

func (rq *RQ) deactivateTask(p *Task, flags int) { rq.dequeueTask(p, flags) }

// enqueueTask is core.c: enqueue_task() (v6.6 order: uclamp first).
func (rq *RQ) enqueueTask(p *Task, flags int) {
	rq.Stats.Enqueues++
	if flags&enqueueRestore == 0 {
		rq.schedInfoEnqueue(p)
	}
	rq.uclampRQInc(p)
	rq.enqueueTaskFair(p, flags)
}

// dequeueTask is core.c: dequeue_task().
func (rq *RQ) dequeueTask(p *Task, flags int) {
	rq.Stats.Dequeues++
	if flags&dequeueSave == 0 {
		rq.schedInfoDequeue(p)
	}
	rq.uclampRQDec(p)
	rq.dequeueTaskFair(p, flags)
}

// wakeupPreempt is core.c: wakeup_preempt() (check_preempt_curr() before
// v6.8): an idle CPU always reschedules, a fair curr asks the fair class.
func (rq *RQ) wakeupPreempt(p *Task, wakeFlags int) {
	if rq.curr == nil {
		rq.reschedCurr()
		return
	}
	rq.checkPreemptWakeup(p, wakeFlags)
}

// wakeUpNewTask is core.c: wake_up_new_task(): the first enqueue, with
// ENQUEUE_INITIAL so the entity gets PLACE_DEADLINE_INITIAL / START_DEBIT.
func (rq *RQ) wakeUpNewTask(p *Task) {
	rq.lockRQ(SymTryToWakeUp)
	rq.updateRQClock()
	rq.taskForkFair(p)
	rq.activateTask(p, enqueueInitial)
	p.setState(TaskRunnable)
	rq.traceWakeup(p, trWakeupNew)
	rq.wakeupPreempt(p, 0)
	rq.unlockRQ(SymTryToWakeUp)
}

// schedTick is core.c: sched_tick() (scheduler_tick()).
func (rq *RQ) schedTick() {
	defer rq.leave(rq.enter(SymSchedTick))
	rq.cost(hwmodel.OpTick)
	rq.lockRQ(SymSchedTick)
	rq.updateRQClock()
	if rq.curr != nil {
		rq.taskTickFair(rq.curr)
	}
	rq.unlockRQ(SymSchedTick)
	rq.triggerLoadBalance()
}

// --- sched_info (kernel/sched/stats.h) ---

// infoClock is the rq clock sched_info reads: another CPU's time while it
// works on this rq (remoteAt) if this CPU's clock is ahead of it.
func (rq *RQ) infoClock() int64 {
	if rq.remoteAt > 0 && rq.remoteAt < rq.clock {
		return rq.remoteAt
	}
	return rq.clock
}

// schedInfoEnqueue is sched_info_enqueue(). A remote waker's enqueue
// starts the wait at the waker's time (infoClock). A migrated task's wait
// goes on from its detach (the kernel's source and destination rq clocks
// agree; here a pull applied at the barrier can find the destination's
// clock ahead of the source's by up to an epoch, and the gap between them
// is still the task's wait: continuity, simplified the other way round,
// a destination behind the source starts the wait at its own clock).
func (rq *RQ) schedInfoEnqueue(p *Task) {
	if p.lastQueued < 0 {
		p.lastQueued = rq.infoClock()
		if d := p.detachedAt; d >= 0 && d < p.lastQueued {
			p.lastQueued = d
		}
	}
	p.detachedAt = -1
}

// schedInfoDequeue is sched_info_dequeue(): a queued task dequeued (a
// migration) ends its wait on this rq, at the puller's time when another
// CPU's balance detaches it (infoClock).
func (rq *RQ) schedInfoDequeue(p *Task) {
	if p.lastQueued >= 0 {
		at := max(rq.infoClock(), p.lastQueued)
		d := at - p.lastQueued
		p.lastQueued = -1
		p.Stats.RunDelay += d
		rq.Stats.RunDelay += d
		p.waitCarry += d
		p.detachedAt = at
	}
}

func (rq *RQ) schedInfoArrive(p *Task) {
	if p.lastQueued >= 0 {
		d := rq.clock - p.lastQueued
		p.lastQueued = -1
		p.Stats.RunDelay += d
		rq.Stats.RunDelay += d
		rq.sim.recordWait(p, d)
		rq.traceStatWait(p, d+p.waitCarry)
		p.waitCarry = 0
	}
	p.lastArrival = rq.clock
	p.Stats.Pcount++
	rq.Stats.Pcount++
}

func (rq *RQ) schedInfoDepart(p *Task) {
	rq.Stats.RQCPUTime += rq.clock - p.lastArrival
	if p.state == TaskRunnable || p.state == TaskRunning {
		rq.schedInfoEnqueue(p)
	}
}
