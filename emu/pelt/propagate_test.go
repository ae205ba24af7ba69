package pelt

import (
	"math/rand/v2"
	"testing"
)

// hierarchy is root ← gse (the group's entity on root) ↔ grq (the group's
// runqueue) ← tasks, tasks[0] always running, the others queued behind it.
type hierarchy struct {
	root, gse, grq    Avg
	tasks             []Avg // nice 0
	rootProp, grqProp Propagation
	gseW, grqW        uint64 // se_weight(gse), scale_load_down(grq weight)
}

// run ages everything to now as update_load_avg() would on a tick: the
// tasks and their runqueue, then the group entity, its parent, and
// propagation. It reports whether a pending change was propagated.
func (h *hierarchy) run(now uint64) bool {
	n := uint64(len(h.tasks))
	for j := range h.tasks {
		UpdateSE(now, &h.tasks[j], true, 1, j == 0, 1024)
	}
	UpdateCfsRqLoadAvg(now, &h.grq, Removed{}, &h.grqProp, h.grqW, n, true)
	UpdateSE(now, &h.gse, true, n, true, h.gseW)
	UpdateCfsRqLoadAvg(now, &h.root, Removed{}, &h.rootProp, h.gseW, n, true)
	return PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW)
}

func newHierarchy(until uint64) *hierarchy {
	h := &hierarchy{tasks: make([]Avg, 1), gseW: 1024, grqW: 1024}
	for now := uint64(1_000_000); now <= until; now += 1_000_000 {
		if h.run(now) {
			panic("propagation without a pending change")
		}
	}
	return h
}

// migrateIn attaches a task with history to grq, as enqueue_entity() with
// DO_ATTACH does, and queues the propagation.
func (h *hierarchy) migrateIn(p Avg) {
	Attach(&h.grq, &p, 1024)
	h.grqProp.Add(int64(p.LoadSum))
	h.grqW += 1024
	h.tasks = append(h.tasks, p)
}

// TestPropagateAttach: a task migrating into the group is attached to grq,
// and the group entity and root pick up its util and runnable exactly and
// its load through the runnable_sum estimate, at the next update.
func TestPropagateAttach(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := range 200 {
		h := newHierarchy(300*periodNs + r.Uint64N(periodNs))
		h.migrateIn(migrant(r, 1024))
		p := h.tasks[1]

		// No aging: look at the propagation alone.
		gse0, root0 := h.gse, h.root
		if !PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW) {
			t.Fatal("pending change not propagated")
		}
		if h.gse.UtilAvg != h.grq.UtilAvg || h.gse.RunnableAvg != h.grq.RunnableAvg {
			t.Fatalf("trial %d: gse util/runnable %d/%d, grq %d/%d", i,
				h.gse.UtilAvg, h.gse.RunnableAvg, h.grq.UtilAvg, h.grq.RunnableAvg)
		}
		if h.root.UtilAvg-root0.UtilAvg != h.gse.UtilAvg-gse0.UtilAvg ||
			h.root.RunnableAvg-root0.RunnableAvg != h.gse.RunnableAvg-gse0.RunnableAvg {
			t.Fatalf("trial %d: root did not take the gse delta", i)
		}
		div := uint64(Divider(&h.root))
		wantLoadSum := max(min(gse0.LoadSum+p.LoadSum, div), uint64(h.gse.UtilSum)>>10)
		if h.gse.LoadSum != wantLoadSum || h.gse.LoadAvg != h.gseW*wantLoadSum/div {
			t.Fatalf("trial %d: gse load_sum %d load_avg %d, want %d", i, h.gse.LoadSum, h.gse.LoadAvg, wantLoadSum)
		}
		if h.root.LoadAvg-root0.LoadAvg != h.gse.LoadAvg-gse0.LoadAvg {
			t.Fatalf("trial %d: root load_avg moved %d, gse %d", i,
				h.root.LoadAvg-root0.LoadAvg, h.gse.LoadAvg-gse0.LoadAvg)
		}
		if h.grqProp != (Propagation{}) {
			t.Fatalf("group propagation not consumed: %+v", h.grqProp)
		}
		if !h.rootProp.Pending || h.rootProp.RunnableSum != int64(p.LoadSum) {
			t.Fatalf("root propagation %+v, want %d", h.rootProp, p.LoadSum)
		}
		if PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW) {
			t.Fatal("propagated twice")
		}
	}
}

