// Package eevdf is the runqueue timeline of one cfs_rq as Linux v6.6 keeps
// it for EEVDF, and the min_vruntime/leftmost machinery legacy CFS used
// before it: virtual time, lag, eligibility, virtual deadlines, placement,
// reweighting and the augmented red-black tree that makes the pick
// O(log n). It is pure, single-threaded and deterministic; the emulator's
// sched_entity and cfs_rq (package emu) embed or own these types and
// supply time, PELT, groups, statistics and locking. Each function names
// the kernel/sched/fair.c function it mirrors.
//
// # The model
//
// Every runnable entity i has a weight w_i (its nice level or its group
// share) and a virtual runtime v_i, the service it received scaled by
// NICE_0_LOAD/w_i, so that entities progressing at their fair rate
// advance v_i at the same pace. The queue's virtual time V is the
// weighted mean of the v_i (AvgVruntimeV): the point an ideal fluid
// scheduler would have every entity at. An entity's lag lag_i =
// w_i·(V − v_i) is the service it is owed; the lags sum to zero.
//
// Eligibility (Eligible) is lag_i ≥ 0, v_i ≤ V. Among eligible entities
// EEVDF runs the one with the earliest virtual deadline vd_i = ve_i +
// r_i/w_i, r_i being the request size (Slice, sysctl_sched_base_slice in
// v6.6). Weight thus sets the share and the slice sets the latency.
//
// V is kept without dividing on every update: the queue holds
// Σ (v_i − v0)·w_i and Σ w_i over the tree (AvgVruntime, AvgLoad) with v0
// = min_vruntime, adds the running entity when asked, and divides only in
// AvgVruntimeV, flooring so that an entity exactly at V is eligible.
// Eligibility compares Σ key·w ≥ key_i·Σ w and is exact. When
// min_vruntime advances by Δ the key sum is reduced by Δ·Σw
// (UpdateMinVruntime), so V never jumps. Virtual times are uint64 and
// only their differences are interpreted, as int64, so the clock may
// wrap; a new queue starts 2^20 ns below the wrap as init_cfs_rq() does.
//
// Lag survives sleeping and migration: dequeue saves the virtual lag
// V − v_i, clamped to the virtual time of max(2·slice, TICK_NSEC)
// (UpdateEntityLag), and the next enqueue places the entity at V − lag
// (PlaceEntity). Because the entity's own arrival shifts V by
// −w_i·lag/(W + w_i), the lag is first inflated by (W + w_i)/W so that it
// comes out right afterwards. A reweight likewise keeps w·(V − v) and
// rescales the deadline around V (Reweight). The running entity is kept
// out of the tree; while it runs its Vlag holds a copy of its deadline,
// and with RUN_TO_PARITY it keeps the CPU while it stays eligible and that
// copy still matches, i.e. until it has used up the request it was picked
// with (UpdateDeadline renews the deadline and thereby ends protection).
//
// # Why the tree is ordered by vruntime
//
// v6.6 orders the timeline by vruntime, as CFS did, so the eligible
// entities form a prefix of the tree: below an ineligible node only the
// left subtree can hold eligible entities, and the whole left subtree of
// an eligible node is eligible. Each node also carries min_deadline, the
// earliest deadline in its subtree, maintained through inserts, erases and
// rotations. PickEEVDF walks down the eligibility boundary, collecting
// the eligible nodes on the path and the fully eligible left subtrees,
// and then descends into the best such subtree following min_deadline
// (Ben Segall's fix in v6.6-rc; the first version of the search could
// miss the best subtree). The same order keeps legacy CFS's leftmost
// pick (PickFirst, PickCFS) and update_min_vruntime() unchanged.
//
// v6.8 (Abel Wu) turned the tree around: ordered by deadline, augmented
// with min_vruntime, so the leftmost node is the earliest deadline and is
// taken in O(1) whenever it is eligible, with one descent pruned by
// subtree min_vruntime otherwise; later kernels add min_slice and replace
// min_vruntime by zero_vruntime. This package implements the v6.6 order
// only; PickEEVDF's answer is the same set (earliest eligible deadline),
// only tie-breaking and cost differ.
//
// # What is left to the caller
//
// The caller owns the clock and update_curr()'s bookkeeping (exec_start,
// sum_exec_runtime, statistics; UpdateCurr does the timeline part), the
// resched decision (UpdateDeadline reports a renewal; the kernel
// reschedules when more than one entity runs), buddies, PELT and
// cfs_rq->load, task groups and calc_group_shares(), wakeup preemption
// policy, bandwidth control and locking. The scheduler features are
// arguments (placeLag, placeDeadlineInitial, runToParity) rather than
// global switches.
//
// The files hold: weights.go the weight tables and __calc_delta();
// entity.go and queue.go the state and the avg_vruntime sums; rbtree.go
// the augmented tree; pick.go the picks; lag.go lag, placement and
// deadlines; reweight.go reweighting; lifecycle.go enqueue, dequeue and
// the set/put of curr; check.go the invariant checker.
package eevdf
