package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// The engine's CPU state machine, no kernel rule of its own: the clock
// (advance, catchUp), the costs and who pays them (spend, cost, payDebt),
// the event loop (step, nextEvent, handle) and the return to the task
// (resume). core.c's rules are in core.go.

// advance moves the clock forward to t, charging the time to idle or to
// curr's user code.
func (rq *RQ) advance(t int64) {
	if t <= rq.now {
		return
	}
	d := t - rq.now
	switch {
	case rq.mode == modeUser && rq.curr != nil:
		rq.profile[rq.curr.sym] += d
		rq.chargeLate(rq.curr.sym, d)
	default:
		rq.profile[SymIdle] += d
		rq.chargeLate(SymIdle, d)
	}
	rq.now = t
}

// catchUp brings the clock to virtual time t, a barrier, as far as the CPU
// has physically got there: an idle CPU idles to t (the gap absorbing its
// unpaid stall); a busy one's work runs later by its unpaid stall, so it
// reaches t - debt of its own timeline; one the weave is behind on stays
// where it is (its clock is already ahead of where it physically is).
func (rq *RQ) catchUp(t int64) {
	rq.sim.touch(rq)
	switch {
	case rq.weaveBehind:
	case rq.parked.held:
		// Stopped at a wait's check inside the epoch: it goes on from
		// there in the barrier's next pass (hold.go).
	case rq.mode == modeIdle:
		rq.payDebt(t - rq.now)
		rq.advance(t)
	default:
		rq.advance(t - rq.debt)
	}
}

// spend runs ns of kernel work charged to sym, slower while an SMT
// sibling is busy.
func (rq *RQ) spend(sym Symbol, ns int64) {
	if r := rq.smtRate(); r < 1000 {
		ns = ns * 1000 / r
	}
	rq.now += ns
	rq.profile[sym] += ns
	rq.chargeChain(sym, ns)
}

// smtRate is this CPU's speed, per mille of its speed alone: the preset's
// SMT yield while a sibling thread of its core is busy (as published at
// the last barrier), else 1000. The siblings share the core's execution
// resources; cache misses (the weave's stalls) are not slowed.
func (rq *RQ) smtRate() int64 {
	if rq.smtYield >= 1000 {
		return 1000
	}
	for _, c := range rq.m.SMTSiblings(rq.cpu) {
		if c != rq.cpu && !rq.publishedIdle(c) {
			return rq.smtYield
		}
	}
	return 1000
}

// startSegment runs curr's compute from now at the CPU's current speed.
func (rq *RQ) startSegment(t *Task) {
	t.inUser = true
	t.segStart = rq.now
	t.segRate = rq.smtRate()
	t.segGen++
	rq.pushRunEnd(t)
	rq.mode = modeUser
}

// cost runs a kernel operation at its preset base cost, charged as the
// payer says: nothing while applying work another CPU did and paid for,
// debt while the barrier runs this CPU's code.
func (rq *RQ) cost(op hwmodel.KernelOp) { rq.costAs(opSymbol[op], op) }

// costAs is cost charged to sym rather than to op's own symbol (one
// operation's cost paid by several kernel functions: OpUclamp by
// uclamp_rq_inc() and uclamp_rq_dec()).
func (rq *RQ) costAs(sym Symbol, op hwmodel.KernelOp) {
	switch {
	case rq.pay.paidBy != nil:
		return
	case rq.pay.barrier:
		rq.addDebt(sym, rq.m.Cost(op))
		return
	}
	rq.spend(sym, rq.m.Cost(op))
}

// logNow is the time to stamp a logged access with: the clock, never
// before the log's last entry (work done at a barrier).
func (rq *RQ) logNow() int64 { return max(rq.now, rq.log.Last()) }

// stampAt is the time to stamp an access this CPU makes for an event at
// t, found at a barrier: t, never past the clock (a wakeup the barrier
// completes for a waker, ttwuRaced, may be timed at the wakee's
// switch-out, later than the waker has got) nor before the log's last
// entry.
func (rq *RQ) stampAt(t int64) int64 { return max(min(t, rq.now), rq.log.Last()) }

// postOrApply posts a cross-CPU change, or applies it at once when the
// barrier is running on this CPU's behalf.
func (rq *RQ) postOrApply(op remoteOp) {
	if !rq.pay.barrier {
		rq.post(op)
		return
	}
	op.t = rq.now
	op.from = rq.cpu
	rq.sim.applyOp(&op)
}

