package pelt_test

import (
	"fmt"

	"github.com/rqemu/rqemu/emu/pelt"
)

// A nice-0 task is forked onto an idle CPU, runs alone for 100 ms and then
// sleeps for 32 periods. Its load_avg starts at its full weight and stays
// there; its util_avg starts at half the CPU and climbs as
// 1024 − 512·y^t (t ≈ 95 periods here); sleeping a half-life halves both.
func Example() {
	const ms = 1_000_000 // ns; the PELT clock is in ns
	w := pelt.ScaleLoadDown(pelt.NiceZeroLoad)

	var task, cfs pelt.Avg
	pelt.InitEntityRunnableAverage(&task, true, w)
	pelt.PostInitEntityUtilAvg(&task, &cfs, w, pelt.SchedCapacityScale)
	pelt.Attach(&cfs, &task, w)
	fmt.Println("forked:", task.LoadAvg, task.UtilAvg, cfs.UtilAvg)

	now := uint64(0)
	for range 100 { // ticks while running
		now += ms
		pelt.UpdateSE(now, &task, true, 1, true, w)
		pelt.UpdateCfsRq(now, &cfs, w, 1, true)
	}
	fmt.Println("after 100 ms:", task.LoadAvg, task.UtilAvg, cfs.LoadAvg)

	now += 32 * 1024 * 1024 // 32 periods asleep
	pelt.UpdateBlockedSE(now, &task, w)
	pelt.UpdateCfsRq(now, &cfs, 0, 0, false)
	fmt.Println("32 periods later:", task.LoadAvg, task.UtilAvg, cfs.LoadAvg)
	// Output:
	// forked: 1024 512 512
	// after 100 ms: 1023 959 1024
	// 32 periods later: 511 479 512
}
