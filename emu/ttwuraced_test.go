package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestRacedWakeupSelects: a sender on hikey-8's CPU 2 signals a receiver
// that went to sleep on CPU 1 earlier in the same epoch, so the sender
// saw it running (published at the last barrier) and posted a signal. In
// the kernel (core.c v6.6: try_to_wake_up()) the sender's wakeup of a task
// that is off its runqueue runs select_task_rq(): CPU 1 now runs another
// task, so select_idle_sibling() (fair.c) moves the receiver to an idle
// CPU of the cluster, and the sender pays try_to_wake_up(). Before
// ttwuRaced the barrier enqueued the receiver back on CPU 1, behind the
// other task, and nobody paid for the wakeup.
func TestRacedWakeupSelects(t *testing.T) {
	const prev = 1
	// Whether a signal can race the sleep depends on where in its epoch
	// the receiver sleeps (a sleep early in the epoch is settled at the
	// barrier, hold.go), which moves with every cost on CPU 1: the
	// receiver's run is lengthened by fractions of an epoch until the
	// sleep falls where a signal races it.
	var extra int64
	run := func(signalAt int64) (s *Sim, r *Task) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		// The other task on CPU 1, created first so that it runs
		// first: asleep while the receiver starts, then a hog, queued
		// when the receiver sleeps.
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: prev, Prog: Loop(Sleep(20*us), Run(10*ms))})
		r = spawn(t, s, TaskSpec{Comm: "receiver", CPU: prev, Prog: Loop(Run(100*us+extra), Block(), Run(ms))})
		wake := Action{Op: ActSignal, Sem: r.sem}
		mustTask(t, s, TaskSpec{Comm: "sender", CPU: 2, Prog: Loop(Run(signalAt), wake, Block())})
		s.Run(2 * ms)
		return s, r
	}
	raced := 0
	for _, extra = range []int64{0, 500, 1000, 1500, 2000} {
		raced += racedWakeupSelects(t, run, prev)
		if raced > 0 {
			break
		}
	}
	if raced == 0 {
		t.Fatal("no signal time raced the receiver's sleep: the scenario tests nothing")
	}
	t.Logf("%d signal times raced the sleep (the receiver's run %d ns past 100 us)", raced, extra)
}

// racedWakeupSelects is TestRacedWakeupSelects's sweep of signal times
// around one receiver's sleep: the number that raced it.
func racedWakeupSelects(t *testing.T, run func(int64) (*Sim, *Task), prev int) int {
	// Where the receiver sleeps, with no signal in sight.
	s, r := run(time10s)
	sleptAt, offAt := r.sleptAt, r.offCPUAt
	if sleptAt <= 0 || offAt < sleptAt || r.state != TaskSleeping {
		t.Fatalf("probe: receiver slept at %d, off CPU at %d, state %v: the scenario does not put it to sleep", sleptAt, offAt, r.state)
	}
	t.Logf("receiver dequeued at %d ns, switched out at %d ns (epoch %d ns)", sleptAt, offAt, s.epoch)
	ttwuCost := s.m.Cost(hwmodel.OpTTWU)
	raced := 0
	for d := -2 * s.epoch; d <= 2*s.epoch; d += 20 {
		s, r := run(sleptAt + d)
		sender := s.cpus[2]
		if sender.Stats.RacedWakeups == 0 {
			continue
		}
		raced++
		if r.Stats.NrWakeups != 1 {
			t.Errorf("signal at %+d ns: %d wakeups of the receiver, want 1", d, r.Stats.NrWakeups)
		}
		if r.Stats.NrWakeupsMig != 1 || r.cpu == prev {
			t.Errorf("signal at %+d ns: receiver woken on CPU %d (%d migrating wakeups), want select_idle_sibling() to move it off CPU %d, which runs the hog", d, r.cpu, r.Stats.NrWakeupsMig, prev)
		}
		if got := sender.profile[SymTryToWakeUp]; got < ttwuCost {
			t.Errorf("signal at %+d ns: the sender paid %d ns in try_to_wake_up, want at least OpTTWU's %d", d, got, ttwuCost)
		}
		if sender.Stats.TTWUCount == 0 {
			t.Errorf("signal at %+d ns: the sender's ttwu_count is 0", d)
		}
	}
	return raced
}

