package emu

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rqemu/rqemu/hwmodel"
)

// When a task's wait and another CPU's signal race. In the kernel the
// reader's condition check after prepare_to_wait() and the writer's store
// of the data meet on a cache line, nanoseconds apart: a write before the
// check is seen by it (no sleep), one between the check and the dequeue in
// __schedule() finds the task still queued and takes ttwu_runnable()
// (core.c v6.6; v5.15's ttwu_remote()): state back to TASK_RUNNING, and
// __schedule() does not dequeue it; a later one finds it switching out or
// gone (ttwuRaced, try_to_wake_up()). The model's CPUs see each other's
// signals only at barriers, an epoch (the IPI lookahead, 1-2.5 µs) at a
// time, so three things are done here:
//
//   - A decision at a time past the epoch's end (the CPU's kernel work
//     ran past it) waits for the epoch of its time (park): a wait's check
//     and a signal's try_to_wake_up(), so that no decision is older than
//     the epoch it is taken in, and no signal carries a time later than
//     the barrier that delivers it.
//   - A wait whose check finds nothing inside the epoch stops there
//     (hold) until the barrier, which has every signal sent before the
//     epoch's end, settles it by the kernel's order (resolveHold): a
//     signal sent before the check is consumed; one before the dequeue is
//     ttwu_runnable(): consumed, its waker pays the wakeup, and the task
//     passes through __schedule() without sleeping; later ones wake it
//     after it has slept (posted again as their wakers' when it has, and
//     delivered through ttwuRaced). The CPUs so settled step the rest of the epoch again
//     (Sim.settleHolds), and the barrier repeats until none is held.
//   - A signal to a task this CPU does not own and sees asleep on the
//     semaphore (published at the last barrier) stops at its decision
//     point, before try_to_wake_up() (holdSignal), until the barrier:
//     every CPU that writes to a sleeping reader in the epoch sees it
//     asleep, and only the first of them wakes it (resolveSignalHolds);
//     the others leave their signals pending and run no wakeup path, as
//     the kernel's later writers find the wait queue empty or the pipe
//     not empty. Before, each ran try_to_wake_up() (select_task_rq(),
//     the target's rq lock or wake list) and the barrier dropped all but
//     the first: 41-72% of hackbench's remote wakeup paths.
//
// A held CPU handles nothing after its check until it is settled, and its
// clock stays at the check (catchUp leaves it). The debt it pays when the
// hold ends moves its check and dequeue later than the barrier took them:
// the event that ends the hold settles the wait again at its clock
// (lateRace). Simplified: a signal after
// the epoch's end counts as after the dequeue, though the dequeue may fall
// in the next epoch (a __schedule() prologue, 0.3-0.8 µs, after the check);
// the dequeue comes that prologue after the check (OpSchedule) whatever
// the lock's wait; and a CPU that
// the barrier's pass settles sends its later signals of the epoch one pass
// late, as late as an epoch's messages always are (Sim.LateMsgs), and the
// program's own reads of Sem.Pending see signals up to the last barrier.

// parkedAction is curr's action stopped at its decision point: parked
// until the epoch of its time, or held at a wait's check for the barrier.
type parkedAction struct {
	task *Task
	a    Action
	// held: a wait stopped at its failed check (hold), until the barrier
	// settles it (outcome set, held cleared).
	held    bool
	sem     *Sem
	at      int64 // the check's time
	outcome holdOutcome
	stamp   int64 // the consumed signal's stamp (holdConsume, holdRunnable)
	// late are the signals sent after the dequeue (holdSleep): posted
	// again, as their wakers', once the task has slept (unpark).
	late []semSig
	// signal: a signal held before try_to_wake_up() of a sleeper the
	// waker does not own (holdSignal): sem's owner, at the check's time
	// at, with stamp and sigFlags (its wake flags), until the barrier
	// decides which waker finds it asleep (resolveSignalHolds).
	signal   bool
	sigFlags int
}

type holdOutcome uint8

const (
	holdNone     holdOutcome = iota // a parked action: finish it
	holdConsume                     // the check saw a signal sent before it
	holdRunnable                    // ttwu_runnable(): no sleep, a pass through __schedule()
	holdSleep                       // no signal before the dequeue: sleep
	holdWake                        // the first held signal: try_to_wake_up()
	holdFound                       // a later one: the wakee was woken, the signal is left pending
)

