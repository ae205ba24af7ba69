package eevdf

import (
	"fmt"
	"testing"
	"time"
)

var benchSizes = []int{1, 8, 64, 1024}

// benchQueue returns a steady-state queue of n runnable entities with a
// curr (when n > 1), built by running the scheduler for a while so that
// vruntimes, deadlines and lags look like a live runqueue.
func benchQueue(b *testing.B, n int) (*Queue, []*Entity) {
	b.Helper()
	r := newRand(b, uint64(n))
	q := NewQueue()
	ents := make([]*Entity, n)
	for i := range ents {
		ents[i] = newEntity(r)
		q.EnqueueEntity(ents[i], true, true, true)
	}
	for range 4 * n {
		q.UpdateCurr(r.Uint64N(3_000_000))
		next := q.PickEEVDF(true)
		if next != q.Curr {
			if q.Curr != nil {
				q.PutCurr(q.Curr)
			}
			q.SetCurr(next)
		}
	}
	if n == 1 && q.Curr != nil {
		q.PutCurr(q.Curr)
	}
	q.Check()
	return q, ents
}

// queued returns the entities in the tree.
func queued(q *Queue) []*Entity {
	var out []*Entity
	q.Walk(func(se *Entity) bool { out = append(out, se); return true })
	return out
}

// timerOverhead estimates the cost of one time.Now pair.
func timerOverhead() time.Duration {
	const k = 1 << 12
	t0 := time.Now()
	for range k {
		_ = time.Since(t0)
	}
	return time.Since(t0) / k
}

// BenchmarkEnqueueDequeue measures __dequeue_entity() and
// __enqueue_entity() at queue size n: each op takes a queued entity out
// and puts it back a little further right (as a preempted task returns),
// timing the two halves separately in batches of up to 32 (the cost of a
// clock read subtracted) and reporting them as ns/dequeue and ns/enqueue;
// ns/op is overridden to be one dequeue+enqueue pair.
func BenchmarkEnqueueDequeue(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			q, _ := benchQueue(b, n)
			ents := queued(q)
			batch := min(len(ents), 32)
			over := timerOverhead()
			var deq, enq time.Duration
			ops, i := 0, 0
			for b.Loop() {
				// Take a batch spread across the key range.
				t0 := time.Now()
				for k := range batch {
					q.Dequeue(ents[(i+k*len(ents)/batch)%len(ents)])
				}
				t1 := time.Now()
				for k := range batch {
					se := ents[(i+k*len(ents)/batch)%len(ents)]
					se.Vruntime += 1000
					se.Deadline += 1000
					q.Enqueue(se)
				}
				t2 := time.Now()
				deq += t1.Sub(t0) - over
				enq += t2.Sub(t1) - over
				ops += batch
				i++
				if i%1024 == 0 {
					q.UpdateMinVruntime()
				}
			}
			b.ReportMetric(float64((deq+enq).Nanoseconds())/float64(ops), "ns/op")
			b.ReportMetric(float64(deq.Nanoseconds())/float64(ops), "ns/dequeue")
			b.ReportMetric(float64(enq.Nanoseconds())/float64(ops), "ns/enqueue")
			q.Check()
		})
	}
}

// BenchmarkPickEEVDF measures pick_eevdf() on a live queue of n entities
// (curr set, RUN_TO_PARITY off so the tree search always runs).
func BenchmarkPickEEVDF(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			q, _ := benchQueue(b, n)
			var sink *Entity
			for b.Loop() {
				sink = q.PickEEVDF(false)
			}
			if sink == nil {
				b.Fatal("nil pick")
			}
		})
	}
}

// BenchmarkPickFirst measures the legacy CFS pick (cached leftmost).
func BenchmarkPickFirst(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			q, _ := benchQueue(b, n)
			var sink *Entity
			for b.Loop() {
				sink = q.PickCFS()
			}
			if sink == nil {
				b.Fatal("nil pick")
			}
		})
	}
}

// BenchmarkSchedule measures a whole context switch's timeline work:
// update_curr, pick_eevdf, put_prev_entity, set_next_entity.
func BenchmarkSchedule(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			q, _ := benchQueue(b, n)
			for b.Loop() {
				q.UpdateCurr(1_500_000)
				next := q.PickEEVDF(true)
				if next != q.Curr {
					if q.Curr != nil {
						q.PutCurr(q.Curr)
					}
					q.SetCurr(next)
				}
			}
			q.Check()
		})
	}
}

// BenchmarkRequeue is the same dequeue+enqueue pair without any clock
// reads, one entity per op: the cross-check for BenchmarkEnqueueDequeue.
func BenchmarkRequeue(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) {
			q, _ := benchQueue(b, n)
			ents := queued(q)
			i := 0
			for b.Loop() {
				se := ents[i%len(ents)]
				q.Dequeue(se)
				se.Vruntime += 1000
				se.Deadline += 1000
				q.Enqueue(se)
				i += 7
			}
			q.Check()
		})
	}
}
