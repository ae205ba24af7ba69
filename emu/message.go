package emu

import (
	"cmp"
	"slices"

	"github.com/rqemu/rqemu/hwmodel"
)

// The carrier of cross-CPU changes (the package doc's "cross-CPU
// protocol"): a CPU posts a remoteOp during its epoch, deliver carries the
// epoch's posts out at the barrier in the canonical order, and what the
// receiver must do itself arrives as a message event, run by handleMsg.
// The wakeup's own halves are in ttwu.go.

type opKind uint8

const (
	opWake          opKind = iota // a waker decided to wake task onto target
	opSignal                      // a signal to a task the signaller saw not waiting on it
	opAffinity                    // sched_setaffinity() of a task on itself
	opSetIdleCores                // sd_llc_shared->has_idle_cores = val (target: LLC id)
	opSetNrIdleScan               // sd_llc_shared->nr_idle_scan = val (target: LLC id)
	opPull                        // load balancing: pull tasks (pull.go)
	opKickILB                     // nohz_balancer_kick(): kick the idle load balancer
	opRunnable                    // a waker's ttwu_runnable() of task on target, found at its wait (hold.go: lateRace)
)

// remoteOp is a posted cross-CPU change. Owned by the posting CPU until
// the barrier.
type remoteOp struct {
	t        int64
	from     int
	seq      uint64
	kind     opKind
	task     *Task
	target   int
	flags    int
	wakelist bool
	recent   int // p->recent_used_cpu to set, or -1
	val      int64
	pull     *pullReq
	sem      *Sem  // opWake, opSignal: the semaphore (nil: a timer)
	stamp    int64 // opWake, opSignal: the signal's stamp
	cpus     []int // opAffinity
	// trace: the waker's first pending trace record + 1 (0: none);
	// trCtx: the waker's context, for a wakeup decided at the barrier
	// and for a signal a lost claim leaves pending (claimWake).
	trace int32
	trCtx traceWho
	// locked: opWake on the direct path: the waker took the target's rq
	// lock and logged ttwu_do_activate()'s accesses to the target's
	// lines in its own epoch (ttwu.go: tryToWakeUp).
	locked bool
	// notified: the waker marked the wakeup's last access (its
	// rq_unlock() of the target, or the llist_add() onto its wake list:
	// weave.Log.MarkNotify), and the target gets the wakeup when the
	// weave has served it (ttwudeliver.go: deferredWake).
	notified bool
	// lag: a wakeup the barrier completed for its waker (ttwuRaced)
	// reaches the wakee lag after t, the waker's work for it; raced: it
	// is notified, its accesses logged at racedAt (deliverWake).
	lag     int64
	raced   bool
	racedAt int64
	// signalAt, when positive: the time of the signal a barrier-completed
	// wakeup comes from, where try_to_wake_up() began (its sched_waking),
	// t being moved past the wakee's dequeue or switch (ttwuRaced).
	signalAt int64
	// delayed: opWake of a wakee the waker saw queued, sched_delayed:
	// ttwu_runnable() on its own CPU (delayed.go, ttwurunnable.go).
	delayed bool
}

// post queues a cross-CPU change for the barrier.
func (rq *RQ) post(op remoteOp) {
	op.t = rq.now
	op.from = rq.cpu
	rq.opSeq++
	op.seq = rq.opSeq
	if op.kind == opWake {
		op.recent = rq.sisRecent
	}
	rq.outbox = append(rq.outbox, op)
}

// msgKind is a message a CPU receives at a time chosen at the barrier.
type msgKind uint8

const (
	msgEnqueue msgKind = iota // a direct remote wakeup: enqueue task (the waker did the work)
	msgDrain                  // the wake-list IPI (or a polling idle CPU noticing): sched_ttwu_pending()
	msgResched                // resched_curr() from another CPU: the IPI arrives
)

