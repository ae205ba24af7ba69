package heap

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// item is a heap item whose value names it, so that equal keys can be
// told apart.
type item = Item[int]

// TestHeapSorts: random pushes and pops, and Init on a random slice, pop
// in the order of a sort by (T, K), for sizes around the 4-ary boundaries
// and keys that tie in T (K decides) or in both.
func TestHeapSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 4, 5, 6, 20, 21, 85, 86, 1000} {
		var h, all []item
		for i := range n {
			x := item{T: int64(rng.IntN(n/3+1) - n/6), K: uint64(rng.IntN(3)) << 62, V: i}
			if rng.IntN(2) == 0 {
				x.K |= uint64(i) // a total order for half of them
			}
			all = append(all, x)
			h = Push(h, x)
			if rng.IntN(4) == 0 {
				var got item
				h, got = Pop(h)
				want := slices.MinFunc(all, cmpItem)
				if cmpItem(got, want) != 0 {
					t.Fatalf("n=%d: popped %v, want %v", n, got, want)
				}
				k := slices.IndexFunc(all, func(a item) bool { return a.V == got.V })
				if k < 0 {
					t.Fatalf("n=%d: popped %v, never pushed or popped twice", n, got)
				}
				all = slices.Delete(all, k, k+1)
			}
		}
		slices.SortFunc(all, cmpItem)
		init := slices.Clone(h)
		rng.Shuffle(len(init), func(i, j int) { init[i], init[j] = init[j], init[i] })
		Init(init)
		for _, q := range [][]item{h, init} {
			seen := map[int]bool{}
			for i, want := range all {
				var got item
				q, got = Pop(q)
				if cmpItem(got, want) != 0 || seen[got.V] {
					t.Fatalf("n=%d: pop %d gave %v, want %v", n, i, got, want)
				}
				seen[got.V] = true
			}
			if len(q) != 0 {
				t.Fatalf("n=%d: %d left", n, len(q))
			}
		}
	}
}

// TestLess: (T, K) in that order, K unsigned.
func TestLess(t *testing.T) {
	for _, tc := range []struct {
		a, b item
		want bool
	}{
		{item{T: 1, K: 9}, item{T: 2, K: 0}, true},
		{item{T: 2, K: 0}, item{T: 1, K: 9}, false},
		{item{T: -1, K: 0}, item{T: 0, K: 0}, true},
		{item{T: 5, K: 1}, item{T: 5, K: 2}, true},
		{item{T: 5, K: 1 << 63}, item{T: 5, K: 1}, false},
		{item{T: 5, K: 3, V: 1}, item{T: 5, K: 3, V: 0}, false},
	} {
		if got := Less(&tc.a, &tc.b); got != tc.want {
			t.Errorf("Less(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestPopZeroes: Pop clears the slot it vacates.
func TestPopZeroes(t *testing.T) {
	h := Push(Push([]Item[*int](nil), Item[*int]{T: 2, V: new(int)}), Item[*int]{T: 1, V: new(int)})
	h, _ = Pop(h)
	if full := h[:2]; full[1].V != nil {
		t.Errorf("vacated slot holds %v", full[1])
	}
}

func cmpItem(a, b item) int {
	if a.T != b.T {
		return cmp.Compare(a.T, b.T)
	}
	return cmp.Compare(a.K, b.K)
}
