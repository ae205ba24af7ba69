package eevdf

import (
	"fmt"
	"testing"
)

// TestPlaceEntityPreservesLag: an entity enqueued with saved lag L ends up
// with V' − v = L up to rounding (|error| ≤ 1) after it has joined and
// moved V, which is what the (W + w)/W inflation is for. Also covers the
// re-enqueue of a dequeued-while-running curr, the zero-lag placement
// without PLACE_LAG or on an empty queue, and the deadline = v + vslice
// rule with PLACE_DEADLINE_INITIAL halving it for new tasks.
func TestPlaceEntityPreservesLag(t *testing.T) {
	r := newRand(t, 6)
	for i := range 5000 {
		q, _ := randQueue(r, r.IntN(30))
		what := fmt.Sprintf("iter %d", i)

		se := newEntity(r)
		if c := q.Curr; c != nil && !c.OnRQ && r.IntN(2) == 0 {
			se = c // curr re-enqueued after a DEQUEUE_SAVE-style dequeue
		}
		limit := int64(CalcDeltaFair(2*q.BaseSlice, se))
		lag := r.Int64N(2*limit+1) - limit
		se.Vlag = lag

		placeLag := r.IntN(4) != 0
		initial := r.IntN(2) == 0
		dlInitial := r.IntN(2) == 0
		nrBefore := q.NrRunning
		v0 := q.AvgVruntimeV()

		q.EnqueueEntity(se, placeLag, dlInitial, initial)
		q.Check()

		vslice := CalcDeltaFair(q.BaseSlice, se)
		if initial && dlInitial {
			vslice /= 2
		}
		if se.Slice != q.BaseSlice || se.Deadline-se.Vruntime != vslice {
			t.Fatalf("%s: slice %d deadline−v %d, want %d and %d", what, se.Slice, se.Deadline-se.Vruntime, q.BaseSlice, vslice)
		}
		if !placeLag || nrBefore == 0 {
			if se.Vruntime != v0 {
				t.Fatalf("%s: zero-lag placement at %#x, V was %#x", what, se.Vruntime, v0)
			}
			continue
		}
		got := int64(q.AvgVruntimeV() - se.Vruntime)
		if d := got - lag; d < -1 || d > 1 {
			t.Fatalf("%s: placed with vlag %d, V'−v = %d (error %d, nr %d, w %d)", what, lag, got, d, nrBefore, se.Load.Weight)
		}
		checkPick(t, q, what)
	}
}

// TestLagRoundTrip: dequeue (update_entity_lag) then enqueue
// (place_entity) of the same entity restores its clamped lag, whether it
// was queued or the running curr.
func TestLagRoundTrip(t *testing.T) {
	r := newRand(t, 7)
	for i := range 3000 {
		q, ents := randQueue(r, 2+r.IntN(30))
		se := ents[r.IntN(len(ents))]
		if !se.OnRQ {
			continue
		}
		want := q.EntityLag(se)
		q.DequeueEntity(se, r.IntN(2) == 0)
		q.Check()
		if se.Vlag != want {
			t.Fatalf("iter %d: saved vlag %d, EntityLag said %d", i, se.Vlag, want)
		}
		if q.NrRunning == 0 {
			continue
		}
		q.EnqueueEntity(se, true, true, false)
		q.Check()
		if d := int64(q.AvgVruntimeV()-se.Vruntime) - want; d < -1 || d > 1 {
			t.Fatalf("iter %d: lag %d came back as %d", i, want, want+d)
		}
	}
}

// TestEntityLagClamp pins update_entity_lag()'s bound
// calc_delta_fair(max(2·slice, TICK_NSEC)).
func TestEntityLagClamp(t *testing.T) {
	q := NewQueue()
	a := &Entity{Vruntime: q.MinVruntime, OnRQ: true, Slice: DefaultBaseSlice}
	a.Load.SetNice(0)
	b := &Entity{Vruntime: q.MinVruntime + 100_000_000, OnRQ: true, Slice: 1000}
	b.Load.SetNice(0)
	for _, se := range []*Entity{a, b} {
		q.Enqueue(se)
		q.NrRunning++
	}
	// V = min + 50 ms: a is owed 50 ms, b owes 50 ms; a's limit is
	// 2·3 ms, b's is TICK_NSEC = 4 ms since 2·1 µs is smaller.
	if got := q.EntityLag(a); got != 6_000_000 {
		t.Errorf("EntityLag(a) = %d, want +6 ms", got)
	}
	if got := q.EntityLag(b); got != -DefaultTickNsec {
		t.Errorf("EntityLag(b) = %d, want −TICK_NSEC", got)
	}
	c := &Entity{Vruntime: q.AvgVruntimeV() - 1000, Slice: DefaultBaseSlice}
	c.Load.SetNice(19)
	if got := q.EntityLag(c); got != 1000 {
		t.Errorf("EntityLag(c) = %d, want 1000 (inside the clamp)", got)
	}
}

// TestUpdateDeadline: the deadline renews only once vruntime reaches it,
// to vruntime + calc_delta_fair(slice), which also drops RUN_TO_PARITY.
func TestUpdateDeadline(t *testing.T) {
	q := NewQueue()
	se := &Entity{}
	se.Load.SetNice(5)
	q.EnqueueEntity(se, true, true, true)
	other := &Entity{}
	other.Load.SetNice(0)
	q.EnqueueEntity(other, true, true, true)
	q.SetCurr(q.PickEEVDF(true))
	c := q.Curr
	if c.Vlag != int64(c.Deadline) {
		t.Fatalf("SetCurr did not stamp the protection marker")
	}
	d0 := c.Deadline
	step := (d0 - c.Vruntime) / 3
	for c.Vruntime+step < d0 {
		if q.UpdateCurr(step * c.Load.Weight / Nice0Load) {
			t.Fatalf("renewed early at v=%#x < d=%#x", c.Vruntime, d0)
		}
		if q.PickEEVDF(true) != c {
			t.Fatalf("protected curr lost the CPU before its deadline")
		}
	}
	if !q.UpdateCurr(d0 - c.Vruntime + 10) {
		// calc_delta_fair rounds down; one more push must renew.
		if !q.UpdateCurr(1_000_000) {
			t.Fatalf("no renewal after passing the deadline")
		}
	}
	if c.Deadline != c.Vruntime+CalcDeltaFair(q.BaseSlice, c) {
		t.Fatalf("renewed deadline %#x, want v + vslice", c.Deadline)
	}
	if c.Vlag == int64(c.Deadline) {
		t.Fatalf("renewal kept RUN_TO_PARITY protection")
	}
	q.Check()
}
