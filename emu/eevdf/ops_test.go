package eevdf

import (
	"fmt"
	"testing"
)

// TestRandomOps drives queues through long random sequences of the
// operations the emulator performs — wakeup enqueue (with and without lag,
// new tasks), sleep dequeue (queued or the running curr), save/restore
// dequeue without min_vruntime update, reweight of queued, running and
// sleeping entities, ticks (UpdateCurr) and context switches (pick, put
// prev, set next) — starting at init_cfs_rq()'s min_vruntime so the
// virtual clock wraps early. After every step Check() recomputes the tree
// shape, the augmentation and the sums; every few steps the pick is
// compared with the oracle and V with the big-number mean.
func TestRandomOps(t *testing.T) {
	seeds, steps := 40, 4000
	if testing.Short() {
		seeds, steps = 8, 1000
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := newRand(t, uint64(100+seed))
			q := NewQueue() // init_cfs_rq(): 2^20 ns below the wrap
			switch seed % 4 {
			case 1:
				q.MinVruntime = randBase(r)
			case 2:
				q.MinVruntime = ^uint64(1<<14 - 1) // −2^14: wraps within the run
			case 3:
				q.MinVruntime = 1<<63 - 1<<14 // int64 sign flip within the run
			}
			if seed%3 == 0 {
				q.BaseSlice = 100_000 + r.Uint64N(5_000_000)
				q.TickNsec = 1_000_000
			}
			pool := make([]*Entity, 2+r.IntN(100))
			for i := range pool {
				pool[i] = newEntity(r)
			}
			rtp := seed%4 != 0
			start := q.MinVruntime
			crossed := false
			for step := range steps {
				what := fmt.Sprintf("step %d", step)
				se := pool[r.IntN(len(pool))]
				switch op := r.IntN(10); {
				case op < 3: // wakeup
					if se.OnRQ {
						break
					}
					if se != q.Curr && r.IntN(4) == 0 {
						se.Vlag = 0 // a new task
						q.EnqueueEntity(se, true, true, true)
					} else {
						q.EnqueueEntity(se, r.IntN(8) != 0, true, false)
					}
				case op < 5: // sleep or save/restore
					if !se.OnRQ {
						break
					}
					q.UpdateCurr(r.Uint64N(200_000))
					if r.IntN(4) == 0 {
						q.DequeueEntity(se, false) // DEQUEUE_SAVE: put back at once
						q.Check()
						q.EnqueueEntity(se, true, true, false)
					} else {
						q.DequeueEntity(se, true)
					}
				case op < 6: // reweight
					q.UpdateCurr(r.Uint64N(200_000))
					if r.IntN(2) == 0 {
						q.ReweightTask(se, MinNice+r.IntN(40))
					} else {
						q.Reweight(se, randWeight(r))
					}
				case op < 8: // tick
					q.UpdateCurr(r.Uint64N(4_000_000))
				default: // schedule()
					q.UpdateCurr(r.Uint64N(1_000_000))
					checkPick(t, q, what)
					next := q.PickEEVDF(rtp)
					if next == q.Curr && next != nil && next.OnRQ {
						break // prev == next: nothing to switch
					}
					if c := q.Curr; c != nil {
						q.PutCurr(c)
					}
					if next != nil {
						q.SetCurr(next)
					}
				}
				q.Check()
				if step%16 == 0 {
					checkPick(t, q, what)
					if got, want := q.AvgVruntimeV(), oracleV(q); got != want {
						t.Fatalf("%s: V = %#x, oracle %#x", what, got, want)
					}
				}
				if int64(q.MinVruntime-start) < 0 {
					t.Fatalf("%s: min_vruntime went back from %#x to %#x", what, start, q.MinVruntime)
				}
				// V crossed 2^64 (unsigned compare flips) or 2^63 (signed).
				// (min_vruntime may legitimately stay pinned by a light,
				// far-left entity whose deadline keeps losing.)
				v := q.AvgVruntimeV()
				crossed = crossed || int64(v-start) > 0 && (v < start || int64(v) < int64(start))
			}
			if seed%4 >= 2 && !crossed {
				t.Errorf("V never crossed the wrap point (%#x → %#x)", start, q.AvgVruntimeV())
			}
		})
	}
}
