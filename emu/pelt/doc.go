// Package pelt is the Linux scheduler's Per-Entity Load Tracking (PELT),
// redone in Go with the kernel's own 64-bit integer arithmetic, so that the
// emulator's load, runnable and utilisation signals match the kernel's bit for
// bit rather than only in shape.
//
// # What PELT computes
//
// Every schedulable entity (a task, or a group entity standing for a cgroup on
// one CPU) and every runqueue keeps a [Avg]. Time is cut into periods of 1024
// "µs"; the fraction of each period an entity spent runnable (or running) is a
// coefficient u_i, and the entity's history is the geometric series
//
//	u_0 + u_1·y + u_2·y² + …,   y³² = ½ (y ≈ 0.97857)
//
// so what happened 32 ms ago counts half as much as what happens now. The
// series of an entity that is always runnable converges to LOAD_AVG_MAX
// ([LoadAvgMax] = 47742 units), and the *_avg fields are the sums divided by
// the maximum reachable at the current position in the period, giving
//
//   - load_avg:     weight × fraction of time runnable (nice-0 busy task → 1024);
//   - runnable_avg: 1024 × runnable count over time (a cfs_rq can exceed 1024);
//   - util_avg:     1024 × fraction of time running (capped by the CPU).
//
// # Units
//
// The kernel feeds PELT nanoseconds and immediately shifts them right by 10:
// the unit is 1024 ns, called "µs" in the comments. A period is 1024 of those
// (1,048,576 ns ≈ 1.05 ms). Sub-unit remainders are not lost: last_update_time
// only advances by whole units, so the leftover nanoseconds count toward the
// next update. Weights are the unscaled ones (nice 0 = 1024); the 20-bit
// fixed-point weights the emulator's sched_entity carries are turned into
// those with [ScaleLoadDown].
//
// # Integer geometric series
//
// y^n is computed by [DecayLoad] from a 32-entry table of y^k·2³² (k < 32)
// and a right shift by n/32, since y³² is exactly ½. A span that crosses p
// period boundaries is split in three (the tail d1 of the old period, p−1
// full periods, the head d3 of the current one) and the full periods are
// summed in closed form from LOAD_AVG_MAX (accumulate_sum and
// __accumulate_pelt_segments), so an update costs O(1) however long the
// entity slept. Where the kernel truncates (the table, mul_u64_u32_shr, the
// divisions, the u32 casts of max_t(u32, …)), this package truncates the same
// way.
//
// # Where the kernel calls these
//
// update_load_avg() in fair.c runs at enqueue, dequeue, set_next_entity,
// put_prev_entity, the tick and the blocked-load update, always under the
// runqueue's lock. It ages the entity ([UpdateSE]),
// applies load removed by remote wakeup migrations and ages the cfs_rq
// ([UpdateCfsRqLoadAvg], built from [ApplyRemoved] and [UpdateCfsRq]),
// propagates group changes ([PropagateEntity]), and then attaches
// ([Attach]) or detaches ([Detach]) the entity when it migrates. A waker on
// another CPU, in migrate_task_rq_fair(), only syncs the sleeping task with
// [UpdateBlockedSE] and queues its averages in the old cfs_rq's [Removed].
// New tasks start from [InitEntityRunnableAverage] and
// [PostInitEntityUtilAvg].
//
// # What is simplified
//
// The functions here are pure over explicit inputs: the emulator's
// sched_entity and cfs_rq live in other packages and pass in the weights,
// counts and flags the kernel would read from them. Locking of
// cfs_rq->removed, tg->load_avg updates and tracepoints are the caller's.
//
// The clock is the caller's too: now must already be the PELT clock
// (cfs_rq_clock_pelt(): rq->clock_pelt minus lost idle time and throttled
// time). Frequency and µarch invariance (update_rq_clock_pelt() scaling the
// running delta by cpu and frequency capacity, and snapping back to
// clock_task when idle) happen before these functions see the time: the
// emulator's update_rq_clock_pelt() (emu/loadavg.go) does it.
//
// util_est (utilest.go: [UtilEstUpdate], [UtilEstEnqueue],
// [UtilEstDequeue], [TaskUtilEst]) keeps a task's utilization across its
// sleeps; the emulator calls it from enqueue_task_fair() and
// dequeue_task_fair() under sched_feat(UTIL_EST).
//
// Not modelled: the rt/dl/irq/hw-pressure signals beyond the generic
// [UpdateLoadSum], the migrate_se_pelt_lag() idle-lag estimate, and the
// ATTACH_AGE_LOAD set_task_rq_fair() path.
//
// One kernel quirk is kept on purpose: the floors after a subtraction use
// max_t(u32, sum, avg × PELT_MIN_DIVIDER), which casts both operands to
// 32 bits. A cfs_rq whose load_sum exceeds 2³² (about 88 always-runnable
// nice-0 tasks) loses its high bits on detach, removal, reweight or
// propagation, exactly as in v6.12 (TestFloorSumU32Quirk shows it).
package pelt
