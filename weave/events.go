package weave

import "github.com/rqemu/rqemu/internal/heap"

const (
	evArrive = iota // a CPU issues its next request
	evServe         // a line may serve a waiter
	evStore         // a CPU's store buffer may issue a held-back release
)

// event is one pending event: at T (ps), K = kind<<32 | who, where who
// is the CPU for evArrive and evStore, the line for evServe. Events are processed in
// the order of (t, kind, who), the heap's (T, K); two events equal in all
// three are the same event pushed twice (a superseded wake-up or serve at
// the time of the live one), and whichever is popped first does the work,
// so no sequence number is needed to order them.
type event = heap.Item[struct{}]

func mkEvent(t int64, kind uint8, who int32) event {
	return event{T: t, K: uint64(kind)<<32 | uint64(uint32(who))}
}

func evKind(e *event) uint8 { return uint8(e.K >> 32) }
func evWho(e *event) int32  { return int32(uint32(e.K)) }

// pending reports whether any event is pending; nextT is the time of the
// next one.
func (rp *Replayer) pending() bool { return rp.hasNext || len(rp.q) > 0 }

func (rp *Replayer) nextT() int64 {
	if rp.hasNext {
		return rp.next.T
	}
	return rp.q[0].T
}

// push queues e. An event that comes before everything queued (a serve of
// a free line, a CPU going on at once: about half of all events) is kept
// in next and popped without a heap operation; the one it displaces goes
// to the heap.
func (rp *Replayer) push(e event) {
	switch {
	case rp.hasNext:
		if heap.Less(&e, &rp.next) {
			e, rp.next = rp.next, e
		}
	case len(rp.q) == 0 || heap.Less(&e, &rp.q[0]):
		rp.next, rp.hasNext = e, true
		return
	}
	rp.q = heap.Push(rp.q, e)
}

// pop takes the next event: next if set (it comes before everything in
// the heap), else the heap's least.
func (rp *Replayer) pop() event {
	if rp.hasNext {
		rp.hasNext = false
		return rp.next
	}
	var e event
	rp.q, e = heap.Pop(rp.q)
	return e
}
