package pelt

// Fixed-point and PELT constants, 64-bit values (sched-pelt.h, pelt.h,
// sched.h, include/linux/sched.h).
const (
	// LoadAvgPeriod is LOAD_AVG_PERIOD: the half-life in periods (y^32 = 1/2).
	LoadAvgPeriod = 32
	// LoadAvgMax is LOAD_AVG_MAX: the integer limit of 1024·Σ y^n, the
	// largest *_sum an always-runnable entity reaches (per unit of load).
	LoadAvgMax = 47742
	// PeltMinDivider is PELT_MIN_DIVIDER: LOAD_AVG_MAX − 1024, the divider at
	// the start of a period (period_contrib = 0).
	PeltMinDivider = LoadAvgMax - 1024

	// periodUnits is the length of a PELT period in 1024 ns units; the
	// kernel writes it as the literal 1024 in accumulate_sum().
	periodUnits = 1024
	// maxDecayPeriods is LOAD_AVG_PERIOD*63: beyond it decay_load() is 0.
	maxDecayPeriods = LoadAvgPeriod * 63

	// SchedCapacityShift is SCHED_CAPACITY_SHIFT.
	SchedCapacityShift = 10
	// SchedCapacityScale is SCHED_CAPACITY_SCALE: the capacity of the
	// biggest CPU at its highest frequency, and the util_avg of an entity
	// that always runs there.
	SchedCapacityScale = 1 << SchedCapacityShift

	// SchedFixedpointShift is SCHED_FIXEDPOINT_SHIFT.
	SchedFixedpointShift = 10
	// NiceZeroLoad is NICE_0_LOAD on 64-bit: the nice-0 weight with the
	// extra 10 bits of resolution (scale_load(1024)).
	NiceZeroLoad = 1 << (2 * SchedFixedpointShift)

	// UtilAvgUnchanged is UTIL_AVG_UNCHANGED, the flag in bit 31 of
	// util_est saying util_avg has not been updated since the task was
	// enqueued.
	UtilAvgUnchanged uint32 = 0x80000000
)

// ScaleLoad mirrors scale_load(): an unscaled weight (nice 0 = 1024) to the
// 20-bit fixed-point weight stored in load_weight.
func ScaleLoad(w uint64) uint64 {
	return w << SchedFixedpointShift
}

// ScaleLoadDown mirrors scale_load_down(): a fixed-point weight to the
// unscaled weight PELT multiplies by. Nonzero weights never go below 2, so a
// tiny group share still counts.
func ScaleLoadDown(w uint64) uint64 {
	if w == 0 {
		return 0
	}
	return max(2, w>>SchedFixedpointShift)
}
