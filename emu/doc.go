// Package emu is the kernel model: the Linux fair scheduler's runqueues,
// one per modeled CPU, stepped in virtual time.
//
// # The model
//
// An RQ is struct rq plus the CPU's clock and event queue. Its root CfsRq
// and one CfsRq per task group hold the timeline (package eevdf: the
// vruntime-ordered augmented tree, avg_vruntime, lag, pick_eevdf), the
// load tracking (package pelt) and the group bookkeeping. The functions of
// fair.go, loadavg.go and group.go mirror fair.c one for one and carry its
// names: update_curr(), enqueue_entity(), place_entity(),
// pick_next_task_fair() with its group fast path, check_preempt_wakeup(),
// update_load_avg(), update_tg_load_avg(), calc_group_shares(),
// reweight_entity(). core.go mirrors core.c: __schedule(),
// try_to_wake_up(), enqueue_task() with uclamp, sched_tick(), the
// sched_info accounting. Both v6.6 EEVDF and the v5.15/v6.5 CFS are
// modeled; the EEVDF feature selects between them, and every other switch
// has its kernel name (features.go, `emu features`).
//
// A task runs a Program: compute for a while, sleep, block until woken,
// wake another task, yield, exit. Compute is user time; everything else is
// kernel work whose base cost comes from the machine preset
// (hwmodel.KernelOp) and advances the CPU's clock. Every virtual
// nanosecond is charged to a symbol: a kernel function, the task's user
// code, or idle (the profile).
//
// # Shared memory and determinism
//
// Where the kernel shares memory between CPUs the model uses the real
// shared objects of package contention: tg->load_avg is a
// contention.Counter, the rq lock line (with nr_running) a SpinLock, the
// wake list, rq->uclamp and cfs_rq->removed likewise. Each access is a
// real atomic on the host and a logged access that the weave prices for
// the target machine at the next barrier; the stall it finds is charged to
// the CPU's clock and to the symbol that made the access.
//
// Decisions never depend on the physical values. A read of tg->load_avg
// returns the value published at the last barrier plus this CPU's own
// writes since; removed load is applied from a model copy delivered in a
// fixed order. So the same seed and configuration give the same bytes
// whatever the host does.
//
// # Time
//
// Each CPU processes its events (ticks, the end of curr's compute, timers,
// messages) in time order; kernel work in a handler moves the clock on, so
// a busy CPU handles later events late, as a real one does. Sim.Run steps
// every CPU through epochs no longer than the lookahead (an IPI's
// delivery), with a barrier between epochs that weaves the logs, publishes
// shared values and, with Config.Check, verifies the invariants: every
// task in exactly one place, nr_running consistent, each queue's sums and
// tree consistent, tg->load_avg equal to the sum of the contributions both
// physically and in the model. A broken invariant panics with the CPU, the
// task and the state.
//
// Simplified, and said where it is done: the PELT clock is scaled by one
// constant frequency (the machine's sustained clock against its
// frequency-invariance reference; no turbo that varies with load, no
// capacity asymmetry); task-group uclamp
// limits are not modeled; a CPU's weave stall is charged at its next
// event.
package emu
