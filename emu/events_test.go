package emu

import (
	"cmp"
	"runtime"
	"slices"
	"testing"
)

// TestLongComputeMemoryFlat: a CPU running one long compute pushes a new
// run-end at every tick; the superseded ones must not pile up, so the
// memory of a steady run does not grow with its length (issue 14, item 3).
func TestLongComputeMemoryFlat(t *testing.T) {
	s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Driver: "parallel"})
	if err != nil {
		t.Fatal(err)
	}
	n := s.m.NumCPUs()
	for i := range 3 * n {
		spawn(t, s, TaskSpec{Comm: "long", CPU: i % n, Prog: Loop(Run(1e12))})
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	maxQueue := func() int {
		q := 0
		for c := range n {
			q = max(q, s.RQ(c).events.len())
		}
		return q
	}
	s.Run(1e9)
	h1, q1 := heap(), maxQueue()
	s.Run(10e9)
	h10, q10 := heap(), maxQueue()
	t.Logf("after 1 s: heap %d B, longest event queue %d; after 10 s: %d B, %d", h1, q1, h10, q10)
	if q10 > 2*compactMin {
		t.Errorf("an event queue holds %d events after 10 s (want at most %d: stale run-ends are dropped)", q10, 2*compactMin)
	}
	if float64(h10) > 1.1*float64(h1) {
		t.Errorf("heap grew from %d B after 1 s to %d B after 10 s of virtual time (more than 10%%)", h1, h10)
	}
}

// TestCompactKeepsOrder: compaction drops only stale events and the live
// ones pop in the same order.
func TestCompactKeepsOrder(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	rq := s.RQ(0)
	live := []*sleepTimer{}
	for i := range 200 {
		tm := &sleepTimer{cancelled: i%3 != 0}
		if !tm.cancelled {
			live = append(live, tm)
		}
		rq.events.push(event{t: int64(1000 - i%50), kind: evTimer, tm: tm})
	}
	var want []queued // the live events in order: (t, kind, seq)
	for _, q := range rq.events.h {
		if !q.V.tm.cancelled {
			want = append(want, q)
		}
	}
	slices.SortFunc(want, func(a, b queued) int {
		if a.T != b.T {
			return cmp.Compare(a.T, b.T)
		}
		return cmp.Compare(a.K, b.K)
	})
	rq.compactEvents()
	if rq.events.len() != len(live) {
		t.Fatalf("compacted queue holds %d events, want the %d live ones", rq.events.len(), len(live))
	}
	for i := range want {
		// Each event has its own timer: the timer names it.
		if got := rq.events.pop(); got.tm != want[i].V.tm || got.t != want[i].T {
			t.Fatalf("pop %d: got the event at t %d, want the one at t %d (seq %d)", i, got.t, want[i].T, want[i].K&(1<<56-1))
		}
	}
}
