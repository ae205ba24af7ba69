package pelt

import "testing"

// TestUtilEstUpdate walks util_est_update() (fair.c, v5.15 and v6.6)
// through each of its exits, with the values worked by hand.
func TestUtilEstUpdate(t *testing.T) {
	const flag = UtilAvgUnchanged
	cases := []struct {
		name    string
		ue      UtilEst
		util    uint64
		fastUp  bool
		want    UtilEst
		written bool
	}{
		// util_avg unchanged since the last sample: nothing.
		{"unchanged", UtilEst{400 | flag, 300}, 900, true, UtilEst{400 | flag, 300}, false},
		// UTIL_EST_FASTUP: an EWMA below the sample jumps to it.
		{"fastup", UtilEst{400, 300}, 900, true, UtilEst{900 | flag, 900}, true},
		// Without it: ewma = (300*4 + 600) >> 2 = 450.
		{"rise, no fastup", UtilEst{400, 300}, 900, false, UtilEst{900 | flag, 450}, true},
		// A fall: ewma = (800*4 - 600) >> 2 = 650 (u32 wrap of the diff).
		{"fall", UtilEst{800, 800}, 200, true, UtilEst{200 | flag, 650}, true},
		// EWMA within 1% (|diff| < 10) and the sample moved by >= 10:
		// the sample alone is stored.
		{"ewma close, sample moved", UtilEst{520, 505}, 496, true, UtilEst{496 | flag, 505}, true},
		// Both within 1%: nothing written, the flag stays clear.
		{"both close", UtilEst{500, 505}, 498, true, UtilEst{500, 505}, false},
		// util_avg above the CPU's capacity: nothing, not even the sample.
		{"over capacity", UtilEst{1100, 1100}, 1030, false, UtilEst{1100, 1100}, false},
	}
	for _, c := range cases {
		sa := Avg{UtilAvg: c.util, UtilEst: c.ue}
		got := UtilEstUpdate(&sa, SchedCapacityScale, c.fastUp)
		if sa.UtilEst != c.want || got != c.written {
			t.Errorf("%s: util_est %+v util %d -> %+v (written %v), want %+v (written %v)",
				c.name, c.ue, c.util, sa.UtilEst, got, c.want, c.written)
		}
	}
}

// TestUtilEstSum: the cfs_rq's enqueued is the sum of the runnable tasks'
// _task_util_est() (the max of ewma and the flagless sample), and a
// dequeue never takes it below zero.
func TestUtilEstSum(t *testing.T) {
	a := Avg{UtilEst: UtilEst{700 | UtilAvgUnchanged, 650}}
	b := Avg{UtilEst: UtilEst{100, 250}}
	if TaskUtilEst(&a) != 700 || TaskUtilEst(&b) != 250 {
		t.Fatalf("_task_util_est: %d %d, want 700 250", TaskUtilEst(&a), TaskUtilEst(&b))
	}
	var rq Avg
	UtilEstEnqueue(&rq, &a)
	UtilEstEnqueue(&rq, &b)
	if rq.UtilEst.Enqueued != 950 {
		t.Fatalf("sum %d, want 950", rq.UtilEst.Enqueued)
	}
	UtilEstDequeue(&rq, &a)
	if rq.UtilEst.Enqueued != 250 {
		t.Fatalf("after dequeue %d, want 250", rq.UtilEst.Enqueued)
	}
	UtilEstDequeue(&rq, &a)
	if rq.UtilEst.Enqueued != 0 {
		t.Fatalf("clamped dequeue %d, want 0", rq.UtilEst.Enqueued)
	}
}

// TestUtilEstConverges: a periodic task sampled at util 800 after one at
// 200, with UTIL_EST_FASTUP off, climbs by a quarter of the gap per
// sample, stopping within 1% (the within_margin() skip).
func TestUtilEstConverges(t *testing.T) {
	sa := Avg{UtilAvg: 200}
	UtilEstUpdate(&sa, SchedCapacityScale, false)
	prev := sa.UtilEst.Ewma
	for i := 0; i < 40; i++ {
		sa.UtilEst.Enqueued &^= UtilAvgUnchanged // util_avg moved while it ran
		sa.UtilAvg = 800
		UtilEstUpdate(&sa, SchedCapacityScale, false)
		if e := sa.UtilEst.Ewma; e < prev || e > 800 {
			t.Fatalf("sample %d: ewma %d after %d", i, e, prev)
		}
		prev = sa.UtilEst.Ewma
	}
	if d := 800 - int(prev); d < 0 || d >= UtilEstMargin+3 {
		t.Errorf("ewma settled at %d, want within ~1%% of 800", prev)
	}
}
