package emu

// evKind orders simultaneous events: a message that arrives at the same
// instant as a tick is handled first, then timers, then the tick, then the
// end of a run segment, then a new task's start.
type evKind uint8

const (
	evMsg    evKind = iota // a cross-CPU message (wake list IPI, remote enqueue)
	evTimer                // a sleeping task's hrtimer
	evTick                 // the scheduler tick
	evRunEnd               // curr's user compute segment ends
	evStart                // a new task's first return to user (ret_from_fork)
)

// event is one entry of a CPU's local event queue. Events are never
// removed; a superseded one is recognised as stale when it fires (gen).
type event struct {
	t    int64
	kind evKind
	seq  uint64
	task *Task       // evRunEnd
	gen  uint64      // evRunEnd
	tm   *sleepTimer // evTimer
	msg  *message    // evMsg
}

func (a *event) less(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap of events, owned by one CPU.
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) peek() *event { return &q.h[0] }

func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h[n] = event{}
	q.h = q.h[:n]
	i := 0
	for {
		l, r, s := 2*i+1, 2*i+2, i
		if l < n && q.h[l].less(&q.h[s]) {
			s = l
		}
		if r < n && q.h[r].less(&q.h[s]) {
			s = r
		}
		if s == i {
			break
		}
		q.h[i], q.h[s] = q.h[s], q.h[i]
		i = s
	}
	return top
}