// park stops curr's action at its decision point until the evAction event
// at the CPU's clock, which the driver steps in the epoch of that time.
func (rq *RQ) park(t *Task, a Action) {
	rq.parked = parkedAction{task: t, a: a}
	rq.events.push(event{t: rq.now, kind: evAction, task: t})
}

// hold stops curr's wait at its failed condition check until the barrier
// settles it (resolveHold).
func (rq *RQ) hold(t *Task, a Action, sem *Sem) {
	rq.parked = parkedAction{task: t, a: a, held: true, sem: sem, at: rq.now}
	rq.events.push(event{t: rq.now, kind: evAction, task: t})
}

// settledHold reports whether curr's action waits at its decision point
// with the barrier's verdict in (outcome set, no longer held). Such a CPU
// goes on in the next epoch even if the weave is behind on it only
// because it logged accesses past the barrier (the steps before the
// decision ran past the epoch's end: weaveBehind without weaveStalled):
// its clock is where it decided, and the accesses it logs next queue
// behind those in the replay. Held back a whole epoch, as a CPU behind
// is, it logged its try_to_wake_up() before the replay's clock, which
// served it at that epoch's start, up to an epoch late: perf bench sched
// pipe's round trip then locked onto three epochs (TestHeldSignalEpochIndependent).
func (rq *RQ) settledHold() bool {
	return rq.parked.task != nil && !rq.parked.held && rq.parked.outcome != holdNone
}

// holdSignal stops curr's signal of sem at its decision point, before
// try_to_wake_up(), until the barrier decides whether this waker is the
// one that wakes the sleeper (resolveSignalHolds).
func (rq *RQ) holdSignal(t *Task, a Action, sem *Sem, stamp int64, flags int) {
	rq.hold(t, a, sem)
	p := &rq.parked
	p.signal, p.stamp, p.sigFlags = true, stamp, flags
}

// holdsSignal reports whether a signal of sem from this CPU waits for the
// barrier: its owner sleeps on sem as this CPU sees it (published at the
// last barrier) and is not this CPU's, so another CPU may wake it first in
// the same epoch (hold.go's doc).
func (rq *RQ) holdsSignal(sem *Sem) bool {
	p := sem.owner
	if p == nil || p.cpu == rq.cpu || rq.sim.noSignalHold {
		return false
	}
	v := rq.taskView(p)
	return asleepOn(v.state, v.waitingOn, sem)
}

// unpark goes on with the parked action (the evAction event): a parked
// one from its decision point, a settled wait by its outcome.
func (rq *RQ) unpark(t *Task) {
	p := rq.parked
	if p.task != t || rq.curr != t || p.held {
		panic(fmt.Sprintf("emu: CPU %d at %d ns: action of %v resumed with %v parked (held %v) and %v running", rq.cpu, rq.now, t, p.task, p.held, rq.curr))
	}
	rq.parked = parkedAction{}
	switch p.outcome {
	case holdNone:
		rq.finishAction(t, &p.a)
	case holdWake:
		rq.signal(p.sem, p.stamp, p.sigFlags)
	case holdFound:
		// The signal was left pending at the barrier
		// (resolveSignalHolds): no try_to_wake_up() runs.
	case holdConsume:
		t.stamp = p.stamp
	case holdRunnable:
		// __schedule() finds prev TASK_RUNNING: no deactivate; the pick
		// may keep it or preempt it.
		t.stamp = p.stamp
		rq.schedule(false)
	case holdSleep:
		// Signals that came after the barrier settled it (the CPU
		// reached this event later, held up by debt) join the late
		// ones.
		for p.sem.Pending() > 0 {
			p.late = append(p.late, p.sem.sigs[p.sem.head])
			p.sem.pop()
		}
		if rq.lateRace(t, &p) {
			return
		}
		t.waitingOn = p.sem
		rq.schedule(true)
		for _, sig := range p.late {
			rq.outbox = append(rq.outbox, remoteOp{kind: opSignal, t: sig.at, from: sig.from, task: t,
				sem: p.sem, stamp: sig.stamp, flags: sig.flags, trCtx: sig.tr})
		}
	}
}

