package emu

import (
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// The direct remote wakeup's critical section, as the waker runs it
// (core.c v6.6: ttwu_queue() when ttwu_queue_wakelist() declines):
//
//	rq_lock(rq, &rf);          // the target's rq->__lock: line 0
//	update_rq_clock(rq);       // writes rq->clock
//	ttwu_do_activate(rq, p, wake_flags, &rf);
//	    activate_task()        // enqueue_task(): uclamp_rq_inc() when
//	                           // sched_uclamp_used (both rq->uclamp
//	                           // lines), then enqueue_task_fair(): update_curr(),
//	                           // update_load_avg() on each level, the
//	                           // root's rq->cfs.avg last; add_nr_running()
//	    wakeup_preempt()       // reads rq->curr
//	rq_unlock(rq, &rf);
//
// Every store there is the waker's, to the target's lines, and the lock
// is held until the last one retires: the lock's hold time is the base
// cost of the work plus the misses on those lines, and a waker queued on
// the lock waits for all of it. So the waker logs them, in its epoch,
// between its Lock and Unlock of the target's lock; the target, applying
// the state change later (ttwuRemoteEnqueue), logs none of them again:
// in the kernel it takes no lock and touches none of its lines for a
// wakeup done to it. It takes the lines back when it next uses them (its
// next rq_lock in __schedule(), the rq->curr store after a pick).
//
// Simplified: rq->clock is modeled on rq->curr's line (in v6.6's struct
// rq it follows curr, idle, stop, next_balance, prev_mm and
// clock_update_flags); clock_task/clock_pelt, on their own line, are not
// modeled. The rq->uclamp lines follow from the wakee's clamps alone
// (contention.UclampRQ.LogIncTask), so the waker logs them and pays
// OpUclamp (ttwuDirectUclampInc); the target applies the buckets. The
// lines the waker cannot know in its epoch stay the target's to log at
// the apply: tg->load_avg (update_tg_load_avg() writes it only past a
// threshold the target's state decides) and the removed-load line.
// nr_running's store
// (add_nr_running()) is on the lock's own line, which the waker holds:
// it costs nothing more and is not logged.

// ttwuDirectLock takes target's rq lock for a direct wakeup and writes
// its clock: rq_lock() + update_rq_clock(). sym is the path's: a waker's
// try_to_wake_up(), or the stopper's migration_cpu_stop() (affinity.go),
// which takes the destination's lock the same way in move_queued_task().
func (rq *RQ) ttwuDirectLock(target *RQ, sym Symbol) {
	target.lock.Lock(rq.log, rq.now, rq.site(sym))
	rq.accessCost(sym, hwmodel.Lock)
	rq.Stats.RemoteLockAcq++
	// update_rq_clock(): rq->clock (on rq->curr's line here). The
	// wakeup_preempt() read of rq->curr later hits the same copy.
	rq.log.Record(rq.now, target.currLine, hwmodel.Write, rq.site(sym))
	rq.accessCost(sym, hwmodel.Write)
}

// ttwuDirectEnqueue is activate_task() of p onto target done by this CPU
// under target's lock (taken when remote): enqueue_task()'s
// uclamp_rq_inc(), then enqueue_task_fair() over p's hierarchy at the
// path's base costs, the root's rq->cfs.avg store logged for a remote
// target.
func (rq *RQ) ttwuDirectEnqueue(target *RQ, p *Task, remote bool) {
	rq.ttwuDirectUclampInc(target, p, remote)
	rq.cost(hwmodel.OpEnqueue)
	for d := p.group.depth; d >= 0; d-- {
		rq.cost(hwmodel.OpUpdateCurr)
		rq.cost(hwmodel.OpUpdateLoadAvg)
		if d > 0 {
			rq.cost(hwmodel.OpCfsGroup)
		} else if remote {
			rq.ttwuDirectRootAvg(target)
		}
	}
}

// ttwuDirectUclampInc is enqueue_task()'s uclamp_rq_inc() of p on target,
// done by the waker under target's lock (core.c v5.15, v6.6: before the
// class's enqueue): its cost is the waker's, and so are target's two
// rq->uclamp lines when logTarget (a remote target; the apply leaves them
// out, withoutWakerLines). A local wakeup's apply logs its own lines.
// Nothing while the sched_uclamp_used static key is off.
func (rq *RQ) ttwuDirectUclampInc(target *RQ, p *Task, logTarget bool) {
	if !rq.sim.uclampUsed {
		return
	}
	if logTarget {
		lo, hi := p.uclampEffective()
		target.uclamp.LogIncTask(rq.log, rq.now, rq.site(SymUclampRQInc), lo, hi)
	}
	rq.costAs(SymUclampRQInc, hwmodel.OpUclamp)
}

// ttwuDirectRootAvg is enqueue_task_fair()'s update_load_avg() of the
// root cfs_rq done by the waker: a store to target's rq->cfs.avg.
func (rq *RQ) ttwuDirectRootAvg(target *RQ) {
	rq.log.Record(rq.now, target.avgLine, hwmodel.Write, rq.site(SymUpdateLoadAvg))
	rq.accessCost(SymUpdateLoadAvg, hwmodel.Write)
}

// ttwuDirectUnlock is rq_unlock() of the direct wakeup (or of the
// stopper's move: sym).
func (rq *RQ) ttwuDirectUnlock(target *RQ, sym Symbol) {
	target.lock.Unlock(rq.log, rq.now, rq.site(sym))
}

// ttwuDirectAt is ttwu_queue()'s direct path as a barrier runs it for
// this waker: rq_lock() of target when it is another CPU, the enqueue,
// rq_unlock(); it reports whether the target's lock was taken (the
// remoteOp's locked).
func (rq *RQ) ttwuDirectAt(target *RQ, p *Task) bool {
	remote := target != rq
	if remote {
		rq.ttwuDirectLock(target, SymTryToWakeUp)
	}
	rq.ttwuDirectEnqueue(target, p, remote)
	if remote {
		rq.ttwuDirectUnlock(target, SymTryToWakeUp)
	}
	return remote
}

// withoutWakerLines runs fn, a direct wakeup's apply on this CPU, with
// its accesses to the lines the waker logged (this rq's lock line, the
// rq->curr/clock line, rq->cfs.avg and the two rq->uclamp lines) left out
// of the log: the waker made them under the lock. The rest (tg->load_avg,
// removed load) are logged as this CPU's, as before. The lock is still
// taken physically, as the model's nr_running store requires.
func (rq *RQ) withoutWakerLines(fn func()) {
	own := rq.toScratch()
	fn()
	lock, curr, avg := rq.lock.Line(), rq.currLine, rq.avgLine
	uc := rq.uclamp.Lines()
	rq.fromScratch(own, rq, func(e weave.Entry) (int64, bool) {
		if e.Line == lock || e.Line == curr || e.Line == avg || e.Line == uc[0] || e.Line == uc[1] {
			return 0, false
		}
		return max(e.T, own.Last()), true
	})
}
