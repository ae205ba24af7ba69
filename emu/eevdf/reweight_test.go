package eevdf

import (
	"fmt"
	"testing"
)

// TestReweightPreservesLag: reweighting an on_rq entity (queued or curr)
// from w to w' sets V − v' = (V − v)·w/w' and d' − V = (d − V)·w/w'
// (truncated), keeps the real lag w·(V − v), and leaves V where it was up
// to the rounding of the pivot, which the weight ratio amplifies:
// |V' − V| ≤ (|w − w'| + w')/W' + 1. Off the queue the saved vlag scales
// by w/w'.
func TestReweightPreservesLag(t *testing.T) {
	r := newRand(t, 8)
	for i := range 5000 {
		q, ents := randQueue(r, 1+r.IntN(30))
		what := fmt.Sprintf("iter %d", i)
		se := ents[r.IntN(len(ents))]
		nw := randWeight(r)
		w := se.Load.Weight

		if !se.OnRQ {
			se.Vlag = r.Int64N(1<<31) - 1<<30
			vl := se.Vlag
			q.Reweight(se, nw)
			q.Check()
			if want := vl * int64(w) / int64(nw); se.Vlag != want {
				t.Fatalf("%s: off-queue vlag %d → %d, want %d", what, vl, se.Vlag, want)
			}
			continue
		}

		inTree := se.InTree()
		V := q.AvgVruntimeV()
		v, d := se.Vruntime, se.Deadline
		q.Reweight(se, nw)
		q.Check()
		if se.InTree() != inTree || se.Load.Weight != nw {
			t.Fatalf("%s: tree membership %t→%t, weight %d want %d", what, inTree, se.InTree(), se.Load.Weight, nw)
		}
		if want := int64(V-v) * int64(w) / int64(nw); int64(V-se.Vruntime) != want {
			t.Fatalf("%s: V−v' = %d, want (V−v)·w/w' = %d", what, int64(V-se.Vruntime), want)
		}
		if want := int64(d-V) * int64(w) / int64(nw); int64(se.Deadline-V) != want {
			t.Fatalf("%s: d'−V = %d, want (d−V)·w/w' = %d", what, int64(se.Deadline-V), want)
		}

		// V is preserved, up to the amplified rounding of the pivot.
		_, load := q.currSums()
		ow, nws := int64(ScaleLoadDown(w)), int64(ScaleLoadDown(nw))
		tol := (abs(ow-nws)+nws)/load + 1
		V2 := q.AvgVruntimeV()
		if dv := int64(V2 - V); abs(dv) > tol {
			t.Fatalf("%s: V moved by %d (tol %d) reweighting %d→%d with W'=%d", what, dv, tol, ow, nws, load)
		}
		// Real lag w·(V − v) is preserved to the same precision.
		before := ow * int64(V-v)
		after := nws * int64(V2-se.Vruntime)
		if abs(after-before) > nws*(tol+1) {
			t.Fatalf("%s: lag w·(V−v) %d → %d", what, before, after)
		}
		checkPick(t, q, what)
	}
}

// TestReweightTask: the table inverse is installed, as reweight_task()
// does, and a nice-0 task then has the identity calc_delta_fair.
func TestReweightTask(t *testing.T) {
	q := NewQueue()
	se := &Entity{}
	se.Load.SetNice(7)
	q.EnqueueEntity(se, true, true, true)
	q.ReweightTask(se, 0)
	q.Check()
	if se.Load != (LoadWeight{Nice0Load, PrioToWmult[-MinNice]}) {
		t.Fatalf("load %+v", se.Load)
	}
	if got := CalcDeltaFair(12345, se); got != 12345 {
		t.Fatalf("calc_delta_fair after reweight to nice 0: %d", got)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
