package emu

import (
	"testing"
)

// A delayed start is a delayed fork (Config.StartJitter): the task is
// TASK_NEW until its CPU runs wake_up_new_task() (core.c, v5.15 and v6.6;
// kernel/fork.c: kernel_clone() -> copy_process() -> sched_fork(), then
// wake_up_new_task()). Under v5.15 CFS that first enqueue is placed by
// task_fork_fair()'s place_entity(initial=1): min_vruntime (or the
// parent's vruntime) plus sched_vslice() with START_DEBIT, never left of
// min_vruntime. A start-up sleep would instead be placed at its wakeup by
// place_entity(initial=0)'s sleeper rule, up to sysctl_sched_latency/2
// left of min_vruntime.

// forkRun builds hikey-8 with feat and the given start jitter, n pinned
// hogs on CPU 0, and steps it 100 µs at a time until end, calling see for
// every task on a runqueue (queued or running) after each step.
func forkRun(t *testing.T, feat string, jitter int64, n int, end int64, see func(p *Task)) *Sim {
	t.Helper()
	s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial", StartJitter: jitter})
	if err != nil {
		t.Fatal(err)
	}
	tasks := make([]*Task, n)
	for i := range tasks {
		tasks[i] = mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Loop(Run(ms))})
	}
	for at := int64(100_000); at <= end; at += 100_000 {
		s.Run(at)
		for _, p := range tasks {
			if st := p.State(); st == TaskRunnable || st == TaskRunning {
				see(p)
			}
		}
	}
	return s
}

// TestDelayedStartIsAFork: v5.15 core.c wake_up_new_task() and fair.c
// task_fork_fair()/place_entity(initial=1). Eight hogs forked over 200 ms
// onto one CPU under v5.15-cfs: each is TASK_NEW until its fork, then
// never left of min_vruntime (no sleeper credit). With a start-up sleep
// instead, the late ones wake 12 ms (sysctl_sched_latency/2) left of it.
func TestDelayedStartIsAFork(t *testing.T) {
	const jitter = 200 * ms
	var minOff int64
	seen := map[*Task]int64{} // first time seen on a runqueue
	s := forkRun(t, "v5.15-cfs", jitter, 8, jitter+10*ms, func(p *Task) {
		if _, ok := seen[p]; !ok {
			seen[p] = p.Now()
		}
		minOff = min(minOff, p.MinVruntimeOffset())
	})
	if minOff < 0 {
		t.Errorf("v5.15-cfs: a task forked late was %d us left of min_vruntime, want the fork placement (>= 0)", -minOff/1000)
	}
	late := 0
	for p, at := range seen {
		if at > 10*ms {
			late++
		}
		if p.Stats.Pcount == 0 {
			t.Errorf("%v never ran", p)
		}
	}
	if len(seen) != 8 || late < 4 {
		t.Errorf("saw %d tasks on the runqueue, %d of them first after 10 ms: want 8, most forked late", len(seen), late)
	}
	t.Logf("v5.15-cfs: lowest v - min_vruntime of a queued task %d ns; %d of 8 forked after 10 ms; %d events", minOff, late, s.EventsHandled())

	// Before its fork a task is TASK_NEW, on no runqueue.
	s2, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, "v5.15-cfs"), Seed: 1, Check: true, Driver: "serial", StartJitter: jitter})
	if err != nil {
		t.Fatal(err)
	}
	p := mustTask(t, s2, TaskSpec{Comm: "hog", CPU: 0, Prog: Loop(Run(ms))})
	if p.State() != TaskNew || s2.RQ(0).nrRunning != 0 {
		t.Errorf("after NewTask with a start delay: state %v, nr_running %d: want new, 0", p.State(), s2.RQ(0).nrRunning)
	}
}

// hopScene is what hopRun measures.
type hopScene struct {
	n         int   // tasks per CPU
	firstWait int64 // the longest wait before a task's first hop (from its fork)
	hopWait   int64 // the longest wait after a hop
	period    int64 // __sched_period() for the tasks of one CPU
	cycle     int64 // a CPU's time per hop (burst, hop path, stopper)
}

// hopRun is the hopper workload (bench's hopper) reduced to two CPUs of
// hikey-8: n pinned tasks per CPU, forked within bench's 10 µs start
// jitter, each computing 100 µs and then moving itself to the other CPU
// with sched_setaffinity(), for end ns.
func hopRun(t *testing.T, feat string, n int, end int64) hopScene {
	t.Helper()
	return hopRunBurst(t, feat, n, 100_000, end)
}

// hopRunBurst is hopRun with bursts of b ns.
func hopRunBurst(t *testing.T, feat string, n int, b, end int64) hopScene {
	t.Helper()
	s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial", StartJitter: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	hops := map[*Task]*int{}
	total := int64(0)
	for i := range 2 * n {
		k := new(int)
		ran := false
		p := mustTask(t, s, TaskSpec{Comm: "hopper", CPU: i % 2, Prog: ProgramFunc(func(p *Task) Action {
			if !ran {
				ran = true
				return Run(b)
			}
			ran = false
			*k++
			total++
			return SetAffinity(1 - p.CPU())
		})})
		hops[p] = k
	}
	sc := hopScene{n: n}
	s.OnRunDelay(func(p *Task, d int64) {
		if *hops[p] == 0 {
			sc.firstWait = max(sc.firstWait, d)
		} else {
			sc.hopWait = max(sc.hopWait, d)
		}
	})
	s.Run(end)
	// fair.c: __sched_period(): nr > sched_nr_latency, so nr x
	// sysctl_sched_min_granularity.
	sc.period = int64(n) * int64(s.tun.MinGranularity)
	sc.cycle = 2 * end / max(total, 1)
	return sc
}