// TestPropagateDetach: when the task leaves again, the group entity's load
// is re-estimated down from grq's load_sum/weight, never below its running
// time.
func TestPropagateDetach(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	h := newHierarchy(300 * periodNs)
	h.migrateIn(migrant(r, 1024))
	now := h.grq.LastUpdateTime
	for range 100_000 {
		now += 1_000
		h.run(now)
	}
	// Load balancing takes the queued task away (DO_DETACH).
	p := h.tasks[1]
	h.tasks = h.tasks[:1]
	Detach(&h.grq, &p, 1024)
	h.grqProp.Add(-int64(p.LoadSum))
	h.grqW -= 1024

	gse0 := h.gse
	if !PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW) {
		t.Fatal("detach not propagated")
	}
	est := min(gse0.LoadSum, h.grq.LoadSum/h.grqW)
	want := max(est, uint64(h.gse.UtilSum)>>10)
	if h.gse.LoadSum != want || h.gse.LoadSum >= gse0.LoadSum {
		t.Fatalf("gse load_sum %d → %d, want %d (estimate %d, running %d)",
			gse0.LoadSum, h.gse.LoadSum, want, est, h.gse.UtilSum>>10)
	}
	if !h.rootProp.Pending || h.rootProp.RunnableSum >= 0 {
		t.Fatalf("root propagation %+v, want a negative sum", h.rootProp)
	}
}

// TestUpdateTgCfsLoad exercises update_tg_cfs_load()'s branches on
// hand-made values (divider 46718, weight 1024).
func TestUpdateTgCfsLoad(t *testing.T) {
	for _, c := range []struct {
		name             string
		prop             int64
		seLoadSum        uint64
		seUtilSum        uint32
		grqLoadSum, grqW uint64
		wantLoadSum      uint64
		wantRootMoved    bool
	}{
		{"add, clipped at the divider", 10000, 40000, 0, 0, 1024, 46718, true},
		{"add", 1000, 20000, 0, 0, 1024, 21000, true},
		{"remove: grq load_sum / weight", -5000, 30000, 0, 2048 * 20000, 2048, 20000, true},
		{"remove: not above the se", -5000, 10000, 5000 << 10, 2048 * 20000, 2048, 10000, false},
		{"remove: floored at running time", -5000, 30000, 25000 << 10, 2048 * 20000, 2048, 25000, true},
		{"remove from an empty grq", -5000, 30000, 0, 777, 0, 0, true},
		{"nothing pending", 0, 30000, 0, 0, 1024, 30000, false},
	} {
		se := Avg{LoadSum: c.seLoadSum, LoadAvg: 1024 * c.seLoadSum / PeltMinDivider, UtilSum: c.seUtilSum}
		root := Avg{LoadAvg: se.LoadAvg + 500, LoadSum: (se.LoadAvg + 500) * LoadAvgMax}
		grq := Avg{LoadSum: c.grqLoadSum}
		gprop := Propagation{Pending: true, RunnableSum: c.prop}
		rootAvg0 := root.LoadAvg
		UpdateTgCfsLoad(&root, &se, 1024, &grq, &gprop, c.grqW)
		if se.LoadSum != c.wantLoadSum {
			t.Errorf("%s: se load_sum %d, want %d", c.name, se.LoadSum, c.wantLoadSum)
		}
		if se.LoadAvg != 1024*se.LoadSum/PeltMinDivider {
			t.Errorf("%s: se load_avg %d for load_sum %d", c.name, se.LoadAvg, se.LoadSum)
		}
		if moved := root.LoadAvg != rootAvg0; moved != c.wantRootMoved {
			t.Errorf("%s: root load_avg %d → %d", c.name, rootAvg0, root.LoadAvg)
		}
		if gprop.RunnableSum != 0 {
			t.Errorf("%s: prop_runnable_sum left %d", c.name, gprop.RunnableSum)
		}
	}
}