const time10s = 10_000 * ms

// TestTraceRacedWakeupOrder: TestRacedWakeupSelects's signals, traced.
// The sender's try_to_wake_up() of a receiver still switching out logs
// sched_waking when it begins, at the signal, then waits for p->on_cpu
// (smp_cond_load_acquire(), core.c v6.6) or queues it on the wake list:
// every other record of the wakeup (sched_migrate_task, sched_stat_sleep,
// sched_wakeup) comes after the receiver's switch out. Before, the barrier
// logged them all at the end of the wait, the switch's own time, so the
// trace could show the receiver migrated and woken before it switched out
// (hackbench -T on hikey-8 at seed 3), and the waking after the sender had
// moved on.
func TestTraceRacedWakeupOrder(t *testing.T) {
	const prev = 1
	var extra int64 // as in TestRacedWakeupSelects
	run := func(signalAt int64) (s *Sim, r *Task, sent int64) {
		s = newSim(t, "hikey-8", "v6.6-eevdf")
		s.EnableTrace(2*ms, 0)
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: prev, Prog: Loop(Sleep(20*us), Run(10*ms))})
		r = spawn(t, s, TaskSpec{Comm: "receiver", CPU: prev, Prog: Loop(Run(100*us+extra), Block(), Run(ms))})
		at := signaler(t, s, 2, signalAt, r.sem, nil)
		s.Run(2 * ms)
		return s, r, *at
	}
	raced := 0
	for _, extra = range []int64{0, 500, 1000, 1500, 2000} {
		if raced > 0 {
			break
		}
		s0, r0, _ := run(time10s)
		raced += traceRacedWakeupOrder(t, run, s0.epoch, r0.sleptAt)
	}
	if raced == 0 {
		t.Fatal("no signal time raced the receiver's sleep: the scenario tests nothing")
	}
}

// traceRacedWakeupOrder checks the traces of the signals around one
// receiver's sleep (TestTraceRacedWakeupOrder): the number that raced it.
func traceRacedWakeupOrder(t *testing.T, run func(int64) (*Sim, *Task, int64), epoch, sleptAt int64) int {
	raced := 0
	for d := -2 * epoch; d <= 2*epoch; d += 20 {
		s, r, sent := run(sleptAt + d)
		if s.cpus[2].Stats.RacedWakeups == 0 {
			continue
		}
		raced++
		var switchOut int64 = -1
		var waking []int64
		var rest []traceKind
		var restAt []int64
		for cpu := range s.cpus {
			for _, rec := range s.traceRecords(cpu) {
				switch {
				case rec.kind == trSwitch && rec.ctx.task == r && rec.prevState == TaskSleeping && switchOut < 0:
					switchOut = rec.t // its first sleep
				case rec.task == r && rec.kind == trWaking && rec.t < ms:
					waking = append(waking, rec.t)
				case rec.task == r && rec.t < ms && (rec.kind == trMigrate || rec.kind == trStatSleep || rec.kind == trWakeup):
					rest, restAt = append(rest, rec.kind), append(restAt, rec.t)
				}
			}
		}
		if len(waking) != 1 || waking[0] != sent {
			t.Errorf("signal at %+d ns (sent %d ns): sched_waking at %v, want once at the signal", d, sent, waking)
		}
		for i, at := range restAt {
			if at <= switchOut {
				t.Errorf("signal at %+d ns: record %d of the wakeup at %d ns, the receiver's switch out at %d ns: want after it", d, rest[i], at, switchOut)
			}
		}
	}
	return raced
}