// site is the contention site of a symbol (an access's caller).
func (rq *RQ) site(sym Symbol) weave.Site {
	if rq.inNewidle {
		return rq.sim.newidleSites[sym]
	}
	return rq.sim.sites[sym]
}

// access charges the uncontended cost of a shared-line access; the weave
// adds the rest later.
func (rq *RQ) accessCost(sym Symbol, op hwmodel.Op) {
	if rq.pay.paidBy != nil || rq.pay.barrier {
		return
	}
	if ns := rq.m.UncontendedNS(op); ns > 0 {
		rq.spendFrac(sym, ns)
	}
}

// spendFrac charges a sub-ns cost, carrying the fraction.
func (rq *RQ) spendFrac(sym Symbol, ns float64) {
	rq.Stats.fracNS += ns
	if whole := int64(rq.Stats.fracNS); whole > 0 {
		rq.Stats.fracNS -= float64(whole)
		rq.spend(sym, whole)
	}
}

// --- the event loop ---

// step processes this CPU's events before until, in time order.
func (rq *RQ) step(until int64) {
	rq.stepUntil = until
	for {
		if rq.parked.held {
			return // until the barrier settles its wait (hold.go)
		}
		if t := rq.nextStep(); t < 0 || t >= until {
			return
		}
		e := rq.events.pop()
		rq.handled++
		rq.republish = true
		rq.lastEvent = e.t
		wasIdle := rq.mode == modeIdle
		if wasIdle {
			// The stall the weave reported since the CPU went idle
			// happened before it did: it went idle that much later,
			// so the idle gap absorbs it.
			rq.payDebt(e.t - rq.now)
		}
		rq.advance(e.t)
		// A remote enqueue is applied on the waker's behalf: not a
		// scheduling point of this CPU (no idle exit, no resume).
		silent := e.kind == evMsg && e.msg.kind == msgEnqueue
		rq.enterKernel()
		// The rest of the stall from the last barriers: time lost
		// before whatever this CPU does next. Paid before the event's
		// work, so the accesses it logs are stamped after the stall,
		// as the weave expects (weave.Space.WeaveUntil).
		rq.payDebt(rq.debt)
		// Leaving idle costs the exit latency (intel_idle's C1
		// exit_latency): paid here, or already, by a message to a
		// polling idle CPU, whose monitor wakes it that long after the
		// write (pollDelay; intel_idle() sets TIF_POLLING_NRFLAG,
		// so set_nr_if_polling() replaces the IPI, core.c v6.6).
		if wasIdle && e.kind != evTick && !silent && !(e.kind == evMsg && e.msg.polled) {
			rq.cost(hwmodel.OpIdleExit)
		}
		rq.handle(&e)
		if silent {
			rq.resumeSilent()
		} else {
			rq.resume()
		}
	}
}

// nextEvent is when the CPU will handle its next live event, or -1: the
// event's stamp, or the CPU's clock if its kernel work has run past the
// stamp (it is busy until then), later by the weave's stall not yet paid.
// A CPU still waiting on a saturated line at a barrier has that wait so
// far as debt, so it handles nothing until the line has served it. step handles exactly the events whose
// nextEvent falls before the epoch's end, so a CPU that runs ahead of the
// other CPUs waits for them instead of handling events "early".
func (rq *RQ) nextEvent() int64 {
	for rq.events.len() > 0 {
		e := rq.events.peek()
		if rq.stale(e) {
			rq.events.pop()
			continue
		}
		t := max(e.t, rq.now)
		if rq.debt > 0 {
			// The CPU is stalled that much longer: an idle CPU's
			// idle gap absorbs the stall, a busy CPU's work is all
			// later by it (step pays it first).
			if rq.mode == modeIdle {
				t = max(t, rq.now+rq.debt)
			} else {
				t += rq.debt
			}
		}
		return t
	}
	return -1
}

// nextStep is nextEvent for the drivers: -1 while the weave holds the CPU
// (weaveBehind), unless all it waits for is a held action the barrier has
// settled (hold.go: settledHold), and while a wait is held.
func (rq *RQ) nextStep() int64 {
	if rq.parked.held || rq.weaveStalled || rq.weaveBehind && !rq.settledHold() {
		return -1
	}
	return rq.nextEvent()
}

func (rq *RQ) stale(e *event) bool {
	switch e.kind {
	case evRunEnd:
		return e.task != rq.curr || e.gen != e.task.segGen || !e.task.inUser
	case evTimer:
		return e.tm.cancelled
	}
	return false
}