// TestHopperForkDebitStarvation: v5.15 fair.c, the mechanism behind the
// starvation of "[PATCH 0/2] sched/fair: Fix starvation caused by task
// migration" (Tim Chen, 2022, v5.15). The tasks of a CPU are forked one
// after another (wake_up_new_task(): place_entity(initial=1) with
// START_DEBIT), each a sched_vslice() right of the last: up to
// sysctl_sched_latency/2 right of min_vruntime. A queued hop
// (migration_cpu_stop() -> move_queued_task()) carries v - min_vruntime,
// and a task that just ran arrives within one burst of the destination's
// min_vruntime; update_min_vruntime() (min of curr and the leftmost, never
// back) then advances by about a burst per queue length at each hop, and
// the task forked X right of min_vruntime waits about X x the queue
// length, far longer than the period. +PLACE_MIGRATE places each arrival
// at min_vruntime (+ sched_vslice()), so min_vruntime moves on, and v6.6
// EEVDF places by lag: neither waits much longer than a period.
func TestHopperForkDebitStarvation(t *testing.T) {
	const end = 1000 * ms
	short := hopRun(t, "v5.15-cfs", 12, end)
	legacy := hopRun(t, "v5.15-cfs", 25, end)
	for _, sc := range []hopScene{short, legacy} {
		t.Logf("v5.15-cfs, %d per CPU: longest first wait %.3f ms, after a hop %.3f ms, period %.3f ms",
			sc.n,
			float64(sc.firstWait)/1e6, float64(sc.hopWait)/1e6, float64(sc.period)/1e6)
		if sc.firstWait < 2*sc.period {
			t.Errorf("v5.15-cfs: longest first wait %d us, want the fork debit's starvation, > 2 periods (%d us)", sc.firstWait/1000, 2*sc.period/1000)
		}
	}
	// X x the queue length: twice the tasks, about twice the wait.
	if 10*legacy.firstWait < 16*short.firstWait {
		t.Errorf("v5.15-cfs: longest first wait %d us with 25 per CPU, %d us with 12: want it to grow with the queue", legacy.firstWait/1000, short.firstWait/1000)
	}
	for _, feat := range []string{"v5.15-cfs,+PLACE_MIGRATE", "v6.6-eevdf"} {
		sc := hopRun(t, feat, 25, end)
		t.Logf("%s, 25 per CPU: longest first wait %.3f ms, after a hop %.3f ms", feat, float64(sc.firstWait)/1e6, float64(sc.hopWait)/1e6)
		if sc.firstWait > sc.period || 10*sc.firstWait > legacy.firstWait {
			t.Errorf("%s: longest first wait %d us (v5.15-cfs %d us), want within a period (%d us), a tenth of v5.15-cfs's", feat, sc.firstWait/1000, legacy.firstWait/1000, sc.period/1000)
		}
	}
}

// TestHopperCrawlWithStopper: the fork debit's wait (above) is X x the
// queue length in vruntime, and min_vruntime advances only by the fair
// tasks' own runs (fair.c v5.15: update_curr() -> update_min_vruntime()):
// the stopper that moves each hopper (core.c: migration_cpu_stop(), stop
// class, update_curr_common(), no vruntime) does not advance it. So the
// larger the stoppers' share of a CPU, the slower min_vruntime moves
// against real time and the longer the debited task waits: about
// X x queue length x (cycle / the part of it charged to the hoppers).
// With 2 µs bursts instead of 100 µs the stoppers' switches and moves
// are a large part of each hop's cycle and the first wait grows with it;
// before the stopper was modeled the move cost nothing on the old CPU and
// the first wait did not depend on the burst.
func TestHopperCrawlWithStopper(t *testing.T) {
	const end = 400 * ms
	long := hopRunBurst(t, "v5.15-cfs", 12, 100_000, end)
	short := hopRunBurst(t, "v5.15-cfs", 12, 2_000, end)
	for _, sc := range []struct {
		b  int64
		sc hopScene
	}{{100_000, long}, {2_000, short}} {
		t.Logf("v5.15-cfs, %d us bursts: longest first wait %.3f ms, %.2f us per hop per CPU", sc.b/1000, float64(sc.sc.firstWait)/1e6, float64(sc.sc.cycle)/1e3)
	}
	// The stoppers take ~1.5 us of each hop's cycle (a switch, the new
	// CPU's lock and enqueue), against a run of the burst plus the
	// syscall's requeue charged to the hopper: cycle / charged run is
	// ~1.3 with 2 us bursts, ~1.015 with 100 us.
	if 10*short.firstWait < 11*long.firstWait {
		t.Errorf("v5.15-cfs: longest first wait %d us with 2 us bursts, %d us with 100 us: want at least 1.1x, min_vruntime slowed by the stoppers' share", short.firstWait/1000, long.firstWait/1000)
	}
}
