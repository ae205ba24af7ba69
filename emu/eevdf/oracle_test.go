package eevdf

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// Brute-force oracles and random queue builders shared by the tests. The
// oracles use math/big and a reference point other than MinVruntime, so
// they share no arithmetic with the code under test.

func newRand(t testing.TB, seed uint64) *rand.Rand {
	t.Helper()
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// randWeight returns a scaled weight: mostly nice-table weights, sometimes
// arbitrary group-share-like ones (MIN_SHARES … 2^18, scaled).
func randWeight(r *rand.Rand) uint64 {
	if r.IntN(4) == 0 {
		return ScaleLoad(2 + r.Uint64N(1<<18))
	}
	return NiceToWeight(MinNice + r.IntN(MaxNice-MinNice+1))
}

func newEntity(r *rand.Rand) *Entity {
	se := &Entity{}
	if r.IntN(2) == 0 {
		se.Load.SetNice(MinNice + r.IntN(MaxNice-MinNice+1))
	} else {
		se.Load.Set(randWeight(r))
	}
	se.Slice = DefaultBaseSlice
	return se
}

// randBase returns a v0: the kernel's initial value, one right at the
// uint64 wrap, one at the int64 sign flip, or anywhere.
func randBase(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return InitMinVruntime
	case 1:
		return -uint64(r.IntN(1 << 24))
	case 2:
		return 1<<63 - uint64(r.IntN(1<<24))
	default:
		return r.Uint64()
	}
}

// randQueue builds a queue of n on_rq entities (one of them possibly Curr)
// with vruntimes and deadlines scattered around a random v0, ties
// included. Keys stay within ±2^30 so that key·load fits in int64, the
// same assumption the kernel makes.
func randQueue(r *rand.Rand, n int) (*Queue, []*Entity) {
	q := NewQueue()
	q.MinVruntime = randBase(r)
	var ents []*Entity
	spreadV := uint64(1) << (4 + r.IntN(27))
	spreadD := uint64(1) << (4 + r.IntN(27))
	for range n {
		se := newEntity(r)
		if len(ents) > 0 && r.IntN(8) == 0 {
			se.Vruntime = ents[r.IntN(len(ents))].Vruntime // vruntime tie
		} else {
			se.Vruntime = q.MinVruntime - spreadV/4 + r.Uint64N(spreadV)
		}
		if len(ents) > 0 && r.IntN(8) == 0 {
			se.Deadline = ents[r.IntN(len(ents))].Deadline // deadline tie
		} else {
			se.Deadline = se.Vruntime - spreadD/4 + r.Uint64N(spreadD)
		}
		se.OnRQ = true
		q.Enqueue(se)
		q.NrRunning++
		ents = append(ents, se)
	}
	if n > 0 && r.IntN(3) != 0 {
		c := ents[r.IntN(n)]
		q.SetCurr(c) // stamps the RUN_TO_PARITY marker
		switch r.IntN(4) {
		case 0:
			c.Vlag = 0 // protection gone (deadline renewed since the pick)
		case 1:
			// curr was dequeued while running (sleep): not on_rq.
			c.OnRQ = false
			q.NrRunning--
		}
	}
	q.Check()
	return q, ents
}

// runnable returns the entities V is taken over: the tree and an on_rq Curr.
func runnable(q *Queue) []*Entity {
	var out []*Entity
	q.Walk(func(se *Entity) bool { out = append(out, se); return true })
	if c := q.Curr; c != nil && c.OnRQ {
		out = append(out, c)
	}
	return out
}

// bigSums returns S = Σ w_i·(v_i − ref) and W = Σ w_i over ents, exactly.
func bigSums(ents []*Entity, ref uint64) (s, w *big.Int) {
	s, w = new(big.Int), new(big.Int)
	for _, se := range ents {
		wi := new(big.Int).SetUint64(ScaleLoadDown(se.Load.Weight))
		s.Add(s, new(big.Int).Mul(wi, big.NewInt(int64(se.Vruntime-ref))))
		w.Add(w, wi)
	}
	return s, w
}

// oracleV is floor(Σ w_i·v_i / Σ w_i) over the runnable entities, computed
// relative to the first one's vruntime; MinVruntime when there are none.
func oracleV(q *Queue) uint64 {
	ents := runnable(q)
	if len(ents) == 0 {
		return q.MinVruntime
	}
	ref := ents[0].Vruntime
	s, w := bigSums(ents, ref)
	// big.Int.Div is Euclidean; with w > 0 that is floor division.
	return ref + uint64(new(big.Int).Div(s, w).Int64())
}

// eligibility is the exact test V ≥ v_e, i.e. (v_e − ref)·W ≤ S, with the
// sums taken once over the runnable entities.
type eligibility struct {
	ref  uint64
	s, w *big.Int
}

func newEligibility(q *Queue) eligibility {
	ents := runnable(q)
	if len(ents) == 0 {
		return eligibility{}
	}
	ref := ents[0].Vruntime
	s, w := bigSums(ents, ref)
	return eligibility{ref, s, w}
}

func (el eligibility) ok(v uint64) bool {
	if el.w == nil {
		return true
	}
	lhs := new(big.Int).Mul(big.NewInt(int64(v-el.ref)), el.w)
	return lhs.Cmp(el.s) <= 0
}

// oracleEligible reports V ≥ v_e exactly.
func oracleEligible(q *Queue, e *Entity) bool {
	return newEligibility(q).ok(e.Vruntime)
}

// oraclePick returns what EEVDF must pick: the set of acceptable entities
// (several only on exact deadline ties) or nil for an empty queue.
func oraclePick(q *Queue, runToParity bool) []*Entity {
	ents := runnable(q)
	switch len(ents) {
	case 0:
		return nil
	case 1:
		return ents
	}
	el := newEligibility(q)
	c := q.Curr
	if runToParity && c != nil && c.OnRQ && el.ok(c.Vruntime) && c.Vlag == int64(c.Deadline) {
		return []*Entity{c}
	}
	var elig []*Entity
	for _, se := range ents {
		if el.ok(se.Vruntime) {
			elig = append(elig, se)
		}
	}
	best := elig[0].Deadline
	for _, se := range elig {
		if int64(se.Deadline-best) < 0 {
			best = se.Deadline
		}
	}
	var out []*Entity
	for _, se := range elig {
		if se.Deadline == best {
			out = append(out, se)
		}
	}
	return out
}

func contains(set []*Entity, se *Entity) bool {
	for _, x := range set {
		if x == se {
			return true
		}
	}
	return false
}

// checkPick compares PickEEVDF with the oracle for both RUN_TO_PARITY
// settings.
func checkPick(t testing.TB, q *Queue, what string) {
	t.Helper()
	for _, rtp := range []bool{false, true} {
		want := oraclePick(q, rtp)
		got := q.PickEEVDF(rtp)
		if want == nil {
			if got != nil {
				t.Fatalf("%s: rtp=%t: empty queue picked %v", what, rtp, got)
			}
			continue
		}
		if !contains(want, got) {
			t.Fatalf("%s: rtp=%t: picked %v (eligible=%t), want one of %v\ncurr=%v V=%#x",
				what, rtp, got, got != nil && oracleEligible(q, got), want, q.Curr, oracleV(q))
		}
	}
	if q.PickFallbacks != 0 {
		t.Fatalf("%s: pick fell back to leftmost %d times", what, q.PickFallbacks)
	}
}