// lateRace settles again, at the event that ends a held wait (unpark), a
// wait the barrier settled as a sleep when this CPU's clock has moved on
// since the check: the debt it paid there (the weave's stall of its
// epoch, a raced wakeup's work for its waker) is time before the dequeue
// that resolveHold could not count. The kernel's order at the clock the
// CPU now has (hold.go's doc): a late signal sent by then is seen by the
// check, one sent by the dequeue a __schedule() prologue later is
// ttwu_runnable() (core.c v6.6: try_to_wake_up()); the task does not
// sleep, and the other late signals stay pending. Simplified: the whole
// stall counts as before the check. It reports whether it settled the
// wait.
func (rq *RQ) lateRace(t *Task, p *parkedAction) bool {
	check := rq.now
	dequeue := check + rq.m.Cost(hwmodel.OpSchedule)
	i := -1
	for j := range p.late {
		if p.late[j].at <= dequeue {
			i = j
			break
		}
	}
	if i < 0 {
		return false
	}
	sig := p.late[i]
	for j := range p.late {
		if j != i {
			p.sem.push(p.late[j])
		}
	}
	t.stamp = sig.stamp
	if sig.at <= check {
		return true // holdConsume
	}
	// holdRunnable: the waker's ttwu_runnable() is paid at the barrier.
	rq.outbox = append(rq.outbox, remoteOp{kind: opRunnable, t: sig.at, from: sig.from, task: t, target: rq.cpu,
		sem: p.sem, stamp: sig.stamp, flags: sig.flags, trCtx: sig.tr})
	rq.schedule(false)
	return true
}

// resolveHold settles CPU rq's held wait at the barrier, which has every
// signal sent before the epoch's end: the kernel's order of the check, the
// dequeue (a __schedule() prologue later) and the signals decides. A wait
// with no signal by then whose dequeue falls after the epoch's end is
// not settled (it reports false): a signal sent between the barrier and
// the dequeue still finds the task queued (ttwu_runnable(), core.c v6.6
// try_to_wake_up(): p->on_rq), and only the next barrier has it, so the
// CPU stays held at its check through the next epoch (Sim.carried) and
// that barrier settles it. The last epoch of a RunUntil settles it as
// a sleep (the old simplification: such a signal wakes it after it has
// slept).
func (s *Sim) resolveHold(rq *RQ) bool {
	p := &rq.parked
	sem, check := p.sem, p.at
	s.touch(rq)
	if i := sem.firstBy(check); i >= 0 {
		p.held = false
		p.outcome, p.stamp = holdConsume, sem.take(i)
		return true
	}
	dequeue := check + s.m.Cost(hwmodel.OpSchedule)
	if i := sem.firstBy(dequeue); i >= 0 {
		sig := sem.sigs[i]
		p.held = false
		p.outcome, p.stamp = holdRunnable, sem.take(i)
		s.ttwuRunnable(rq, p.task, sig)
		return true
	}
	if dequeue > s.epochEnd && s.epochEnd < s.until {
		return false
	}
	p.held = false
	p.outcome = holdSleep
	// The signals after the dequeue wake the sleeper once it has slept:
	// the first through ttwuRaced, the rest pending again.
	for sem.Pending() > 0 {
		p.late = append(p.late, sem.sigs[sem.head])
		sem.pop()
	}
	return true
}

