package eevdf

import (
	"fmt"
	"math/big"
	"testing"
)

// TestAvgVruntimeOracle: AvgVruntimeV is floor(Σ w_i·v_i / Σ w_i) over the
// tree and an on_rq curr, exactly (math/big, other reference point), and
// it is the zero-lag point: Σ w_i·(V − v_i) lies in (−Σw, 0], i.e. the
// lags sum to zero up to the floor. Eligible and VruntimeEligible agree
// with the exact rational test, and V itself is always eligible.
func TestAvgVruntimeOracle(t *testing.T) {
	r := newRand(t, 3)
	for i := range 3000 {
		q, ents := randQueue(r, r.IntN(64))
		what := fmt.Sprintf("iter %d", i)
		v := q.AvgVruntimeV()
		if want := oracleV(q); v != want {
			t.Fatalf("%s: AvgVruntimeV = %#x, want %#x", what, v, want)
		}
		run := runnable(q)
		if len(run) > 0 {
			lagSum, w := bigSums(run, v) // Σ w_i·(v_i − V)
			lagSum.Neg(lagSum)           // Σ w_i·(V − v_i)
			if lagSum.Sign() > 0 || new(big.Int).Neg(lagSum).Cmp(w) >= 0 {
				t.Fatalf("%s: Σ w·(V − v) = %v, want in (−%v, 0]", what, lagSum, w)
			}
			if !q.VruntimeEligible(v) {
				t.Fatalf("%s: V = %#x itself is not eligible", what, v)
			}
			for _, x := range []uint64{v - 1, v + 1, v + 1<<20} {
				if got, want := q.VruntimeEligible(x), oracleEligible(q, &Entity{Vruntime: x}); got != want {
					t.Fatalf("%s: VruntimeEligible(V%+d) = %t, oracle %t", what, int64(x-v), got, want)
				}
			}
		}
		el := newEligibility(q)
		for _, se := range ents {
			if got, want := q.Eligible(se), el.ok(se.Vruntime); got != want {
				t.Fatalf("%s: Eligible(%v) = %t, oracle %t (V=%#x)", what, se, got, want, v)
			}
		}
	}
}

// TestAvgVruntimeTable pins the floor bias for negative sums and the empty
// and single-entity cases.
func TestAvgVruntimeTable(t *testing.T) {
	q := NewQueue()
	if got := q.AvgVruntimeV(); got != InitMinVruntime {
		t.Fatalf("empty V = %#x, want min_vruntime %#x", got, InitMinVruntime)
	}
	a := &Entity{Vruntime: InitMinVruntime - 3, OnRQ: true}
	a.Load.SetNice(0)
	q.Enqueue(a)
	q.NrRunning++
	if got := q.AvgVruntimeV(); got != a.Vruntime {
		t.Fatalf("single-entity V = %#x, want its vruntime %#x", got, a.Vruntime)
	}
	// keys −3 and 0 at equal weight: mean −1.5 floors to −2, not −1.
	b := &Entity{Vruntime: InitMinVruntime, OnRQ: true}
	b.Load.SetNice(0)
	q.Enqueue(b)
	q.NrRunning++
	if got, want := q.AvgVruntimeV(), InitMinVruntime-2; got != want {
		t.Fatalf("V = %#x, want floor(-1.5) → %#x", got, want)
	}
	if q.Eligible(b) {
		t.Fatalf("b at key 0 > V should be ineligible")
	}
	if !q.Eligible(a) {
		t.Fatalf("a at key −3 < V should be eligible")
	}
	// Crossing the wrap: V is continuous across 2^64.
	q2 := NewQueue()
	q2.MinVruntime = ^uint64(9)
	for _, v := range []uint64{^uint64(9), 10} {
		se := &Entity{Vruntime: v, OnRQ: true}
		se.Load.SetNice(0)
		q2.Enqueue(se)
		q2.NrRunning++
	}
	if got := q2.AvgVruntimeV(); got != 0 {
		t.Fatalf("V across wrap = %#x, want 0", got)
	}
}

// TestUpdateMinVruntime: min_vruntime follows min(curr, leftmost), never
// goes back, and the compensation keeps V and the sums consistent.
func TestUpdateMinVruntime(t *testing.T) {
	r := newRand(t, 4)
	for i := range 2000 {
		q, _ := randQueue(r, r.IntN(20))
		before := q.MinVruntime
		v := q.AvgVruntimeV()
		q.UpdateMinVruntime()
		q.Check()
		if int64(q.MinVruntime-before) < 0 {
			t.Fatalf("iter %d: min_vruntime went back from %#x to %#x", i, before, q.MinVruntime)
		}
		if got := q.AvgVruntimeV(); got != v {
			t.Fatalf("iter %d: V moved from %#x to %#x", i, v, got)
		}
		want := before
		var m *Entity
		if c := q.Curr; c != nil && c.OnRQ {
			m = c
		}
		if l := q.PickFirst(); l != nil && (m == nil || int64(l.Vruntime-m.Vruntime) < 0) {
			m = l
		}
		if m != nil && int64(m.Vruntime-before) > 0 {
			want = m.Vruntime
		}
		if q.MinVruntime != want {
			t.Fatalf("iter %d: min_vruntime %#x, want %#x", i, q.MinVruntime, want)
		}
	}
}