// enterKernel interrupts curr's user code: what it ran so far is taken off
// its remaining compute.
func (rq *RQ) enterKernel() {
	if t := rq.curr; t != nil && t.inUser {
		t.remaining -= (rq.now - t.segStart) * t.segRate / 1000
		if t.remaining < 0 {
			t.remaining = 0
		}
		t.inUser = false
		t.segGen++
	}
	rq.mode = modeKernel
}

// payDebt charges up to limit ns of the debt (the weave's stall and the
// work done on this CPU's behalf at barriers) to the clock, by symbol,
// oldest first.
func (rq *RQ) payDebt(limit int64) {
	pay := min(rq.debt, limit)
	if pay <= 0 {
		return
	}
	rq.now += pay
	rq.Stats.StallNS += pay
	rq.debt -= pay
	k := 0
	for pay > 0 {
		c := &rq.debtSites[k]
		ns := min(c.ns, pay)
		rq.profile[c.sym] += ns
		rq.chargeLate(c.sym, ns)
		pay -= ns
		if c.ns -= ns; c.ns == 0 {
			k++
		}
	}
	n := copy(rq.debtSites, rq.debtSites[k:])
	rq.debtSites = rq.debtSites[:n]
}

func (rq *RQ) handle(e *event) {
	switch e.kind {
	case evRunEnd:
		// curr finished its compute; resume() runs its next action.
	case evStart:
		// A task was created here (NewTask); resume() lets the CPU
		// pick and run it. Deferring its first action to an event lets
		// a workload create all its tasks and semaphores first.
	case evFork:
		// The delayed fork of a task created with a start delay
		// (NewTask): wake_up_new_task() now; resume() then lets the
		// CPU pick it as for evStart.
		rq.forkTask(e.task)
	case evTick:
		rq.tickArmed = false
		rq.schedTick()
		if rq.curr != nil || rq.nrRunning > 0 {
			rq.armTick()
		}
		rq.hrtimerRunQueues()
	case evTimer:
		// hrtimer_wakeup() in interrupt context on this CPU: the local
		// timer interrupt's hrtimer_interrupt() (hrtimer.c v6.6) pays
		// its entry, exit and timer work once, whatever it wakes (the
		// tick's own interrupt is in OpTick's estimate; simplified).
		rq.cost(hwmodel.OpHrtimerIRQ)
		e.tm.cancelled = true
		rq.tryToWakeUp(e.tm.task, nil, rq.now, 0)
		rq.hrtimerRunQueues()
	case evMsg:
		rq.handleMsg(e.msg)
	case evAction:
		rq.unpark(e.task)
	}
}

// resume is the return to user space (or to the idle loop): reschedule if
// asked, then let curr run its program until it computes, blocks or the
// CPU goes idle.
func (rq *RQ) resume() {
	for guard := 0; ; guard++ {
		if rq.parked.task != nil {
			// curr's action waits for its epoch or for the barrier
			// (hold.go): its other events do not run the program.
			return
		}
		if guard > 1_000_000 {
			panic(fmt.Sprintf("emu: CPU %d at %d ns: task %v ran a million actions without using time", rq.cpu, rq.now, rq.curr))
		}
		if rq.needResched {
			rq.schedule(false)
		}
		t := rq.curr
		if t == nil {
			rq.mode = modeIdle
			return
		}
		rq.armTick()
		if t.remaining > 0 {
			rq.startSegment(t)
			return
		}
		rq.doAction(t)
	}
}

// resumeSilent returns to whatever the CPU was doing without treating the
// event as a scheduling point (a remote enqueue applied on the waker's
// behalf): curr resumes its compute, or the CPU stays idle.
func (rq *RQ) resumeSilent() {
	t := rq.curr
	if t == nil {
		rq.mode = modeIdle
		return
	}
	if t.remaining > 0 {
		rq.startSegment(t)
		return
	}
	// curr was between actions (cannot happen at an event: a task is
	// always computing or off the CPU when an event fires).
	rq.resume()
}

// armTick starts the periodic tick if it is stopped (NO_HZ: an idle CPU
// stops its tick; ticks are aligned to multiples of TICK_NSEC on every
// CPU, as with sched_skew_tick=0).
func (rq *RQ) armTick() {
	if rq.tickArmed {
		return
	}
	rq.tickArmed = true
	tick := rq.tun.TickNsec
	rq.events.push(event{t: (rq.now/tick + 1) * tick, kind: evTick})
}