// resolveSignalHolds settles the pass's held signals, before its held
// waits (a signal left pending is one their checks may see), in the order
// of their times (CPU order at a tie): the first signal of a task that
// sleeps on the semaphore wakes it (holdWake: its waker goes on with
// try_to_wake_up(), whose wakeup the barrier's next delivery claims); a
// later one finds it woken and leaves its signal pending (holdFound), as
// a signal to a task not asleep does (asleepOn), and runs no
// try_to_wake_up(). The kernel's later wakers do none of the wakeup path:
// autoremove_wake_function() took the first waker's wakee off the socket's
// wait queue, so sock_def_readable()'s skwq_has_sleeper() finds it empty
// (net/core/sock.c v6.6), and pipe_write() wakes the reader only if the
// pipe was empty (fs/pipe.c v6.6: was_empty); a waker that gets that far
// finds the task no longer in TASK_INTERRUPTIBLE and returns
// (try_to_wake_up(): ttwu_state_match()).
func (s *Sim) resolveSignalHolds(held []int) {
	sigs := s.sigBuf[:0]
	for _, i := range held {
		if p := &s.cpus[i].parked; p.signal && p.held {
			sigs = append(sigs, i)
		}
	}
	s.sigBuf = sigs
	if len(sigs) == 0 {
		return
	}
	slices.SortStableFunc(sigs, func(a, b int) int { return cmp.Compare(s.cpus[a].parked.at, s.cpus[b].parked.at) })
	won := s.wonBuf[:0]
	for _, i := range sigs {
		rq := s.cpus[i]
		s.touch(rq)
		p := &rq.parked
		p.held = false
		w := p.sem.owner
		if asleepOn(w.state, w.waitingOn, p.sem) && !slices.Contains(won, w) {
			won = append(won, w)
			p.outcome = holdWake
			continue
		}
		p.outcome = holdFound
		rq.Stats.SignalHoldsFound++
		w.leavePending(p.sem, semSig{stamp: p.stamp, at: p.at, from: rq.cpu, flags: p.sigFlags, tr: traceWho{task: p.task}})
	}
	s.wonBuf = won
}

// ttwuRunnable is the waker's side of core.c: ttwu_runnable() (v6.6;
// ttwu_remote() in v5.15) of p on rq, paid as its debt: try_to_wake_up()
// finds the task still queued, takes its rq lock (__task_rq_lock()), and
// sets it running (ttwu_do_wakeup()); the wakee is curr, so no preemption
// check.
func (s *Sim) ttwuRunnable(rq *RQ, p *Task, sig semSig) {
	p.Stats.NrWakeups++
	if sig.from < 0 {
		return
	}
	waker := s.cpus[sig.from]
	s.traceTTWURunnable(waker, p, sig)
	waker.Stats.RacedRunnable++
	waker.ttwuStatRQ(rq.cpu)
	waker.atBarrierLogged(func() {
		waker.cost(hwmodel.OpTTWU)
		if waker != rq {
			rq.lock.Lock(waker.log, waker.now, waker.site(SymTryToWakeUp))
			waker.Stats.RemoteLockAcq++
			rq.lock.Unlock(waker.log, waker.now, waker.site(SymTryToWakeUp))
		}
	})
}

// settleHolds runs the barrier's passes: while a CPU stepped in the last
// pass (or carried from the last barrier) is held at a wait, settle every
// such wait (in CPU order), step those CPUs to the epoch's end again
// (stepCPUs), and deliver what they posted. A wait not settled yet is
// carried to the next barrier (resolveHold).
func (s *Sim) settleHolds(last []int) {
	if len(s.carried) > 0 {
		// The carried CPUs were not stepped (held): merge them in.
		m := append(append(s.passBuf[:0], last...), s.carried...)
		slices.Sort(m)
		m = slices.Compact(m)
		s.passBuf, last = m, m
		s.carried = s.carried[:0]
	}
	for {
		held := s.heldBuf[:0]
		for _, i := range last {
			if s.cpus[i].parked.held {
				held = append(held, i)
			}
		}
		if len(held) == 0 {
			s.heldBuf = held
			slices.Sort(s.carried)
			return
		}
		s.resolveSignalHolds(held)
		k := 0
		for _, i := range held {
			rq := s.cpus[i]
			if !rq.parked.held {
				held[k] = i // a signal settled above
				k++
				continue
			}
			if l := rq.log.Last(); l > rq.now {
				// Barrier work logged on a held CPU's log past its
				// clock: its own next access would go before it.
				panic(fmt.Sprintf("emu: CPU %d held at %d ns (task %v): its log has an access at %d ns, after its clock", rq.cpu, rq.now, rq.parked.task, l))
			}
			if !s.resolveHold(rq) {
				s.carried = append(s.carried, i)
				continue
			}
			held[k] = i
			k++
		}
		held = held[:k]
		s.heldBuf = held
		if len(held) == 0 {
			slices.Sort(s.carried)
			return
		}
		s.inBarrier = false
		s.stepCPUs(held)
		s.inBarrier = true
		s.deliver()
		s.extendVisit()
		last = append(s.passBuf[:0], held...)
		s.passBuf = last
		s.HoldPasses++
	}
}
