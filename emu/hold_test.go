package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestWaitRacesSignal: a receiver on hikey-8's CPU 1 checks for a signal
// and goes to sleep while a sender on CPU 2 signals it, the two in one
// epoch (2.5 µs). The kernel's order decides (core.c v6.6,
// try_to_wake_up(); include/linux/wait.h, ___wait_event()): a signal
// before the check is seen by it, and the receiver does not sleep; one
// between the check and __schedule()'s dequeue finds it still queued,
// ttwu_runnable(): it does not sleep either, but counts a wakeup its sender
// pays; one after the dequeue wakes it from its sleep. Before hold.go the
// receiver slept and was woken whenever the signal came in its epoch, the
// check having seen only the last barrier's signals.
func TestWaitRacesSignal(t *testing.T) {
	// run signals at about signalAt (the sender's compute ends then,
	// after its start) and returns when the signal was sent.
	run := func(signalAt int64) (s *Sim, r *Task, sent int64) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		r = mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Run(98*us), Block(), Run(10*ms))})
		at := signaler(t, s, 2, signalAt, r.sem, nil)
		s.Run(2 * ms)
		return s, r, *at
	}
	s, r, _ := run(time10s)
	slept := r.sleptAt
	if slept <= 0 || r.Stats.NrVolSwitch != 1 {
		t.Fatalf("probe: receiver slept at %d after %d voluntary switches: the scenario does not put it to sleep", slept, r.Stats.NrVolSwitch)
	}
	// The check comes a __schedule() prologue before the dequeue.
	check := slept - s.m.Cost(hwmodel.OpSchedule)
	// The barrier that settles the wait knows the signals of the check's
	// epoch: one after its end is taken as after the dequeue
	// (simplified, hold.go).
	end := (check/s.epoch + 1) * s.epoch
	t.Logf("check at about %d ns, dequeue at %d ns, epoch ends at %d ns", check, slept, end)
	var before, runnable, after int
	for d := check - 2*s.epoch; d <= slept+2*s.epoch; d += 25 {
		s, r, at := run(d)
		sender := s.cpus[2]
		sleeps, wakeups := r.Stats.NrVolSwitch, r.Stats.NrWakeups
		switch {
		case at < check-100:
			before++
			if sleeps != 0 || wakeups != 0 {
				t.Errorf("signal %d ns before the check: %d sleeps, %d wakeups; want none (the check sees it)", check-at, sleeps, wakeups)
			}
		case at > check+100 && at < min(slept, end)-100:
			runnable++
			if sleeps != 0 || wakeups != 1 || sender.Stats.RacedRunnable != 1 {
				t.Errorf("signal %d ns after the check, before the dequeue: %d sleeps, %d wakeups, %d ttwu_runnable; want 0, 1, 1", at-check, sleeps, wakeups, sender.Stats.RacedRunnable)
			}
			if got := sender.profile[SymTryToWakeUp]; got < s.m.Cost(hwmodel.OpTTWU) {
				t.Errorf("signal %d ns after the check: the sender paid %d ns in try_to_wake_up, want at least OpTTWU's %d", at-check, got, s.m.Cost(hwmodel.OpTTWU))
			}
		case at > max(slept, end)+100:
			after++
			if sleeps != 1 || wakeups != 1 {
				t.Errorf("signal %d ns after the dequeue: %d sleeps, %d wakeups; want 1, 1", at-slept, sleeps, wakeups)
			}
		}
	}
	if before == 0 || runnable == 0 || after == 0 {
		t.Fatalf("signal times before the check %d, between it and the dequeue %d, after %d: each must occur", before, runnable, after)
	}
}

