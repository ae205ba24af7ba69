// Package emu is the kernel model: the Linux fair scheduler's runqueues,
// one per modeled CPU, stepped in virtual time.
//
// # The model
//
// An RQ is struct rq plus the CPU's clock and event queue (rq.go). Its
// root CfsRq and one CfsRq per task group hold the timeline (package
// eevdf: the vruntime-ordered augmented tree, avg_vruntime, lag,
// pick_eevdf), the load tracking (package pelt) and the group
// bookkeeping. The functions of fair.go, loadavg.go and group.go mirror
// fair.c one for one and carry its names: update_curr(),
// enqueue_entity(), place_entity(), pick_next_task_fair() with its group
// fast path, check_preempt_wakeup(), update_load_avg(),
// update_tg_load_avg(), calc_group_shares(), reweight_entity(); select.go
// holds fair.c's select_task_rq_fair() with wake_affine() and
// select_idle_sibling(). core.go mirrors core.c: __schedule(),
// enqueue_task() with uclamp, sched_tick(), the sched_info accounting;
// ttwu.go is core.c's try_to_wake_up() with ttwu_queue_wakelist(),
// sched_ttwu_pending() and ttwu_do_activate(). Both v6.6 EEVDF and the
// v5.15/v6.5 CFS are modeled; the EEVDF feature selects between them, and
// every other switch has its kernel name (features.go, `emu features`).
//
// # The current kernel: v6.11-eevdf and v6.12-eevdf
//
// What changed in fair.c from v6.6 to v6.12 and moves hackbench, netperf
// or schbench, read in a 6.12.y tree (kernel/sched/fair.c, core.c,
// features.h), and what the model does with it:
//
//	change (version)                        model                     where
//	DELAY_DEQUEUE, DELAY_ZERO (v6.12)       modeled, task entities    delayed.go, fair.go
//	  dequeue_entities(), set/clear_delayed(), requeue_delayed_entity(),
//	  pick_next_entity()'s DEQUEUE_DELAYED, finish_delayed_dequeue_entity()
//	  delayed group entities                no: dequeued at once      delayed.go
//	  migrating a delayed task (LB)         no: not migrated          pull.go canMigrateTask
//	  h_nr_delayed in PELT runnable         yes (6.12.y backport)     loadavg.go, group.go
//	  rq->nr_running with delayed tasks     yes (select, LB see it)   fair.go
//	ttwu_runnable() of a delayed task       yes: no select, requeue   ttwurunnable.go
//	PREEMPT_SHORT (85e511df3c, v6.12-rc1)   yes                       preemptshort.go
//	update_curr() resched: rq vs cfs_rq     RESCHED_RQ_NR_RUNNING     preemptshort.go
//	per-task slice, custom_slice (v6.12)    yes (TaskSpec.Slice)      sim.go, eevdf/lag.go
//	  slice propagation to group entities   no: base slice            (cfs_rq_min_slice())
//	PLACE_REL_DEADLINE (v6.12)              yes                       fair.go, eevdf/lag.go
//	PICK_BUDDY (v6.12)                      yes                       fair.go
//	RUN_TO_PARITY                           v6.6's, + PREEMPT_SHORT   eevdf/pick.go
//	deadline-ordered tree, min_vruntime     no: v6.6's search, same   eevdf/pick.go
//	  augment (v6.8)                          pick except ties
//	lag clamp, place_entity() lag           unchanged since v6.6      eevdf/lag.go
//	SIS_PROP removed (v6.7)                 never on in EEVDF         select.go
//	NEXT_BUDDY                              off (as in v6.6-v6.12)    -
//	uclamp_rq_inc/dec order (v6.12)         v6.6's                    core.go
//	util_est_update() before the dequeue    v6.6's order              fair.go
//	sched_ext, the fair dl_server (v6.12)   no (fair class only)      -
//
// v6.11-eevdf is tip's sched/core before 85e511df3c (the lkp rows on
// v6.11 tip): the v6.12 set without PREEMPT_SHORT.
//
// A task runs a Program: compute for a while, sleep, block until woken,
// wake another task, yield, exit. Compute is user time; everything else is
// kernel work whose base cost comes from the machine preset
// (hwmodel.KernelOp) and advances the CPU's clock. Every virtual
// nanosecond is charged to a symbol: a kernel function, the task's user
// code, or idle (the profile).
//
// # Time
//
// Each CPU processes its events (ticks, the end of curr's compute, timers,
// messages) in time order; kernel work in a handler moves the clock on, so
// a busy CPU handles later events late, as a real one does. Sim.Run steps
// every CPU through epochs no longer than the lookahead (an IPI's
// delivery), with a barrier between epochs that delivers the epoch's
// cross-CPU changes, weaves the logs, publishes shared values and, with
// Config.Check, verifies the invariants: every task in exactly one place,
// nr_running consistent, each queue's sums and tree consistent,
// tg->load_avg equal to the sum of the contributions both physically and
// in the model. A broken invariant panics with the CPU, the task and the
// state. A barrier visits only the CPUs with something to settle (stepped
// in the epoch, held by the weave, or changed at a barrier: visit.go), so
// an epoch costs what it did, not the machine's size.
//
// # The cross-CPU protocol
//
// During an epoch a CPU's goroutine reads and writes only its own RQ and
// the tasks it owns (task_cpu()); every field of RQ, Task and Sim says
// who else writes it, and when. Where the kernel has CPUs meet, the model
// splits the meeting in three:
//
//   - The physical part happens at once, on the real shared objects of
//     package contention: tg->load_avg is a contention.Counter, the rq lock
//     line (with nr_running) a SpinLock, the wake list, rq->uclamp,
//     sd_llc_shared and cfs_rq->removed likewise. Each access is a real
//     atomic on the host and a logged access that the weave prices for the
//     target machine at the next barrier; the stall it finds is charged to
//     the CPU that made the access, under the symbol that made it.
//   - Reads decide from what the last barrier published (snapshot.go,
//     read through view.go): a
//     remote CPU's idle state, nr_running and load (cpuSnap), an LLC's
//     has_idle_cores and nr_idle_scan (llcSnap), a remote wakee's state,
//     CPU and wakeup fields (taskSnap, republished only for tasks their
//     owner marked dirty), tg->load_avg (TaskGroup.published), plus the
//     reading CPU's own writes since (RQ.tgDelta, llcWrites); removed load
//     is applied from a model copy delivered in a fixed order. The physical
//     line is still read and logged, so the traffic is priced.
//   - Writes to another CPU's runqueue or to a task another CPU owns (a
//     wakeup, a signal, a pull, an affinity change, an ILB kick) are
//     posted (remoteOp, message.go) and carried out at the barrier by the
//     engine alone, in the canonical order (time, source CPU, sequence).
//     What the receiver must then do itself is handed to it as a message
//     event for the time the kernel would have it act: the wakee enqueued
//     when the waker's enqueue finished, a wake-list drain when the IPI
//     arrives, a reschedule when the resched IPI lands. With epochs no
//     longer than the lookahead every such time is in the receiver's
//     future; one that is not (a larger -epoch) is applied late and
//     counted (Sim.LateMsgs, LateNS).
//
// Decisions never depend on the physical values, nor on how far the other
// goroutines have got, so the same seed and configuration give the same
// bytes from either driver whatever the host does.
//
// Who pays is one value per RQ, its payer (payer.go), set for the length
// of a call: the CPU itself on its clock (the normal case); nobody, when
// the CPU applies work another CPU did and was charged for (a remote
// enqueue done under its lock by the waker, a pull); or the CPU as debt,
// when the barrier runs code on its behalf (NOHZ idle balancing). What the
// barrier finds a CPU owes (the weave's stall, an IPI it turned out to
// send, the work of its pulls) is debt too (addDebt, the one place debt
// is incurred), paid on its clock before its next event.
//
// Whose log an access goes on decides whose stall it is. A pull's detach
// and attach are logged on the balancing CPU's log (logOn in pull.go):
// the kernel runs load_balance() there, under the other runqueue's lock.
// A direct wakeup's lock, clock and rq->cfs.avg stores are the waker's;
// the rest of its enqueue (tg->load_avg, removed load, uclamp) is still
// logged on the target (ttwudirect.go), a simplification. A newidle
// balance logs to the newidle sites (RQ.site), so that the stall it pays
// reaches its measured cost, update_newidle_cost(), as sched_clock_cpu()
// would.
//
// # A remote wakeup, file by file
//
// netperf's UDP_RR client, on CPU 3, sends a request to its server,
// asleep on CPU 40 in another LLC (bench/netperf.go: its program returns
// emu.Signal(sem); program.go's doAction calls signal). Eight files, in
// this order:
//
//   - ttwu.go, the waker's half: signal and tryToWakeUp read the wakee
//     (asleepOn), choose its CPU, and, the CPUs sharing no cache
//     (ttwuQueueCond), push the entry onto CPU 40's physical wake list
//     and post opWake (ttwuQueueWakelist).
//   - view.go: everything the waker reads of the wakee and of other CPUs
//     (taskView, snapCPU, seeCPU): as published, plus its own writes.
//   - select.go: select_task_rq_fair() keeps the server on CPU 40, say.
//   - message.go: post; at the barrier, deliver applies the epoch's posts
//     in canonical order (applyOp), and later handleMsg runs the
//     target's message events.
//   - barrier.go: the barrier's order: deliver, the weave, publish.
//   - ttwu.go again, its barrier half: claimWake (the first waker of a
//     task still asleep on sem wins; TASK_WAKING), then wakelistAdd joins
//     CPU 40's open batch or opens one with a drain when the IPI arrives;
//     the target drains it (schedTTWUPending) and ttwuDoActivate enqueues.
//   - ttwudeliver.go: a claimed wakeup reaches its target only when the
//     weave has served the waker's llist_add() (queueWake, deliverWake).
//   - fair.go and preempt.go: enqueue_task_fair() puts the entity on CPU
//     40's timeline (place_entity() with its lag); check_preempt_wakeup()
//     decides whether it preempts CPU 40's curr.
//
// A waker that shares the LLC with a busy target takes the other branch
// of ttwu_queue() (ttwudirect.go): it locks the target's rq, pays the
// enqueue's base costs itself, and the barrier hands the target a
// msgEnqueue, which ttwuRemoteEnqueue applies free of charge (the payer
// is the waker). A pull's barrier half is pull.go, beside ttwudeliver.go.
//
// # Rejected alternatives
//
// One goroutine per modeled CPU everywhere is the obvious shape,
// and the parallel driver uses it when the host has a CPU for each
// modeled one. On a small host it is the slowest choice: a barrier across
// 224 goroutines costs about 29 µs on two cores (52 µs at 384), against
// 1-15 µs for a worker per host CPU stepping a shard, and with epochs
// near the 1 µs wakeup lookahead that is a 50x slowdown instead of 5x
// (DESIGN.md, "Drivers").
//
// Per-access locking, the kernel's own way (CPUs running freely and
// taking each other's rq locks, reading each other's fields under them),
// would make every decision depend on how the host interleaves the
// goroutines: the same seed would not give the same bytes, the serial
// and parallel drivers would disagree, and the host's lock costs, not the
// target's, would shape the schedule. The model keeps the real atomics
// for the traffic only and decides from published values.
//
// Optimistic execution (Time Warp: let each CPU run ahead and roll back
// when a message arrives in its past) would need checkpoints of every
// runqueue, tree, PELT average and task, and cannot take back a real
// atomic once another goroutine has seen it; with wakeups every few µs
// and a 1 µs lookahead, rollbacks would be the common case. Conservative
// epochs no longer than the lookahead are exact instead; a longer -epoch
// trades exactness for speed, and the error is measured (late messages,
// the epoch sweep in the tests).
//
// # Simplified, and said where it is done
//
// A wait's check and a signal in one epoch are settled at the barrier in
// the kernel's order (hold.go): the waiting CPU stops at its failed check
// until the barrier, which has every signal of the epoch. A signal after
// the epoch's end counts as after the wakee's dequeue, and a waker that
// saw the wakee running when it had slept earlier in the epoch has its
// try_to_wake_up() completed at the barrier as its debt (ttwuRaced).
//
// The PELT clock is scaled by one constant frequency (the machine's
// sustained clock against its frequency-invariance reference; no turbo
// that varies with load, no capacity asymmetry); task-group uclamp limits
// are not modeled; a CPU's weave stall is charged at its next event.
package emu
