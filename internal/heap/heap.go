// Package heap is the module's one priority queue: a 4-ary min-heap kept
// in a slice, of items ordered by two integer keys, T then K, each with a
// value of the caller's. Four children per node halve the depth of a
// binary heap and lie side by side in memory. The keys are plain fields,
// so the comparison is compiled into the heap's loops (a Less method of
// the element type, called through the generic dictionary, is not
// inlined). Items equal in both keys pop in either order: a caller that
// needs a deterministic pop order makes (T, K) total.
package heap

// Item is one element of a heap: ordered by T, then by K; V rides along.
type Item[V any] struct {
	T int64
	K uint64
	V V
}

// Less orders items by (T, K).
func Less[V any](a, b *Item[V]) bool { return a.T < b.T || a.T == b.T && a.K < b.K }

// Push adds x to heap h and returns the grown slice.
func Push[V any](h []Item[V], x Item[V]) []Item[V] {
	h = append(h, x)
	up(h, len(h)-1)
	return h
}

// Pop removes the least item of the non-empty heap h and returns the
// shrunk slice and the item. The vacated slot is zeroed, so that the heap
// keeps no pointer it no longer holds.
func Pop[V any](h []Item[V]) ([]Item[V], Item[V]) {
	top := h[0]
	n := len(h) - 1
	x := h[n]
	h[n] = Item[V]{}
	h = h[:n]
	if n > 0 {
		down(h, 0, &x)
	}
	return h, top
}

// Init orders any slice into a heap.
func Init[V any](h []Item[V]) {
	if len(h) < 2 {
		return
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		x := h[i]
		down(h, i, &x)
	}
}

// up moves h[i] up to its place.
func up[V any](h []Item[V], i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !Less(&x, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// down puts *x at slot i, or below it where a child is less.
func down[V any](h []Item[V], i int, x *Item[V]) {
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if Less(&h[k], &h[m]) {
				m = k
			}
		}
		if !Less(&h[m], x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = *x
}
