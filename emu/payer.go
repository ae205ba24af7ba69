package emu

import "github.com/rqemu/rqemu/weave"

// payer is who pays for the kernel work an RQ's code is doing, and so how
// cost() and accessCost() charge it, how a reschedule it asks for reaches
// the CPU (reschedCurr) and what it sees of the other CPUs (snapCPU,
// postOrApply). The zero value is the CPU itself in its epoch: costs go on
// its clock, posts wait for the barrier, other CPUs are seen as
// published. It is set only by onBehalf and atBarrier, for the length of
// one call, and restored after it (the two nest: an idle load balancer
// pulling for itself at the barrier).
type payer struct {
	// paidBy, when set, is the CPU that did this work and was charged for
	// it (a remote waker that enqueued under this CPU's lock, the
	// balancer that pulled or pushed a task, the idle load balancer
	// decaying this CPU's blocked load): nothing is charged here, and a
	// reschedule the work asks for needs paidBy's IPI to reach this CPU
	// (none when paidBy is this CPU, pulling for itself at a barrier).
	paidBy *RQ
	// barrier: the barrier runs this code on this CPU's behalf (NOHZ idle
	// balancing) with every goroutine stopped: costs become this CPU's
	// debt, posts apply at once, and every CPU is seen exactly.
	barrier bool
}

// onBehalf runs fn on this RQ as work that CPU actor did and paid for.
func (rq *RQ) onBehalf(actor *RQ, fn func()) {
	rq.sim.touch(rq)
	rq.sim.touch(actor)
	was := rq.pay
	rq.pay.paidBy = actor
	fn()
	rq.pay = was
}

// atBarrier runs fn as the barrier's work on this CPU's behalf.
func (rq *RQ) atBarrier(fn func()) {
	rq.sim.touch(rq)
	was := rq.pay
	rq.pay.barrier = true
	fn()
	rq.pay = was
}

// atBarrierLogged is atBarrier for work whose accesses go on this CPU's
// log (a wakeup the barrier completes for its waker): they are stamped
// after what the log holds already (the clock can be behind it at a
// barrier). The costs are debt, so the clock is only borrowed for the
// stamps and given back after.
func (rq *RQ) atBarrierLogged(fn func()) {
	clock := rq.now
	rq.now = rq.logNow()
	rq.atBarrier(fn)
	rq.now = clock
}

// toScratch sends this CPU's logging to its scratch Log until fromScratch
// and returns its own Log: for work whose accesses are not logged as made
// (a direct wakeup's apply, whose waker logged some of them; a pull's
// detach and attach, which the kernel runs on the balancing CPU).
func (rq *RQ) toScratch() *weave.Log {
	if rq.scratch == nil {
		rq.scratch = weave.NewLog(rq.cpu)
	}
	own := rq.log
	rq.log = rq.scratch
	return own
}

// fromScratch ends toScratch: own is this CPU's Log again, then every
// scratch entry that at keeps is appended, in order, to the Log of CPU
// to (this one or another) at the time at gives.
func (rq *RQ) fromScratch(own *weave.Log, to *RQ, at func(e weave.Entry) (int64, bool)) {
	rq.log = own
	for _, e := range rq.scratch.Entries() {
		if t, ok := at(e); ok {
			to.log.Append(t, e)
		}
	}
	rq.scratch.Reset()
}
