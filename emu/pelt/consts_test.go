package pelt

import (
	"math"
	"testing"
)

// y is the PELT decay factor per period, y^32 = 1/2.
var y = math.Pow(0.5, 1.0/LoadAvgPeriod)

// floatLoadAvgMax is 1024·Σ y^n in real arithmetic (≈ 47788.08); the
// kernel's integer LOAD_AVG_MAX (47742) is the fixed point of its floored
// recurrence and so sits 0.097% lower.
var floatLoadAvgMax = periodUnits / (1 - y)

func TestConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"LOAD_AVG_PERIOD", LoadAvgPeriod, 32},
		{"LOAD_AVG_MAX", LoadAvgMax, 47742},
		{"PELT_MIN_DIVIDER", PeltMinDivider, 46718},
		{"SCHED_CAPACITY_SCALE", SchedCapacityScale, 1024},
		{"NICE_0_LOAD", NiceZeroLoad, 1 << 20},
		{"LOAD_AVG_PERIOD*63", maxDecayPeriods, 2016},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestScaleLoad(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{
		{0, 0},
		{1, 2},    // max(2, 0)
		{2047, 2}, // max(2, 1)
		{3072, 3},
		{NiceZeroLoad, 1024},
		{88761 << 10, 88761}, // nice -20
		{15 << 10, 15},       // nice 19
	} {
		if got := ScaleLoadDown(c.in); got != c.want {
			t.Errorf("ScaleLoadDown(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	if got := ScaleLoad(1024); got != NiceZeroLoad {
		t.Errorf("ScaleLoad(1024) = %d, want NICE_0_LOAD", got)
	}
}

// TestYNInvTable regenerates runnable_avg_yN_inv[] the way
// Documentation/scheduler/sched-pelt.c does: (2^32−1)·y^i converted to an
// unsigned int, i.e. truncated.
func TestYNInvTable(t *testing.T) {
	for i, want := range runnableAvgYNInv {
		got := uint32(float64(1<<32-1) * math.Pow(y, float64(i)))
		if got != want {
			t.Errorf("yN_inv[%d] = %#x, regenerated %#x", i, want, got)
		}
	}
	if runnableAvgYNInv[0] != 0xffffffff || runnableAvgYNInv[31] != 0x82cd8698 {
		t.Errorf("table ends = %#x … %#x", runnableAvgYNInv[0], runnableAvgYNInv[31])
	}
}

// TestLoadAvgMax regenerates LOAD_AVG_MAX as sched-pelt.c's
// calc_converged_max() does: iterate max = (max·y_inv >> 32) + 1024 from
// 1024 until it stops changing.
func TestLoadAvgMax(t *testing.T) {
	yInv := uint64(float64(1<<32-1) * y)
	m, last := uint64(1024), uint64(0)
	for m != last {
		last = m
		m = (m*yInv)>>32 + 1024
	}
	if m != LoadAvgMax {
		t.Fatalf("converged max = %d, want LOAD_AVG_MAX %d", m, LoadAvgMax)
	}
	// The real-number limit is 0.1% higher; every *_sum carries this scale.
	if rel := (floatLoadAvgMax - LoadAvgMax) / floatLoadAvgMax; rel < 0.0009 || rel > 0.001 {
		t.Errorf("LOAD_AVG_MAX vs 1024/(1-y): relative gap %.5f", rel)
	}
}
