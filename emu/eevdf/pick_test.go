package eevdf

import (
	"fmt"
	"testing"
)

// TestPickEEVDFOracle: on random queues (sizes 0…200, weights from the nice
// table and arbitrary shares, vruntimes and deadlines around the wrap
// points, ties, a curr that is on_rq or not, protected or not) PickEEVDF
// returns an eligible entity with the earliest deadline among the eligible
// ones, curr included when on_rq and eligible, and a protected eligible
// curr under RUN_TO_PARITY.
func TestPickEEVDFOracle(t *testing.T) {
	iters := 4000
	if testing.Short() {
		iters = 500
	}
	r := newRand(t, 1)
	for i := range iters {
		n := r.IntN(12)
		if i%10 == 0 {
			n = r.IntN(200)
		}
		q, _ := randQueue(r, n)
		checkPick(t, q, fmt.Sprintf("iter %d n=%d", i, n))
	}
}

// TestPickFirstOracle: PickFirst is the entity with the smallest vruntime
// (the first inserted among equals), PickCFS also weighs in an on_rq curr.
func TestPickFirstOracle(t *testing.T) {
	r := newRand(t, 2)
	for i := range 2000 {
		n := r.IntN(40)
		q, ents := randQueue(r, n)
		var want *Entity
		for _, se := range ents {
			if se.InTree() && (want == nil || int64(se.Vruntime-want.Vruntime) < 0) {
				want = se
			}
		}
		if got := q.PickFirst(); got != want {
			t.Fatalf("iter %d: PickFirst = %v, want %v", i, got, want)
		}
		wantCFS := want
		if c := q.Curr; c != nil && c.OnRQ && (want == nil || int64(c.Vruntime-want.Vruntime) < 0) {
			wantCFS = c
		}
		if got := q.PickCFS(); got != wantCFS {
			t.Fatalf("iter %d: PickCFS = %v, want %v", i, got, wantCFS)
		}
	}
}

// TestPickEEVDFTable pins hand-checked cases of v6.6's rules.
func TestPickEEVDFTable(t *testing.T) {
	const base = InitMinVruntime
	type ent struct {
		v, d uint64
		nice int
	}
	tests := []struct {
		name        string
		tree        []ent
		curr        *ent // on_rq curr, nil for none
		protected   bool // curr.Vlag == curr.Deadline
		runToParity bool
		want        int // index into tree, -1 for curr
	}{
		{
			name: "single queued entity",
			tree: []ent{{base + 5000, base + 9000, 0}},
			want: 0,
		},
		{
			name: "earliest deadline among eligible wins over leftmost",
			// V = base+1000: entities at base, base+1000 eligible; base+2000 not.
			tree: []ent{{base, base + 9000, 0}, {base + 1000, base + 4000, 0}, {base + 2000, base + 1000, 0}},
			want: 1,
		},
		{
			name: "ineligible earliest deadline is skipped",
			tree: []ent{{base, base + 50, 0}, {base + 3000, base + 10, 0}},
			want: 0,
		},
		{
			name: "curr with earlier deadline stays",
			tree: []ent{{base, base + 5000, 0}},
			curr: &ent{base, base + 3000, 0},
			want: -1,
		},
		{
			// v6.6 __pick_eevdf(): best starts as curr and a node on
			// the search path replaces it only on deadline_gt(): a
			// tie met on the path keeps curr. (The random oracle
			// accepts any entity on a tie: which one wins depends on
			// where the tie sits in the tree, as the next case shows.)
			name: "curr keeps the CPU on a deadline tie met on the search path",
			tree: []ent{{base, base + 3000, 0}},
			curr: &ent{base, base + 3000, 0},
			want: -1,
		},
		{
			// ... but a tie inside the fully eligible left subtree
			// goes to the tree: "if (!best_left ||
			// (s64)(best_left->min_deadline - best->deadline) > 0)
			// return best;" is false at equality. V = base+300: the
			// root (base+100) and its left child (base) are eligible,
			// the right child (base+1000) is not.
			name: "a deadline tie in the eligible left subtree beats curr",
			tree: []ent{{base + 100, base + 9000, 0}, {base, base + 3000, 0}, {base + 1000, base + 9500, 0}},
			curr: &ent{base + 100, base + 3000, 0},
			want: 1,
		},
		{
			name: "tree entity with earlier deadline preempts unprotected curr",
			tree: []ent{{base, base + 2000, 0}},
			curr: &ent{base, base + 3000, 0},
			want: 0,
		},
		{
			name:        "RUN_TO_PARITY keeps protected eligible curr",
			tree:        []ent{{base, base + 2000, 0}},
			curr:        &ent{base, base + 3000, 0},
			protected:   true,
			runToParity: true,
			want:        -1,
		},
		{
			name:        "RUN_TO_PARITY does not keep ineligible curr",
			tree:        []ent{{base, base + 9000, 0}},
			curr:        &ent{base + 100, base + 1000, 0},
			protected:   true,
			runToParity: true,
			want:        0,
		},
		{
			name: "heavy entity drags V: light one left of it eligible",
			// V = (88761·0 + 15·10000)/(88776) ≈ 1.7 → only the heavy one
			// (and anything ≤ V) is eligible.
			tree: []ent{{base, base + 9000, -20}, {base + 10000, base + 10, 19}},
			want: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			var ents []*Entity
			for _, e := range tc.tree {
				se := &Entity{Vruntime: e.v, Deadline: e.d, OnRQ: true}
				se.Load.SetNice(e.nice)
				q.Enqueue(se)
				q.NrRunning++
				ents = append(ents, se)
			}
			var curr *Entity
			if tc.curr != nil {
				curr = &Entity{Vruntime: tc.curr.v, Deadline: tc.curr.d, OnRQ: true}
				curr.Load.SetNice(tc.curr.nice)
				q.Enqueue(curr)
				q.NrRunning++
				q.SetCurr(curr)
				if !tc.protected {
					curr.Vlag = 0
				}
			}
			q.Check()
			want := curr
			if tc.want >= 0 {
				want = ents[tc.want]
			}
			if got := q.PickEEVDF(tc.runToParity); got != want {
				t.Fatalf("picked %v, want %v", got, want)
			}
			checkPick(t, q, tc.name)
		})
	}
}
