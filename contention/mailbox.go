package contention

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Host synchronization for the parallel driver (emu/driver.go), kept here
// with the other raw atomics so that emu holds none.

// Mailbox hands a worker goroutine its epochs. An epoch lasts a few
// hundred host µs, most of it the barrier's weave on the engine's
// goroutine; a worker that slept on a channel between epochs paid a futex
// wake-up and a thread hand-over each time (9% of a 2-core run's host
// time). So a worker that has stepped its shard spins for the next epoch
// for up to WorkerSpin, yielding its P, and only then parks on wake.
// Posting and taking are sequentially consistent atomics: a worker parks
// only after it has set sleeping and seen no new post, and the engine
// wakes it whenever it posts while sleeping is set, so no post is lost.
// Init before use.
type Mailbox struct {
	seq      atomic.Uint64 // posts so far; the epoch's end is in end
	end      atomic.Int64
	quit     atomic.Bool
	sleeping atomic.Bool
	wake     chan struct{} // capacity 1
	_        [64]byte      // one mailbox per cache line (written by both sides)
}

// WorkerSpin is how long a worker polls its mailbox after an epoch before
// it parks.
const WorkerSpin = 2 * time.Millisecond

// Init makes b ready to post to.
func (b *Mailbox) Init() { b.wake = make(chan struct{}, 1) }

// Next waits for a post after the seen-th and returns its number: it
// spins for WorkerSpin, then parks until the engine posts.
func (b *Mailbox) Next(seen uint64) uint64 {
	deadline := time.Now().Add(WorkerSpin)
	for k := 0; ; k++ {
		if q := b.seq.Load(); q != seen {
			return q
		}
		if k%64 == 63 && time.Now().After(deadline) {
			break
		}
		runtime.Gosched()
	}
	for {
		b.sleeping.Store(true)
		if q := b.seq.Load(); q != seen {
			b.sleeping.Store(false)
			return q
		}
		<-b.wake
		b.sleeping.Store(false)
	}
}

// Post hands the worker an epoch (or, with end < 0, the order to quit).
func (b *Mailbox) Post(end int64) {
	if end < 0 {
		b.quit.Store(true)
	} else {
		b.end.Store(end)
	}
	b.seq.Add(1)
	if b.sleeping.Load() {
		select {
		case b.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// End is the end of the epoch last posted.
func (b *Mailbox) End() int64 { return b.end.Load() }

// Quit reports whether the worker was told to quit.
func (b *Mailbox) Quit() bool { return b.quit.Load() }

// Pending counts the work posted and not yet done (atomic): the engine's
// goroutine adds, each worker subtracts, the engine spins until zero.
type Pending struct{ n atomic.Int32 }

// Add adds d.
func (p *Pending) Add(d int32) { p.n.Add(d) }

// Load is the count.
func (p *Pending) Load() int32 { return p.n.Load() }