// TestStallBeforeDequeue: as TestWaitRacesSignal, but the receiver's CPU
// owes time when the barrier settles its wait: the debt a barrier charges
// before it settles the holds, such as a raced wakeup the receiver's task
// gave earlier in the epoch, completed as its debt (ttwuRaced; on spr-2s,
// schbench's message thread waking a worker). Here the sender adds it
// while the receiver is held (the serial driver steps CPU 1 first). The
// debt is paid at the event that ends the hold, so the receiver's check
// and dequeue come that much later (lateRace: the stall counts as before
// the check), and the kernel's order at that clock decides (core.c v6.6
// try_to_wake_up()): a signal before the check is seen by it, one before
// the dequeue is ttwu_runnable(); neither sleeps. Before lateRace the
// receiver slept after such a signal and was woken from a sleep that could
// not happen (ttwuRaced's RacedRunnable), and the trace showed the
// sender's wakeup at the dequeue, after the sender had switched out.
func TestStallBeforeDequeue(t *testing.T) {
	const stall = 1200
	run := func(signalAt int64) (s *Sim, r *Task, sent int64) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		r = mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Run(98*us), Block(), Run(10*ms))})
		at := signaler(t, s, 2, signalAt, r.sem, func() {
			if rq := s.cpus[1]; rq.parked.held && rq.debt == 0 {
				rq.addDebt(SymTryToWakeUp, stall)
			}
		})
		s.Run(2 * ms)
		return s, r, *at
	}
	s, probe, _ := run(time10s)
	slept := probe.sleptAt
	if slept <= 0 || probe.Stats.NrVolSwitch != 1 {
		t.Fatalf("probe: receiver slept at %d after %d voluntary switches: the scenario does not put it to sleep", slept, probe.Stats.NrVolSwitch)
	}
	sched := s.m.Cost(hwmodel.OpSchedule)
	check := slept - sched
	end := (check/s.epoch + 1) * s.epoch
	t.Logf("check at about %d ns, dequeue at %d ns without the stall, epoch ends at %d ns", check, slept, end)
	var seen, runnable int
	for d := check - 2*s.epoch; d <= end+s.epoch; d += 25 {
		s, r, at := run(d)
		if at <= check+sched+100 || at >= end-100 || s.cpus[1].Stats.StallNS == 0 {
			// TestWaitRacesSignal's cases, a signal the barrier counts
			// as after the dequeue (hold.go), or no stall
			continue
		}
		sleeps, wakeups, rr := r.Stats.NrVolSwitch, r.Stats.NrWakeups, s.cpus[2].Stats.RacedRunnable
		switch {
		case at < check+stall-100:
			seen++
			if sleeps != 0 || wakeups != 0 {
				t.Errorf("signal %d ns after the check, before the %d ns stall ends: %d sleeps, %d wakeups; want none (the check sees it)", at-check, stall, sleeps, wakeups)
			}
		case at > check+stall+100 && at < check+stall+sched-100:
			runnable++
			if sleeps != 0 || wakeups != 1 || rr != 1 {
				t.Errorf("signal %d ns after the check, %d ns before the dequeue the stall moved: %d sleeps, %d wakeups, %d ttwu_runnable; want 0, 1, 1", at-check, check+stall+sched-at, sleeps, wakeups, rr)
			}
		}
	}
	if seen == 0 || runnable == 0 {
		t.Fatalf("signal times in the stall %d, between it and the dequeue %d: each must occur", seen, runnable)
	}
}

// TestWaitCarriedPastBarrier: as TestWaitRacesSignal, with the receiver's
// check placed a few hundred ns before its epoch's end, so that the
// dequeue (a __schedule() prologue after the check) falls in the next
// epoch. A signal sent between the barrier and the dequeue still finds the
// task queued in the kernel (core.c v6.6 try_to_wake_up(): p->on_rq, so
// ttwu_runnable()): no sleep, one wakeup its sender pays. The barrier that
// ends the check's epoch does not have that signal yet, so it carries the
// wait to the next one (hold.go, resolveHold). Before, the wait was
// settled as a sleep there, and the signal woke the receiver after a sleep
// the kernel does not take (hackbench's receivers, whose reads race the
// senders' writes, took that path every few epochs).
func TestWaitCarriedPastBarrier(t *testing.T) {
	run := func(compute, signalAt int64) (s *Sim, r *Task, sent int64) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		r = mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Run(compute), Block(), Run(10*ms))})
		at := signaler(t, s, 2, signalAt, r.sem, nil)
		s.Run(2 * ms)
		return s, r, *at
	}
	sched := newSim(t, "hikey-8", "v6.6-eevdf").m.Cost(hwmodel.OpSchedule)
	// Move the receiver's compute so that its check lands sched/2 before
	// an epoch's end.
	compute := int64(98 * us)
	s, r, _ := run(compute, time10s)
	check := r.sleptAt - sched
	end := (check/s.epoch + 1) * s.epoch
	compute += end - sched/2 - check
	s, r, _ = run(compute, time10s)
	slept := r.sleptAt
	check = slept - sched
	end = (check/s.epoch + 1) * s.epoch
	if slept <= 0 || r.Stats.NrVolSwitch != 1 || !(check < end && end < slept) {
		t.Fatalf("probe: receiver checks at %d, dequeues at %d after %d voluntary switches, its epoch ends at %d: want the end between", check, slept, r.Stats.NrVolSwitch, end)
	}
	t.Logf("check at about %d ns, epoch ends at %d ns, dequeue at %d ns", check, end, slept)
	var carried, after int
	for d := end - 2*s.epoch; d <= slept+2*s.epoch; d += 25 {
		s, r, at := run(compute, d)
		sleeps, wakeups, rr := r.Stats.NrVolSwitch, r.Stats.NrWakeups, s.cpus[2].Stats.RacedRunnable
		switch {
		case at > end+50 && at < slept-50:
			carried++
			if sleeps != 0 || wakeups != 1 || rr != 1 {
				t.Errorf("signal %d ns after the barrier, %d ns before the dequeue: %d sleeps, %d wakeups, %d ttwu_runnable; want 0, 1, 1", at-end, slept-at, sleeps, wakeups, rr)
			}
		case at > slept+100:
			after++
			if sleeps != 1 || wakeups != 1 {
				t.Errorf("signal %d ns after the dequeue: %d sleeps, %d wakeups; want 1, 1", at-slept, sleeps, wakeups)
			}
		}
	}
	if carried == 0 || after == 0 {
		t.Fatalf("signal times between the barrier and the dequeue %d, after the dequeue %d: each must occur", carried, after)
	}
}

