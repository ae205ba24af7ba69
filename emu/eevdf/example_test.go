package eevdf_test

import (
	"fmt"

	"github.com/rqemu/rqemu/emu/eevdf"
)

// A nice-0 and a nice-5 task share a queue. The switch loop is the
// timeline half of schedule(): account the running time, pick, put prev,
// set next. Over 90 ms of CPU the nice-0 task gets about its 75% share
// (weights 1024 : 335).
func Example() {
	q := eevdf.NewQueue()
	a, b := &eevdf.Entity{Owner: "A"}, &eevdf.Entity{Owner: "B"}
	a.Load.SetNice(0)
	b.Load.SetNice(5)
	// Two new tasks: PLACE_LAG and PLACE_DEADLINE_INITIAL, ENQUEUE_INITIAL.
	q.EnqueueEntity(a, true, true, true)
	q.EnqueueEntity(b, true, true, true)

	ran := map[any]uint64{}
	const tick = 1_000_000 // 1 ms ticks
	for range 90 {
		if q.Curr != nil {
			ran[q.Curr.Owner] += tick
			q.UpdateCurr(tick)
		}
		next := q.PickEEVDF(true) // RUN_TO_PARITY
		if next != q.Curr {
			if q.Curr != nil {
				q.PutCurr(q.Curr)
			}
			q.SetCurr(next)
		}
	}
	q.Check()
	fmt.Printf("A ran %d ms, B ran %d ms\n", ran["A"]/tick, ran["B"]/tick)
	// Output: A ran 67 ms, B ran 22 ms
}
