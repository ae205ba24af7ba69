package weave

import ()

const (
	evArrive = iota // a CPU issues its next request
	evServe         // a line may serve a waiter
)

// event is one pending event. Events are processed in the order of
// (t, kind, who); two events equal in all three are the same event
// pushed twice (a superseded wake-up or serve at the time of the live
// one), and whichever is popped first does the work, so no sequence
// number is needed to order them.
type event struct {
	t   int64  // ps
	key uint64 // kind<<32 | who: who is the CPU for evArrive, the line for evServe
}

func mkEvent(t int64, kind uint8, who int32) event {
	return event{t: t, key: uint64(kind)<<32 | uint64(uint32(who))}
}

func (e event) kind() uint8 { return uint8(e.key >> 32) }
func (e event) who() int32  { return int32(uint32(e.key)) }

func (a event) less(b event) bool { return a.t < b.t || a.t == b.t && a.key < b.key }

// pending reports whether any event is pending; nextT is the time of the
// next one.
func (rp *Replayer) pending() bool { return rp.hasNext || len(rp.nowq) > 0 || len(rp.q) > 0 }

func (rp *Replayer) nextT() int64 {
	switch {
	case rp.hasNext:
		return rp.next.t
	case len(rp.nowq) > 0:
		return rp.cur
	}
	return rp.q[0].t
}

// beforeQueued reports whether e comes before every event in the heaps.
func (rp *Replayer) beforeQueued(e event) bool {
	return (len(rp.nowq) == 0 || e.less(event{t: rp.cur, key: rp.nowq[0]})) && (len(rp.q) == 0 || e.less(rp.q[0]))
}

// pushEvent and popEvent keep a 4-ary min-heap by event.less: half the
// depth of a binary heap, and a node's four children lie side by side.
func pushEvent(q []event, e event) []event {
	q = append(q, e)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
	return q
}

func popEvent(q []event) ([]event, event) {
	top := q[0]
	n := len(q) - 1
	e := q[n]
	q = q[:n]
	if n == 0 {
		return q, top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q[k].less(q[m]) {
				m = k
			}
		}
		if !q[m].less(e) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
	return q, top
}

// pushKey and popKey are the same heap over bare keys.
func pushKey(q []uint64, k uint64) []uint64 {
	q = append(q, k)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if k >= q[p] {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = k
	return q
}

func popKey(q []uint64) ([]uint64, uint64) {
	top := q[0]
	n := len(q) - 1
	k := q[n]
	q = q[:n]
	if n == 0 {
		return q, top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if q[j] < q[m] {
				m = j
			}
		}
		if q[m] >= k {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = k
	return q, top
}

// push queues e. An event that comes before everything queued (a serve of
// a free line, a CPU going on at once: about half of all events) is kept
// in next and popped without a heap operation; the one it displaces goes
// to the heaps. Those hold the others: in nowq if at the current time,
// else in q.
func (rp *Replayer) push(e event) {
	switch {
	case rp.hasNext:
		if e.less(rp.next) {
			e, rp.next = rp.next, e
		}
	case rp.beforeQueued(e):
		rp.next, rp.hasNext = e, true
		return
	}
	if e.t == rp.cur {
		rp.nowq = pushKey(rp.nowq, e.key)
		return
	}
	rp.q = pushEvent(rp.q, e)
}

// pop takes the next event: next if set (it comes before everything in
// the heaps), else the least of (t, key) over both heaps.
func (rp *Replayer) pop() event {
	if rp.hasNext {
		// Nothing queued is earlier, so nowq is empty unless next is at
		// cur: the clock may move to it.
		rp.hasNext = false
		rp.cur = rp.next.t
		return rp.next
	}
	if len(rp.nowq) > 0 && (len(rp.q) == 0 || rp.q[0].t > rp.cur || rp.q[0].key > rp.nowq[0]) {
		var k uint64
		rp.nowq, k = popKey(rp.nowq)
		return event{t: rp.cur, key: k}
	}
	var e event
	rp.q, e = popEvent(rp.q)
	rp.cur = e.t
	return e
}