type message struct {
	kind  msgKind
	task  *Task
	flags int
	from  int
	ipi   bool
	// polled: delivered to a polling idle CPU, pollDelay (its idle
	// exit) after it was sent; the CPU pays no second exit handling it.
	polled bool
	// late: a msgDrain of wakeups added before the last drain's
	// llist_del_all(), which the barrier delivered after it ran
	// (wakelistAdd).
	late bool
	// locked: a msgEnqueue whose waker logged the target's rq lock and
	// the lines written under it (remoteOp.locked).
	locked bool
}

// deliver carries out the epoch's posted changes in canonical order.
func (s *Sim) deliver() {
	ops := s.opsBuf[:0]
	for _, i := range s.visit {
		rq := s.cpus[i]
		ops = append(ops, rq.outbox...)
		rq.outbox = rq.outbox[:0]
		rq.llcWrites = rq.llcWrites[:0]
	}
	slices.SortFunc(ops, func(a, b remoteOp) int {
		switch {
		case a.t != b.t:
			return cmp.Compare(a.t, b.t)
		case a.from != b.from:
			return a.from - b.from
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for i := range ops {
		s.applyOp(&ops[i])
	}
	s.flushRacedWakes()
	clear(ops)
	s.opsBuf = ops[:0]
}

// applyOp carries out one posted change at the barrier.
func (s *Sim) applyOp(op *remoteOp) {
	switch op.kind {
	case opWake:
		s.claimWake(op)
	case opSignal:
		s.applySignal(op)
	case opAffinity:
		s.applyAffinity(op)
	case opSetIdleCores:
		s.llcSnap[op.target].hasIdleCores = op.val != 0
	case opSetNrIdleScan:
		s.llcSnap[op.target].nrIdleScan = int(op.val)
	case opPull:
		s.doPull(op)
	case opKickILB:
		s.kickILB(op)
	case opRunnable:
		rq := s.cpus[op.target]
		s.touch(rq)
		s.ttwuRunnable(rq, op.task, op.pendingSig())
	}
}

// kickILB is fair.c: kick_ilb(): the first tickless idle CPU runs the idle
// load balance, reached by an IPI (at most one per barrier).
func (s *Sim) kickILB(op *remoteOp) {
	if s.ilbKicked {
		return
	}
	for _, rq := range s.cpus {
		if rq.curr == nil && rq.nrRunning == 0 && !rq.ttwuPending() {
			s.ilbKicked = true
			kicker := s.cpus[op.from]
			kicker.sendIPIDebt()
			kicker.Stats.ILBKicks++
			rq.Stats.IPIsReceived++
			s.nohzIdleBalance(rq)
			return
		}
	}
}

// addDebt charges ns of time found at a barrier (the weave's stall, or
// kernel work done on this CPU's behalf there) to this CPU's clock at its
// next event: the one place debt is incurred (payDebt pays it).
func (rq *RQ) addDebt(sym Symbol, ns int64) {
	rq.sim.touch(rq)
	rq.republish = true // cpuSnap.idleAt moves
	rq.debt += ns
	rq.debtSites = append(rq.debtSites, symCharge{sym: sym, ns: ns})
}

// sendIPIDebt charges this CPU for an IPI the barrier found it sends (a
// wake-list batch opened on a busy CPU, an idle load balancer kicked):
// smp_send_reschedule()'s base cost, as debt.
func (rq *RQ) sendIPIDebt() {
	rq.addDebt(SymSendIPI, rq.m.Cost(hwmodel.OpIPISend))
	rq.Stats.IPIsSent++
}

// handleMsg runs a message on this CPU.
func (rq *RQ) handleMsg(m *message) {
	switch m.kind {
	case msgEnqueue:
		rq.ttwuRemoteEnqueue(m)
	case msgDrain:
		if m.ipi && rq.mode != modeIdle {
			rq.cost(hwmodel.OpIPIRecv)
		}
		if m.ipi {
			rq.Stats.IPIsReceived++
		}
		rq.traceDrain(m.ipi)
		rq.schedTTWUPending(m.late)
	case msgResched:
		if rq.curr != nil {
			rq.cost(hwmodel.OpIPIRecv)
			rq.Stats.IPIsReceived++
		}
		rq.needResched = true
	}
}
