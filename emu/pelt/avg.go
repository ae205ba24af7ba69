package pelt

// Avg mirrors struct sched_avg (include/linux/sched.h): the PELT state of a
// sched_entity (se->avg) or of a runqueue (cfs_rq->avg, rq->avg_rt, …).
// Field widths are the kernel's on 64-bit; the struct is 64 bytes like the
// kernel's ____cacheline_aligned one. The zero value is a fresh, fully
// decayed signal whose window starts at time 0.
type Avg struct {
	// LastUpdateTime is last_update_time: the PELT clock (ns) the sums are
	// aged to, always advanced by whole 1024 ns units. For an entity, 0
	// means "migrated, attach me on the next enqueue".
	LastUpdateTime uint64
	// LoadSum is load_sum. For an entity: Σ runnable-time·y^age (one unit
	// per 1024 ns runnable; weight is applied only in LoadAvg). For a
	// cfs_rq: Σ weight·runnable-time·y^age, i.e. Σ se weight × se LoadSum.
	LoadSum uint64
	// RunnableSum is runnable_sum: Σ nr_runnable·time·y^age scaled by
	// SCHED_CAPACITY_SCALE (1 for a task on the rq, h_nr_runnable for a
	// group entity or a cfs_rq).
	RunnableSum uint64
	// UtilSum is util_sum: Σ running-time·y^age scaled by
	// SCHED_CAPACITY_SCALE.
	UtilSum uint32
	// PeriodContrib is period_contrib: how far (0…1023 units) the window
	// is into the current period. An entity attached to a cfs_rq shares
	// the cfs_rq's value.
	PeriodContrib uint32
	// LoadAvg is load_avg: weight × LoadSum / divider. A nice-0 task that
	// is always runnable reaches 1024; a cfs_rq's is Σ of its entities',
	// blocked ones included.
	LoadAvg uint64
	// RunnableAvg is runnable_avg: RunnableSum / divider, 1024 per
	// always-runnable task.
	RunnableAvg uint64
	// UtilAvg is util_avg: UtilSum / divider, 1024 for an entity that
	// always runs on a full-capacity CPU.
	UtilAvg uint64
	// UtilEst is util_est: the estimated utilisation kept across sleeps
	// (utilest.go), with UtilAvgUnchanged in bit 31 of Enqueued, cleared
	// here when util_avg changes (cfs_se_util_change()).
	UtilEst UtilEst
}

// Divider returns the divider that turns a *_sum into a *_avg at the
// current position in the period: the largest sum an always-runnable entity
// can have there, LOAD_AVG_MAX·y + period_contrib, which is
// LOAD_AVG_MAX − 1024 + period_contrib.
//
// pelt.h: get_pelt_divider().
func Divider(sa *Avg) uint32 {
	return PeltMinDivider + sa.PeriodContrib
}

// accumulateSum ages sa by delta units (1024 ns each) during which the
// entity had the given load, runnable count and running state, and returns
// how many period boundaries the span crossed.
//
// Step 1: if the span crossed p ≥ 1 boundaries, decay the old sums by y^p.
// Step 2: add the span's own contribution: the raw delta if it stayed inside
// the period, otherwise accumulatePeltSegments(). load scales load_sum;
// runnable and running are scaled by SCHED_CAPACITY_SCALE.
//
// pelt.c: accumulate_sum().
func accumulateSum(delta uint64, sa *Avg, load, runnable uint64, running bool) uint64 {
	contrib := uint32(delta) // p == 0 → delta < 1024

	delta += uint64(sa.PeriodContrib)
	periods := delta / periodUnits

	if periods != 0 {
		sa.LoadSum = DecayLoad(sa.LoadSum, periods)
		sa.RunnableSum = DecayLoad(sa.RunnableSum, periods)
		sa.UtilSum = uint32(DecayLoad(uint64(sa.UtilSum), periods))

		delta %= periodUnits
		if load != 0 {
			// With load == 0, runnable and running are 0 too
			// (UpdateLoadSum forces it), so contrib is unused.
			contrib = accumulatePeltSegments(periods,
				periodUnits-sa.PeriodContrib, uint32(delta))
		}
	}
	sa.PeriodContrib = uint32(delta)

	if load != 0 {
		sa.LoadSum += load * uint64(contrib)
	}
	if runnable != 0 {
		sa.RunnableSum += runnable * uint64(contrib) << SchedCapacityShift
	}
	if running {
		sa.UtilSum += contrib << SchedCapacityShift
	}
	return periods
}

// UpdateLoadSum ages sa's sums to now (ns of PELT clock), charging the time
// since LastUpdateTime with the given load (weight or 0/1), runnable count
// and running state (nonzero = running). It reports whether a period
// boundary was crossed, i.e. whether the caller should recompute the
// averages with UpdateLoadAvg.
//
// Time is counted in whole 1024 ns units: a delta under 1024 ns changes
// nothing, and LastUpdateTime advances only by whole units so the remainder
// counts next time. If now is before LastUpdateTime (the clock went
// backwards), LastUpdateTime is reset to now and nothing else changes.
// load == 0 forces runnable and running to 0, as for a dequeued current.
//
// pelt.c: ___update_load_sum().
func UpdateLoadSum(now uint64, sa *Avg, load, runnable, running uint64) bool {
	delta := now - sa.LastUpdateTime
	if int64(delta) < 0 {
		sa.LastUpdateTime = now
		return false
	}

	delta >>= 10
	if delta == 0 {
		return false
	}
	sa.LastUpdateTime += delta << 10

	if load == 0 {
		runnable, running = 0, 0
	}
	return accumulateSum(delta, sa, load, runnable, running != 0) != 0
}

// UpdateLoadAvg recomputes the *_avg fields from the *_sum fields, with
// load the weight that multiplies load_sum (an entity's scale_load_down()
// weight, 1 for a runqueue whose load_sum is already weighted).
//
// pelt.c: ___update_load_avg().
func UpdateLoadAvg(sa *Avg, load uint64) {
	divider := uint64(Divider(sa))
	sa.LoadAvg = load * sa.LoadSum / divider
	sa.RunnableAvg = sa.RunnableSum / divider
	sa.UtilAvg = uint64(sa.UtilSum / uint32(divider))
}

// LoadAvgIsDecayed reports whether every sum has decayed to zero, the test
// for dropping a cfs_rq from the leaf list. With all sums zero the averages
// must be zero too; the kernel warns if they are not.
//
// fair.c: load_avg_is_decayed().
func LoadAvgIsDecayed(sa *Avg) bool {
	return sa.LoadSum == 0 && sa.UtilSum == 0 && sa.RunnableSum == 0
}
