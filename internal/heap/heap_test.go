package heap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct{ k, seq int }

func (a item) Less(b item) bool { return a.k < b.k || a.k == b.k && a.seq < b.seq }

// TestHeapSorts: random pushes and pops, and Init on a random slice, pop
// in the order of a sort by Less, for sizes around the 4-ary boundaries.
func TestHeapSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 4, 5, 6, 20, 21, 85, 86, 1000} {
		var h, all []item
		for i := range n {
			x := item{rng.IntN(n/3 + 1), i}
			all = append(all, x)
			h = Push(h, x)
			if rng.IntN(4) == 0 {
				var got item
				h, got = Pop(h)
				want := slices.MinFunc(all, func(a, b item) int { return cmpItem(a, b) })
				if got != want {
					t.Fatalf("n=%d: popped %v, want %v", n, got, want)
				}
				all = slices.DeleteFunc(all, func(a item) bool { return a == want })
			}
		}
		slices.SortFunc(all, cmpItem)
		init := slices.Clone(h)
		rng.Shuffle(len(init), func(i, j int) { init[i], init[j] = init[j], init[i] })
		Init(init)
		for _, q := range [][]item{h, init} {
			for i, want := range all {
				var got item
				q, got = Pop(q)
				if got != want {
					t.Fatalf("n=%d: pop %d gave %v, want %v", n, i, got, want)
				}
			}
			if len(q) != 0 {
				t.Fatalf("n=%d: %d left", n, len(q))
			}
		}
	}
}

// TestPopZeroes: Pop clears the slot it vacates.
func TestPopZeroes(t *testing.T) {
	h := Push(Push([]*pitem(nil), &pitem{2}), &pitem{1})
	h, _ = Pop(h)
	if full := h[:2]; full[1] != nil {
		t.Errorf("vacated slot holds %v", full[1])
	}
}

type pitem struct{ k int }

func (a *pitem) Less(b *pitem) bool { return a.k < b.k }

func cmpItem(a, b item) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}