// TestSignalHoldOneWaker: two senders on hikey-8's CPUs 2 and 3 signal a
// receiver asleep on CPU 1, their signals swept across each other. Both
// see it asleep (published at the last barrier) when they are in one
// epoch. In the kernel only the first runs the wakeup: the second finds
// the pipe not empty (fs/pipe.c v6.6 pipe_write(): was_empty) or the
// socket's wait queue empty (autoremove_wake_function() took the reader
// off it; sock_def_readable(): skwq_has_sleeper()), or, reaching
// try_to_wake_up(), the task no longer TASK_INTERRUPTIBLE
// (ttwu_state_match(), core.c v6.6). So each signal is held at its
// decision point until the barrier (hold.go: holdSignal), the earlier
// wakes the receiver, and the later leaves its message pending without
// a try_to_wake_up(): no select_task_rq(), no remote rq lock or wake-list
// push. Without the hold both senders ran the path and the barrier's
// claim dropped the second's wakeup after its costs were paid.
func TestSignalHoldOneWaker(t *testing.T) {
	// ttwuNS[c] is CPU c's time in try_to_wake_up() since its signal
	// (wake_up_new_task() charges its start there too).
	var ttwuNS [4]int64
	run := func(d int64, hold bool) (s *Sim, r *Task, at2, at3 int64) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		s.noSignalHold = !hold
		r = mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Block(), Run(10*ms))})
		a2 := signaler(t, s, 2, 100*us, r.sem, func() { ttwuNS[2] = -s.cpus[2].profile[SymTryToWakeUp] })
		a3 := signaler(t, s, 3, 100*us+d, r.sem, func() { ttwuNS[3] = -s.cpus[3].profile[SymTryToWakeUp] })
		s.Run(2 * ms)
		ttwuNS[2] += s.cpus[2].profile[SymTryToWakeUp]
		ttwuNS[3] += s.cpus[3].profile[SymTryToWakeUp]
		return s, r, *a2, *a3
	}
	same, twice := 0, 0
	for d := int64(-7500); d <= 7500; d += 100 { // hikey-8's epoch is 2.5 us
		s, r, at2, at3 := run(d, true)
		s2, s3 := s.cpus[2], s.cpus[3]
		if r.Stats.NrWakeups != 1 || r.sem.Pending() != 1 {
			t.Errorf("signals at %d and %d ns: %d wakeups, %d signals pending; want 1 and 1", at2, at3, r.Stats.NrWakeups, r.sem.Pending())
		}
		if at2/s.epoch != at3/s.epoch {
			continue // the later one sees the receiver awake
		}
		same++
		first, later := s2, s3
		if at3 < at2 {
			first, later = s3, s2
		}
		if got := ttwuNS[later.cpu]; got != 0 {
			t.Errorf("signals at %d and %d ns: the later sender spent %d ns in try_to_wake_up, want 0", at2, at3, got)
		}
		if first.Stats.TTWUCount != 1 || later.Stats.TTWUCount != 0 || later.Stats.SignalHoldsFound != 1 {
			t.Errorf("signals at %d (CPU 2) and %d ns (CPU 3) in one epoch: try_to_wake_up() counts %d and %d, found woken %d and %d; want 1 for the first only",
				at2, at3, s2.Stats.TTWUCount, s3.Stats.TTWUCount, s2.Stats.SignalHoldsFound, s3.Stats.SignalHoldsFound)
		}
		if want := min(at2, at3); r.stamp != want {
			t.Errorf("signals at %d and %d ns: the receiver woke with stamp %d, want the first signal's %d", at2, at3, r.stamp, want)
		}
		if s, _, _, _ := run(d, false); s.cpus[2].Stats.TTWUCount+s.cpus[3].Stats.TTWUCount == 2 {
			twice++
		}
	}
	if same == 0 || twice == 0 {
		t.Fatalf("%d signal pairs in one epoch, %d of them ran two try_to_wake_up()s without the hold: the scenario tests nothing", same, twice)
	}
}
