package emu

import "testing"

// TestDirectWakeupAtUnlock: a direct remote wakeup's enqueue is the
// waker's store under the target's rq lock (core.c, v5.15 and v6.6:
// ttwu_queue() -> rq_lock(); ttwu_do_activate(); rq_unlock()), so the
// target sees the wakee once the waker's rq_unlock() completes: after the
// waker's misses inside the lock on the target's lock line, rq->curr/clock
// and rq->cfs.avg, which the target's own last switch left in its cache.
// The same wakeup on a hikey-8 whose core-to-core transfers are free lands
// earlier by exactly those stalls; before, the enqueue carried the waker's
// uncontended finish and landed at the same time on both machines.
func TestDirectWakeupAtUnlock(t *testing.T) {
	enqueueAt := func(free bool) int64 {
		return wakeupLandsAt(t, "v5.15-cfs", msgEnqueue, 1, free)
	}
	priced, free := enqueueAt(false), enqueueAt(true)
	m := machine(t, "hikey-8")
	// Three lines cross from CPU 6 to CPU 7 inside the lock (its lock,
	// rq->curr and rq->cfs.avg), in the class of the two CPUs (one
	// cluster: its shared L2).
	want := 3 * int64(m.Lat.Transfer[m.Class(7, 6)])
	t.Logf("enqueue at %d ns with priced transfers, %d ns with free ones (class %v, %.1f ns each)", priced, free, m.Class(7, 6), m.Lat.Transfer[m.Class(7, 6)])
	if d := priced - free; d < want || d > want+3 {
		t.Errorf("the enqueue lands %d ns later with priced transfers, want the three lines' %d ns (the waker's rq_unlock() completes after its misses)", d, want)
	}
}

// TestWakelistWakeupAtAdd: the same for a wakeup through the wake list
// (v6.6: the target is idle, TTWU_QUEUE_IDLE): __ttwu_queue_wakelist()'s
// llist_add() publishes the entry, and the target's drain (after the IPI
// or, polling, at once) comes after it completes: the waker's misses up to
// it (the target's rq line that ttwu_queue_cond() reads, then the wake
// list's line for the cmpxchg) delay it.
func TestWakelistWakeupAtAdd(t *testing.T) {
	priced := wakeupLandsAt(t, "v6.6-eevdf", msgDrain, 2, false)
	free := wakeupLandsAt(t, "v6.6-eevdf", msgDrain, 2, true)
	m := machine(t, "hikey-8")
	x := int64(m.Lat.Transfer[m.Class(7, 6)])
	t.Logf("drain at %d ns with priced transfers, %d ns with free ones", priced, free)
	if d := priced - free; d < x {
		t.Errorf("the drain comes %d ns later with priced transfers, want at least the wake list line's %d ns (the waker's llist_add() completes after its misses)", d, x)
	}
}

// wakeupLandsAt runs a waker on hikey-8's CPU 7 that wakes a task asleep
// on CPU 6 twice, 1 ms apart, with the transfers between CPUs priced or
// free, and returns the time of the nth wakeup's message (kind) on CPU 6.
// The first finds the target's rq lines in its cache (its start and
// sleep) but the wake list still uncached; the second finds the wake list
// in the target's cache too (the first drain).
func wakeupLandsAt(t *testing.T, feat string, kind msgKind, nth int, free bool) int64 {
	t.Helper()
	m := machine(t, "hikey-8")
	if free {
		for k := range m.Lat.Transfer {
			m.Lat.Transfer[k] = 0
		}
	}
	s, err := New(Config{Machine: m, Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	w := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 6, Prog: Loop(Block(), Run(50_000))})
	mustTask(t, s, TaskSpec{Comm: "waker", CPU: 7, Prog: Loop(Run(2*ms), Wake(w), Run(ms), Wake(w), Block())})
	var seen []int64
	s.RunUntil(6*ms, func() bool {
		for _, q := range s.cpus[6].events.h {
			e := q.V
			if e.kind == evMsg && e.msg.kind == kind && (kind != msgEnqueue || e.msg.task == w) &&
				(len(seen) == 0 || e.t > seen[len(seen)-1]) {
				seen = append(seen, e.t)
			}
		}
		return len(seen) == 2
	})
	if len(seen) != 2 || w.Stats.NrWakeups != 2 {
		t.Fatalf("%s free=%v: %d wakeup messages on CPU 6 (%d wakeups), want 2", feat, free, len(seen), w.Stats.NrWakeups)
	}
	return seen[nth-1]
}
