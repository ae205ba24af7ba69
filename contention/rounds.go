package contention

import (
	"sync/atomic"
	"time"
)

// Rounds hands the parallel driver's rounds of work (emu/driver.go: the
// CPUs to step to an epoch's end) to the goroutines that step them. The
// items of a round are split into shards, one per goroutine; each claims
// items from its own shard, then from the others' (work stealing), one
// atomic compare-and-swap per item. The engine's goroutine opens a round,
// claims like any worker, and waits only for the items still being
// stepped (Done): a worker that wakes late finds the round claimed and
// costs the engine nothing, so the parallel driver never waits on a
// wake-up.
//
// A shard's cursor packs the round's number, the next item and the
// shard's length in one word, so that a worker holding a stale cursor
// (an earlier round) cannot claim: its CAS fails. The items and the end
// are written before the cursors are stored and rewritten only after
// every claimed item is done, so a claimer reads them race-free.
//
// Waiting spins for a short while (SpinFor) on plain atomic loads, then
// parks: a yield loop (runtime.Gosched) took the scheduler's lock on
// every turn, and a long spin takes the host CPU from the engine's own
// goroutine when the host is busy (both goroutines share one autogroup).
type Rounds struct {
	cur   []cursor
	items [][]int // items[i]: shard i's items; written by Open only
	end   atomic.Int64
	total atomic.Int64
	round uint64 // the engine's count of rounds opened

	done    paddedInt64 // items of the round stepped
	seq     paddedUint64
	quit    atomic.Bool
	workers []parker // one per worker goroutine
	engine  parker
}

// SpinFor is how long a waiter polls before it parks.
const SpinFor = 20 * time.Microsecond

type cursor struct {
	v atomic.Uint64 // round<<32 | next<<16 | len
	_ [56]byte
}

type paddedInt64 struct {
	atomic.Int64
	_ [56]byte
}

type paddedUint64 struct {
	atomic.Uint64
	_ [56]byte
}

// parker is a goroutine that parks on wake once it has set sleeping and
// seen nothing new; the other side sends after its change whenever it
// sees sleeping set (sequentially consistent atomics: no change is lost).
type parker struct {
	sleeping atomic.Bool
	wake     chan struct{} // capacity 1
	_        [48]byte
}

func (p *parker) init() { p.wake = make(chan struct{}, 1) }

// kick wakes p if it is parked (or about to park).
func (p *parker) kick() {
	if p.sleeping.Load() {
		select {
		case p.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// await returns once ready does, spinning for SpinFor first.
func (p *parker) await(ready func() bool) {
	deadline := time.Now().Add(SpinFor)
	for k := 0; !ready(); k++ {
		if k%64 != 63 || time.Now().Before(deadline) {
			continue
		}
		for {
			p.sleeping.Store(true)
			if ready() {
				p.sleeping.Store(false)
				return
			}
			<-p.wake
			p.sleeping.Store(false)
		}
	}
}

// MaxRoundItems bounds a shard's items in a round.
const MaxRoundItems = 1<<16 - 1

// NewRounds makes the hand-out for shards shards and workers goroutines
// besides the engine's.
func NewRounds(shards, workers int) *Rounds {
	r := &Rounds{cur: make([]cursor, shards), items: make([][]int, shards), workers: make([]parker, workers)}
	for i := range r.workers {
		r.workers[i].init()
	}
	r.engine.init()
	return r
}

// Open starts a round (engine only, after Wait): items[i] are shard i's
// (at most MaxRoundItems each), end the value Claim returns with them.
// With wake, parked workers are woken to claim; otherwise only those
// still spinning take part.
func (r *Rounds) Open(end int64, items [][]int, wake bool) {
	r.round++
	r.end.Store(end)
	var n int64
	for i, it := range items {
		if len(it) > MaxRoundItems {
			panic("contention: Rounds.Open: a shard over MaxRoundItems")
		}
		r.items[i] = it
		n += int64(len(it))
	}
	r.done.Store(0)
	r.total.Store(n)
	for i := range r.cur {
		r.cur[i].v.Store(r.round<<32 | uint64(len(r.items[i])))
	}
	r.seq.Add(1)
	if wake {
		for i := range r.workers {
			r.workers[i].kick()
		}
	}
}

// Claim takes the next item of the round, from shard home first, then
// from the others in order, and the round's end; ok is false once every
// item is claimed.
func (r *Rounds) Claim(home int) (item int, end int64, ok bool) {
	n := len(r.cur)
	for k := range n {
		sh := home + k
		if sh >= n {
			sh -= n
		}
		c := &r.cur[sh].v
		for {
			v := c.Load()
			next, ln := v>>16&0xffff, v&0xffff
			if next >= ln {
				break
			}
			if c.CompareAndSwap(v, v+1<<16) {
				return r.items[sh][next], r.end.Load(), true
			}
		}
	}
	return 0, 0, false
}

// Done reports n claimed items stepped: a claimer reports its items once
// Claim has none left for it (one shared add per claimer and round, not
// one per item).
func (r *Rounds) Done(n int) {
	if n > 0 && r.done.Add(int64(n)) == r.total.Load() {
		r.engine.kick()
	}
}

// Wait returns when every item of the round is done (engine only).
func (r *Rounds) Wait() {
	total := r.total.Load()
	r.engine.await(func() bool { return r.done.Load() == total })
}

// Next waits for a round after the seen-th (or Stop) and returns its
// number: worker i's wait.
func (r *Rounds) Next(i int, seen uint64) uint64 {
	r.workers[i].await(func() bool { return r.seq.Load() != seen || r.quit.Load() })
	return r.seq.Load()
}

// Stopped reports whether Stop was called.
func (r *Rounds) Stopped() bool { return r.quit.Load() }

// Stop tells every worker to return from Next.
func (r *Rounds) Stop() {
	r.quit.Store(true)
	r.seq.Add(1)
	for i := range r.workers {
		r.workers[i].kick()
	}
}
