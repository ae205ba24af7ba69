package weave

// fifo is a queue over one reused buffer, oldest first: a CPU's in-flight
// independent reads (outQueue) and its store buffer (storeBuffer). push
// and pop compact it, so a steady queue allocates nothing.
type fifo[T any] struct {
	buf  []T
	head int
}

func (q *fifo[T]) len() int  { return len(q.buf) - q.head }
func (q *fifo[T]) front() *T { return &q.buf[q.head] }
func (q *fifo[T]) live() []T { return q.buf[q.head:] }
func (q *fifo[T]) push(v T)  { q.compact(); q.buf = append(q.buf, v) }
func (q *fifo[T]) pop()      { q.head++; q.compact() }

// compact empties the buffer once its live part is gone, or moves the live
// part to the front once the buffer is full.
func (q *fifo[T]) compact() {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 0 && len(q.buf) == cap(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
}
