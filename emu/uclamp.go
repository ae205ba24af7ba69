package emu

import (
	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
)

// uclamp: per-task utilization clamps aggregated per runqueue in buckets
// (core.c: uclamp_rq_inc(), uclamp_rq_dec()). All of it sits behind the
// sched_uclamp_used static key: off until a task asks for a clamp (or the
// UCLAMP feature turns it on), and never turned off again, as in the
// kernel. Then every enqueue and dequeue touches both rq->uclamp lines
// (contention.UclampRQ), and costs the footprint of doing so (OpUclamp),
// paid by the CPU that runs it: the rq's owner on its own enqueues and
// dequeues (and the wake list's), the waker on a direct remote wakeup
// (core.c: ttwu_do_activate() -> activate_task() -> enqueue_task() ->
// uclamp_rq_inc() under the target's lock, v5.15 and v6.6), the balancing
// CPU on a load-balance pull (detach_task() and attach_task() on the
// source's and destination's rqs).

// uclampEffective is uclamp_eff_value() for both ids: the task's request,
// or the defaults (min 0, max 1024), each at most the system default
// clamp (uclamp_eff_get(): "System default restrictions always apply";
// kernel.sched_util_clamp_min / _max). Task-group clamps are not modeled
// (every group has the default [0, 1024]).
func (t *Task) uclampEffective() (lo, hi uint32) {
	lo, hi = 0, contention.SchedCapacityScale
	if t.hasClamp {
		lo, hi = t.uclampReq[contention.UclampMin], t.uclampReq[contention.UclampMax]
	}
	return min(lo, t.sim.tun.UclampUtilMin), min(hi, t.sim.tun.UclampUtilMax)
}

// uclampRQInc is core.c: uclamp_rq_inc().
func (rq *RQ) uclampRQInc(p *Task) {
	if !rq.sim.uclampUsed {
		return
	}
	lo, hi := p.uclampEffective()
	rq.uclamp.IncTask(rq.log, rq.now, rq.site(SymUclampRQInc), lo, hi)
	// Charged as the payer says: a direct waker (ttwuDirectUclampInc)
	// or a load balancer that did this under our lock paid for it.
	rq.costAs(SymUclampRQInc, hwmodel.OpUclamp)
	p.uclampActive = true
	p.uclampVal = [2]uint32{lo, hi}
}

// uclampRQDec is core.c: uclamp_rq_dec(): decrements what the enqueue
// incremented (the values stay with the task while it is queued).
func (rq *RQ) uclampRQDec(p *Task) {
	if !p.uclampActive {
		return
	}
	rq.uclamp.DecTask(rq.log, rq.now, rq.site(SymUclampRQDec), p.uclampVal[0], p.uclampVal[1])
	rq.costAs(SymUclampRQDec, hwmodel.OpUclamp)
	p.uclampActive = false
}
