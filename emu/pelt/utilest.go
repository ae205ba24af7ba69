package pelt

// util_est: the estimated utilization (sched_feat UTIL_EST, 7f65ea42eb00,
// v4.17). util_avg decays while a task sleeps, so a task that ran 1 s and
// then blocked for 10 ms wakes with util_avg ~ 800, and a CPU it is queued
// on looks less busy than it will be. util_est keeps, per task, the
// util_avg it had when it last went to sleep (enqueued) and an EWMA of
// those samples, and per cfs_rq the sum of the estimates of its runnable
// tasks; the readers (cpu_util(), task_util_est()) take the max of the
// PELT signal and the estimate.
//
// These are the v5.15 and v6.6 rules (fair.c: util_est_enqueue(),
// util_est_dequeue(), util_est_update(), _task_util_est()), pure over the
// two Avg they touch: the sched_feat(UTIL_EST) gate, the task_sleep test
// and the root cfs_rq are the caller's. From v6.9 (11137d384996, "sched/fair:
// Simplify util_est") the struct is a single ewma; not modeled.

// UtilEst mirrors struct util_est (include/linux/sched.h, v5.15 and v6.6).
type UtilEst struct {
	// Enqueued is enqueued. For a task: its util_avg when it last went
	// to sleep, with UtilAvgUnchanged in bit 31 set at that sample and
	// cleared by the next util_avg change (cfs_se_util_change()). For a
	// cfs_rq (only the root one is kept): the sum of TaskUtilEst() over
	// its runnable tasks.
	Enqueued uint32
	// Ewma is ewma: a task's exponentially weighted moving average of
	// its enqueued samples (weight 1/4). Unused in a cfs_rq.
	Ewma uint32
}

const (
	// UtilEstWeightShift is UTIL_EST_WEIGHT_SHIFT: new samples weigh
	// 1/4 in the EWMA.
	UtilEstWeightShift = 2
	// UtilEstMargin is UTIL_EST_MARGIN (fair.c): 1% of the capacity
	// scale, the change below which a sample is not taken.
	UtilEstMargin = SchedCapacityScale / 100
)

// TaskUtilEst is a task's estimate: the larger of its EWMA and its last
// sample, without the flag.
//
// fair.c: _task_util_est() (v5.15, v6.6).
func TaskUtilEst(task *Avg) uint64 {
	ue := task.UtilEst
	return uint64(max(ue.Ewma, ue.Enqueued&^UtilAvgUnchanged))
}

// UtilEstEnqueue adds a task's estimate to its CPU's root cfs_rq sum, as
// the task becomes runnable there.
//
// fair.c: util_est_enqueue() (v5.15, v6.6), the part under
// sched_feat(UTIL_EST).
func UtilEstEnqueue(cfsrq, task *Avg) {
	cfsrq.UtilEst.Enqueued += uint32(TaskUtilEst(task))
}

// UtilEstDequeue takes a task's estimate out of its CPU's root cfs_rq sum
// (not below zero), before any util_est update of the task.
//
// fair.c: util_est_dequeue() (v5.15, v6.6), the part under
// sched_feat(UTIL_EST).
func UtilEstDequeue(cfsrq, task *Avg) {
	cfsrq.UtilEst.Enqueued -= min(cfsrq.UtilEst.Enqueued, uint32(TaskUtilEst(task)))
}

// withinMargin reports |value| < margin, as the kernel writes it:
// (unsigned)(value + margin - 1) < (2 * margin - 1).
//
// fair.c: within_margin().
func withinMargin(value, margin int32) bool {
	return uint32(value+margin-1) < uint32(2*margin-1)
}

// UtilEstUpdate takes a new sample of a task that has just been dequeued
// to sleep (the caller tests task_sleep and the feature), after the
// dequeue's PELT update. cpuCapacity is the capacity of the CPU it ran on
// (capacity_orig_of() in v5.15, arch_scale_cpu_capacity() later: the
// same on these symmetric machines); fastUp is sched_feat(UTIL_EST_FASTUP)
// (b8c96361402a, v5.5; always on from v6.8).
//
// The steps, in the kernel's order:
//   - no sample if util_avg has not changed since the last one (the
//     UtilAvgUnchanged flag is still set);
//   - the sample is util_avg; with fastUp an EWMA below it jumps to it;
//   - if the EWMA is within 1% of the sample, only the sample is stored,
//     and only if it moved by 1% or more from the previous one;
//   - no update (not even of the sample) if util_avg exceeds the CPU's
//     capacity: there was no idle time to tell the task's size;
//   - otherwise ewma += (sample - ewma) / 4, in the kernel's u32
//     arithmetic (ewma·4 + diff, then >> 2).
//
// Every stored sample carries the UtilAvgUnchanged flag. It reports
// whether anything was written. Not modeled: v6.8's task_runnable() test
// (50181c0cff31, "sched/pelt: Avoid underestimation of task utilization",
// later backported to 6.6.y), which keeps the EWMA of a task that waited
// on the runqueue.
//
// fair.c: util_est_update() (v5.15, v6.6).
func UtilEstUpdate(task *Avg, cpuCapacity uint64, fastUp bool) bool {
	ue := task.UtilEst
	if ue.Enqueued&UtilAvgUnchanged != 0 {
		return false
	}
	lastEnqueuedDiff := int64(ue.Enqueued)
	ue.Enqueued = uint32(task.UtilAvg)
	if fastUp && ue.Ewma < ue.Enqueued {
		ue.Ewma = ue.Enqueued
	} else {
		// long last_ewma_diff = (unsigned int) enqueued - ewma: the
		// u32 difference; within_margin() reads it back as an int.
		lastEwmaDiff := ue.Enqueued - ue.Ewma
		lastEnqueuedDiff -= int64(ue.Enqueued)
		if withinMargin(int32(lastEwmaDiff), UtilEstMargin) {
			if withinMargin(int32(lastEnqueuedDiff), UtilEstMargin) {
				return false
			}
		} else {
			if task.UtilAvg > cpuCapacity {
				return false
			}
			ue.Ewma <<= UtilEstWeightShift
			ue.Ewma += lastEwmaDiff
			ue.Ewma >>= UtilEstWeightShift
		}
	}
	ue.Enqueued |= UtilAvgUnchanged
	task.UtilEst = ue
	return true
}
