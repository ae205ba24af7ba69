// Package heap is the module's one priority queue: a 4-ary min-heap kept
// in a slice, for element types that order themselves (Less). Four
// children per node halve the depth of a binary heap and lie side by side
// in memory. The order must be total for a deterministic pop order: two
// elements neither of which is Less than the other pop in either order.
package heap

// Lesser is an element type ordered by its Less method.
type Lesser[T any] interface {
	Less(T) bool
}

// Push adds x to heap h and returns the grown slice.
func Push[T Lesser[T]](h []T, x T) []T {
	h = append(h, x)
	up(h, len(h)-1)
	return h
}

// Pop removes the least element of the non-empty heap h and returns the
// shrunk slice and the element. The vacated slot is zeroed, so that the
// heap keeps no pointer it no longer holds.
func Pop[T Lesser[T]](h []T) ([]T, T) {
	top := h[0]
	n := len(h) - 1
	x := h[n]
	var zero T
	h[n] = zero
	h = h[:n]
	if n > 0 {
		down(h, 0, x)
	}
	return h, top
}

// Init orders any slice into a heap.
func Init[T Lesser[T]](h []T) {
	if len(h) < 2 {
		return
	}
	for i := (len(h) - 2) / 4; i >= 0; i-- {
		down(h, i, h[i])
	}
}

// up moves h[i] up to its place.
func up[T Lesser[T]](h []T, i int) {
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.Less(h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// down puts x at slot i, or below it where a child is less.
func down[T Lesser[T]](h []T, i int, x T) {
	n := len(h)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if h[k].Less(h[m]) {
				m = k
			}
		}
		if !h[m].Less(x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
}
