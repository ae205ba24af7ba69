package emu

import "github.com/rqemu/rqemu/internal/heap"

// evKind orders simultaneous events: a message that arrives at the same
// instant as a tick is handled first, then timers, then the tick, then the
// end of a run segment, then a new task's start, then a delayed fork (two
// forks at one instant on one CPU run in creation order: seq).
type evKind uint8

const (
	evMsg    evKind = iota // a cross-CPU message (wake list IPI, remote enqueue)
	evTimer                // a sleeping task's hrtimer
	evTick                 // the scheduler tick
	evRunEnd               // curr's user compute segment ends
	evStart                // a new task's first return to user (ret_from_fork)
	evFork                 // a delayed wake_up_new_task() (Config.StartJitter)
	evAction               // curr's parked or held action goes on (hold.go)
)

// event is one entry of a CPU's local event queue. A superseded one is
// recognised as stale when it reaches the top (gen), or dropped earlier by
// compactEvents.
type event struct {
	t    int64
	kind evKind
	task *Task       // evRunEnd, evFork
	gen  uint64      // evRunEnd
	tm   *sleepTimer // evTimer
	msg  *message    // evMsg
}

// queued is an event in the queue: ordered by (t, kind, seq), a total
// order, as the heap's keys T = t and K = kind<<56 | seq (seq, the
// queue's push count, stays below 1<<56: push panics if not).
type queued = heap.Item[event]

// eventQueue is a min-heap of events (internal/heap), owned by one CPU.
type eventQueue struct {
	h   []queued
	seq uint64
	// compactAt is the length at which pushRunEnd next compacts.
	compactAt int
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) peek() *event { return &q.h[0].V }

func (q *eventQueue) push(e event) {
	q.seq++
	if q.seq >= 1<<56 {
		panic("emu: event queue: 1<<56 pushes")
	}
	q.h = heap.Push(q.h, queued{T: e.t, K: uint64(e.kind)<<56 | q.seq, V: e})
}

func (q *eventQueue) pop() event {
	var top queued
	q.h, top = heap.Pop(q.h)
	return top.V
}

// compactMin is the smallest queue that pushRunEnd compacts.
const compactMin = 64

// pushRunEnd queues the end of curr's compute segment. Every earlier
// run-end on this CPU is then stale for good (a segment's generation only
// grows), yet it would stay in the heap until its time: a CPU running one
// long compute pushes a new one at every tick. So when the queue has
// doubled since it was last compacted, the stale events are dropped. The
// heap's order (t, kind, seq) is total, so which entries it holds never
// changes the order the live ones pop in: compaction is invisible to the
// run, and the queue stays within twice its live events.
func (rq *RQ) pushRunEnd(t *Task) {
	q := &rq.events
	if len(q.h) >= max(q.compactAt, compactMin) {
		rq.compactEvents()
		q.compactAt = 2 * len(q.h)
	}
	q.push(event{t: rq.now + (t.remaining*1000+t.segRate-1)/t.segRate, kind: evRunEnd, task: t, gen: t.segGen})
}

// compactEvents removes the stale events (superseded run-ends, cancelled
// timers) and restores the heap. stale() reads a task only while it is this
// CPU's curr, so it is safe under the parallel driver.
func (rq *RQ) compactEvents() {
	q := &rq.events
	keep := q.h[:0]
	for i := range q.h {
		if !rq.stale(&q.h[i].V) {
			keep = append(keep, q.h[i])
		}
	}
	clear(q.h[len(keep):])
	q.h = keep
	heap.Init(q.h)
}
