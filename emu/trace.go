package emu

import (
	"cmp"
	"fmt"
	"slices"
)

// Tracing. With EnableTrace, every CPU records the sched tracepoints of a
// virtual-time window into its own buffer (no sharing): sched_switch,
// sched_waking, sched_wakeup, sched_wakeup_new, sched_migrate_task,
// sched_process_exit, sched_stat_runtime, sched_process_free (traceproc.go)
// and, with schedstats on, sched_stat_wait and sched_stat_sleep, each in the buffer of the CPU whose context the kernel logs it in, with
// that context's current task and ftrace's irqs-off / need-resched /
// hardirq-softirq / preempt-count flags. The barrier samples counters
// (per-CPU nr_running, each task group's tg->load_avg, the weave's stall
// per CPU).
//
// WriteFtrace merges the buffers in (time, CPU, order) order into the
// tracefs "trace" text that Perfetto reads as CPU tracks; WriteTraceDat
// writes them as a trace-cmd trace.dat (tracedat.go) for trace-cmd report,
// KernelShark and Perfetto; WriteChromeCounters writes the counters as
// Chrome-JSON "C" events, which Perfetto shows as counter tracks. All are
// deterministic: the records are virtual-time stamped and the merge is
// canonical.
//
// Where the kernel logs an event (core.c):
//   - sched_waking: try_to_wake_up() after ttwu_state_match(), on the
//     waker's CPU in the waker's context (the hrtimer interrupt for a
//     timed sleep);
//   - sched_migrate_task: set_task_cpu(), by the waker in ttwu, by the
//     balancing CPU in detach_task(), by the stopper migration/N in
//     active balance;
//   - sched_wakeup: ttwu_do_activate() -> ttwu_do_wakeup() after
//     wakeup_preempt(): on the waker's CPU when it enqueues itself (local,
//     or under the remote rq lock), on the wakee's CPU from
//     sched_ttwu_pending() when it went through the wake list (in the IPI,
//     or in the polling idle loop);
//   - sched_process_fork and sched_wakeup_new: kernel_clone() and
//     wake_up_new_task() (before wakeup_preempt()) in the parent's
//     context on its CPU, for a task with a TaskSpec.Parent; simplified:
//     the parent is no task of the run, so its CPU may run another task
//     meanwhile; a task without one logs sched_wakeup_new on its own CPU
//     in the current context;
//   - sched_switch: __schedule();
//   - sched_stat_sleep: enqueue_entity(ENQUEUE_WAKEUP), before
//     sched_wakeup; sched_stat_wait: set_next_entity(), before the switch;
//   - sched_process_exit: do_exit(), before the last switch.
//
// sched_stat_runtime, sched_process_free: traceproc.go. Not logged:
// sched_process_exec (the tools' workers do not exec).
//
// A waker decides during its epoch, but its wakeup takes effect only if it
// claims the wakee at the barrier (claimWake): its records are kept
// pending until then, and dropped when another waker won.

type traceKind uint8

const (
	trSwitch traceKind = iota
	trWaking
	trWakeup
	trWakeupNew
	trMigrate
	trProcessExit
	trStatWait
	trStatSleep
	trFork
	trStatRuntime // traceproc.go
	trProcessFree // traceproc.go
)

// ftrace's common_flags (kernel/trace/trace.h: enum trace_flag_type).
const (
	tfIrqsOff        = 0x01
	tfNeedResched    = 0x04
	tfHardirq        = 0x08
	tfSoftirq        = 0x10
	tfPreemptResched = 0x20
)

// traceWho is a context's current task or a switch side: a task, the
// CPU's idle task (swapper/N, pid 0), or its stopper (migration/N).
type traceWho struct {
	task    *Task
	stopper bool
	parent  *ForkParent // a tool's forking process (no task of the run)
}

// traceRec is one tracepoint hit, owned by the CPU whose buffer holds it.
type traceRec struct {
	t       int64
	kind    traceKind
	flags   uint8 // common_flags
	pc      uint8 // common_preempt_count
	pending bool  // a waker's record not (yet) claimed at the barrier
	pre     bool  // ahead of the records of the same time (a newidle pull)
	ctx     traceWho
	// switch: next and prev's state (ctx is prev); the others: the task.
	next      traceWho
	prevState TaskState
	zombie    bool // switch: prev exited as a process (isProcess)
	task      *Task
	// wakeups: target_cpu; migrate: orig_cpu and dest_cpu.
	cpu, dest int
	delay     int64  // sched_stat_*: ns (sched_stat_runtime: runtime)
	vruntime  uint64 // sched_stat_runtime
	ctxLater  bool   // ctx is resolved when written (resolveLaterCtx)

}

type counterSample struct {
	t        int64
	nr       []int32 // per CPU
	stall    []int64 // per CPU, ns in the sample period
	loadAvgs []int64 // per group
}

// ttwuMode says which context a CPU's next sched_wakeup is logged in.
type ttwuMode uint8

const (
	wmTask      ttwuMode = iota // a task's ttwu, under pi_lock and the rq lock
	wmTimer                     // the hrtimer interrupt's ttwu
	wmDrainIPI                  // sched_ttwu_pending() in the IPI
	wmDrainPoll                 // sched_ttwu_pending() in the polling idle loop
)

// traceCPU is a CPU's tracing state, touched only by its own goroutine
// (or the barrier).
type traceCPU struct {
	mode     ttwuMode
	lastWake int // index of the last sched_wakeup record, -1: none
	// affinityDst is where the stopper moves curr, which called
	// sched_setaffinity() on itself (traceAffinityMove).
	affinityDst int
	// foreign are records this CPU made for another CPU's trace (a
	// fork parent's, on the parent's CPU).
	foreign []foreignRec
}

// foreignRec is a record of CPU cpu's trace kept by another CPU.
type foreignRec struct {
	cpu int
	rec traceRec
}

// tracer holds the trace settings and the barrier's counter samples
// (owned by the engine goroutine).
type tracer struct {
	window  int64 // trace events with t < window
	period  int64 // counter sample period
	next    int64 // next counter sample time
	stall   []int64
	samples []counterSample
	prev    counterSample // the state at the last barrier
	cpu     []traceCPU
}

// EnableTrace turns on tracing of the first window ns of virtual time,
// with counters sampled every period ns (0: 1 ms). Call it before Run.
func (s *Sim) EnableTrace(window, period int64) {
	if period <= 0 {
		period = nsecPerMsec
	}
	s.tracer = &tracer{window: window, period: period, stall: make([]int64, len(s.cpus)), cpu: make([]traceCPU, len(s.cpus))}
	for i := range s.tracer.cpu {
		s.tracer.cpu[i].lastWake = -1
	}
}

func (s *Sim) traceAt(t int64) bool { return s.tracer != nil && t < s.tracer.window }

func (rq *RQ) traceOn() bool { return rq.sim.traceAt(rq.now) }

// traceAppend adds r to this CPU's buffer and returns its index.
func (rq *RQ) traceAppend(r traceRec) int {
	rq.trace = append(rq.trace, r)
	return len(rq.trace) - 1
}

// needReschedFlags is tracing_gen_ctx()'s need-resched bits for this
// CPU's current task.
func (rq *RQ) needReschedFlags() uint8 {
	if rq.needResched {
		return tfNeedResched | tfPreemptResched
	}
	return 0
}

// traceSwitch is the sched_switch tracepoint of __schedule(): irqs off,
// preempt count 2 (schedule()'s preempt_disable() and the rq lock).
func (rq *RQ) traceSwitch(prev, next *Task) {
	if !rq.traceOn() {
		return
	}
	r := traceRec{t: rq.now, kind: trSwitch, flags: tfIrqsOff, pc: 2, ctx: traceWho{task: prev}, next: traceWho{task: next}}
	if prev != nil && prev.waitingOn == affinityWait {
		// sched_setaffinity() on itself: affine_move_task() queues
		// migration_cpu_stop() on this CPU's stopper, which preempts
		// prev, moves it (move_queued_task(): sched_migrate_task,
		// no sched_wakeup) and switches to the next task.
		// Simplified: the stopper's own wakeup
		// (cpu_stop_queue_work()) is not logged.
		stop := traceWho{stopper: true}
		rq.traceAppend(traceRec{t: rq.now, kind: trSwitch, flags: tfIrqsOff, pc: 2, ctx: r.ctx, next: stop, prevState: TaskRunnable})
		if dst := rq.sim.tracer.cpu[rq.cpu].affinityDst; dst != rq.cpu {
			rq.traceAppend(traceRec{t: rq.now, kind: trMigrate, flags: tfIrqsOff, pc: 1, ctx: stop, task: prev, cpu: rq.cpu, dest: dst})
		}
		r.ctx, r.prevState = stop, TaskSleeping
		rq.traceAppend(r)
		return
	}
	if prev != nil {
		r.prevState = prev.state
		r.zombie = prev.state == TaskDead && prev.isProcess()
	}
	rq.traceAppend(r)
}

// wakerFlags is the context of try_to_wake_up() before the rq lock: a
// task waking through a wait queue holds its lock, ttwu's preempt_disable()
// and p->pi_lock (irqs off, count 3); the hrtimer interrupt holds the last
// two (count 2).
func (rq *RQ) wakerFlags(timer bool) (uint8, uint8) {
	if timer {
		return tfIrqsOff | tfHardirq | rq.needReschedFlags(), 2
	}
	return tfIrqsOff | rq.needReschedFlags(), 3
}

// traceTTWU records sched_waking for p on the waker's CPU, pending the
// barrier's claim unless local. It returns the record's index + 1 (0:
// tracing off).
func (rq *RQ) traceTTWU(p *Task, timer, local bool) int32 {
	if !rq.traceOn() {
		return 0
	}
	fl, pc := rq.wakerFlags(timer)
	i := rq.traceAppend(traceRec{t: rq.now, kind: trWaking, flags: fl, pc: pc, pending: !local,
		ctx: traceWho{task: rq.curr}, task: p, cpu: p.cpu})
	rq.sim.tracer.cpu[rq.cpu].mode = wmTask
	if timer {
		rq.sim.tracer.cpu[rq.cpu].mode = wmTimer
	}
	return int32(i + 1)
}

// traceTTWUSelected records set_task_cpu()'s sched_migrate_task for the
// CPU ttwu chose, pending. The waking record keeps its target_cpu:
// include/trace/events/sched.h sched_wakeup_template records
// task_cpu(p), and try_to_wake_up() logs sched_waking before
// select_task_rq().
func (rq *RQ) traceTTWUSelected(tr int32, p *Task, prev, cpu int) {
	if tr == 0 {
		return
	}
	w := &rq.trace[tr-1]
	if cpu != prev {
		rq.traceAppend(traceRec{t: rq.now, kind: trMigrate, flags: w.flags, pc: w.pc, pending: true,
			ctx: w.ctx, task: p, cpu: prev, dest: cpu})
	}
}

// traceTTWULocal makes the records of a wakeup this CPU does all by
// itself real at once.
func (rq *RQ) traceTTWULocal(tr int32) {
	if tr == 0 {
		return
	}
	for i := int(tr - 1); i < len(rq.trace); i++ {
		rq.trace[i].pending = false
	}
}

// traceTTWUDirect records the sched_wakeup of a wakeup the waker does
// under the target's rq lock (pending the claim).
func (rq *RQ) traceTTWUDirect(tr int32, p *Task, cpu int) {
	if tr == 0 {
		return
	}
	w := &rq.trace[tr-1]
	if rq.tun.Schedstats {
		// its delay is the sleep's, known at the claim
		rq.traceAppend(traceRec{t: rq.now, kind: trStatSleep, flags: w.flags, pc: w.pc + 1, pending: true, ctx: w.ctx, task: p})
	}
	rq.traceAppend(traceRec{t: rq.now, kind: trWakeup, flags: w.flags, pc: w.pc + 1, pending: true,
		ctx: w.ctx, task: p, cpu: cpu})
}

// traceClaim is the barrier's side of a claimed wakeup op: the waker's
// pending records become real (the migrate only if the wakee moves), or,
// for a wakeup decided at the barrier (a signal that found the wakee
// asleep, an affinity move), they are made now in the waker's buffer.
func (s *Sim) traceClaim(op *remoteOp, moved bool) {
	if !s.traceAt(op.t) {
		return
	}
	waker := s.cpus[op.from]
	p := op.task
	if op.trace > 0 {
		first := int(op.trace - 1)
		for i := first; i < len(waker.trace); i++ {
			r := &waker.trace[i]
			if !r.pending || r.task != p || i > first && r.kind == trWaking {
				// The next pending sched_waking of p is another
				// try_to_wake_up() of the waker's, which its claim
				// decides (dropped if this one won).
				break
			}
			if r.kind != trMigrate || moved {
				r.pending = false
			}
			if r.kind != trWaking && r.t <= p.offCPUAt && !waker.traceSwitchIn(r.t, p.offCPUAt) {
				// The waker saw the wakee off its CPU as of the last
				// barrier while it was still switching out. In
				// try_to_wake_up() it waits for p->on_cpu to clear
				// (smp_cond_load_acquire()) before set_task_cpu():
				// logged just after the wakee's switch. Simplified:
				// the model's waker does not wait (its costs and
				// clock go on from its decision).
				r.t = p.offCPUAt + 1
			}
			if r.kind == trStatSleep {
				r.delay = r.t - p.sleptAt
			}
		}
		return
	}
	if op.flags&wfAffinity != 0 {
		// A task's sched_setaffinity() on itself: its switch out
		// logged the stopper's move (traceSwitch).
		return
	}
	fl, pc := uint8(tfIrqsOff), uint8(3)
	ctx := op.trCtx
	// try_to_wake_up() logs sched_waking when it begins, at the
	// signal (a raced wakeup's t is past it: ttwuRaced), and the rest
	// after smp_cond_load_acquire(&p->on_cpu, !VAL): after the wakee's
	// switch out.
	waking, at := op.t, max(op.t, p.offCPUAt+1)
	if op.signalAt > 0 {
		waking = min(waking, op.signalAt)
	}
	waker.traceAppend(traceRec{t: waking, kind: trWaking, flags: fl, pc: pc, ctx: ctx, task: p, cpu: p.cpu})
	if moved {
		waker.traceAppend(traceRec{t: at, kind: trMigrate, flags: fl, pc: pc, ctx: ctx, task: p, cpu: p.cpu, dest: op.target})
	}
	if !op.wakelist {
		if s.tun.Schedstats {
			waker.traceAppend(traceRec{t: at, kind: trStatSleep, flags: fl, pc: pc + 1, ctx: ctx, task: p, delay: at - p.sleptAt})
		}
		waker.traceAppend(traceRec{t: at, kind: trWakeup, flags: fl, pc: pc + 1, ctx: ctx, task: p, cpu: op.target})
	}
}

// traceTTWURunnable records, in the waker's buffer at its signal's time,
// the wakeup of a task found still queued: try_to_wake_up()'s
// sched_waking, then ttwu_runnable() -> ttwu_do_wakeup()'s sched_wakeup
// under the task's rq lock (__task_rq_lock()); no migration, no enqueue,
// and no switch (the wakee never left).
func (s *Sim) traceTTWURunnable(waker *RQ, p *Task, sig semSig) {
	if !s.traceAt(sig.at) {
		return
	}
	fl, pc := uint8(tfIrqsOff), uint8(3)
	waker.traceAppend(traceRec{t: sig.at, kind: trWaking, flags: fl, pc: pc, ctx: sig.tr, task: p, cpu: p.cpu})
	waker.traceAppend(traceRec{t: sig.at, kind: trWakeup, flags: fl, pc: pc + 1, ctx: sig.tr, task: p, cpu: p.cpu})
}

// traceSwitchIn reports whether this CPU logged a switch in (from, to]
// (its context changed). A buffer is in time order but for the records
// the barrier adds, at most an epoch back: the scan stops well before.
func (rq *RQ) traceSwitchIn(from, to int64) bool {
	for i := len(rq.trace) - 1; i >= 0 && rq.trace[i].t > from-traceScanBack; i-- {
		r := &rq.trace[i]
		if r.kind == trSwitch && r.t > from && r.t <= to {
			return true
		}
	}
	return false
}

// traceScanBack bounds traceSwitchIn's scan: far more than an epoch.
const traceScanBack = 100_000 // ns

// traceWakeup is the sched_wakeup (ttwu_do_activate()) and
// sched_wakeup_new (wake_up_new_task()) tracepoint on this CPU. A wakeup
// applied for another CPU (a remote enqueue: paid by the waker) was
// recorded by its waker.
func (rq *RQ) traceWakeup(p *Task, kind traceKind) {
	if !rq.traceOn() || (kind == trWakeup && rq.pay.paidBy != nil) {
		return
	}
	st := &rq.sim.tracer.cpu[rq.cpu]
	r := traceRec{t: rq.now, kind: kind, flags: tfIrqsOff, pc: 2, ctx: traceWho{task: rq.curr}, task: p, cpu: rq.cpu}
	if kind == trWakeupNew && p.parent != nil {
		// kernel_clone() in the parent, on its CPU:
		// sched_process_fork after copy_process(), then
		// wake_up_new_task()'s sched_wakeup_new under p->pi_lock and
		// the child's rq lock. Simplified: the parent is not a task
		// of the run, so its CPU may be running another task then.
		st.foreign = append(st.foreign,
			foreignRec{p.parent.CPU, traceRec{t: rq.now, kind: trFork, ctx: traceWho{parent: p.parent}, task: p}},
			foreignRec{p.parent.CPU, traceRec{t: rq.now, kind: trWakeupNew, flags: tfIrqsOff, pc: 2, ctx: traceWho{parent: p.parent}, task: p, cpu: rq.cpu}})
		return
	}
	if kind == trWakeupNew {
		// pi_lock and the rq lock, need-resched as before wakeup_preempt().
		r.flags |= rq.needReschedFlags()
		rq.traceAppend(r)
		return
	}
	switch {
	case st.mode == wmTimer:
		r.flags, r.pc = tfIrqsOff|tfHardirq, 3
	case st.mode == wmDrainIPI:
		// the IPI's handler, busy or WFI-idle (arm64)
		r.flags, r.pc = tfIrqsOff|tfHardirq, 1
	case st.mode == wmDrainPoll:
		// the polling idle loop (preempt count 1) and the rq lock
	default:
		r.pc = 4
	}
	if rq.tun.Schedstats {
		// enqueue_entity(ENQUEUE_WAKEUP) ->
		// update_stats_enqueue_sleeper_fair(): the sleep since the
		// dequeue, before ttwu_do_wakeup()'s tracepoint.
		sl := r
		sl.kind, sl.delay = trStatSleep, rq.now-p.sleptAt
		rq.traceAppend(sl)
	}
	st.lastWake = rq.traceAppend(r)
}

// traceStatWait is fair.c: update_stats_wait_end_fair()'s
// sched_stat_wait (schedstats on): set_next_entity() ends next's wait
// in __schedule(), in prev's context, before the switch. The wait is
// sched_info's (enqueue to arrival), which schedstat's wait_start
// matches.
func (rq *RQ) traceStatWait(p *Task, d int64) {
	if !rq.traceOn() || !rq.tun.Schedstats {
		return
	}
	rq.traceAppend(traceRec{t: rq.now, kind: trStatWait, flags: tfIrqsOff, pc: 2, ctx: traceWho{task: rq.curr}, task: p, delay: d})
}

// traceProcessExit is kernel/exit.c: do_exit()'s sched_process_exit, in
// the exiting task's context, preemptible, before its last switch.
func (rq *RQ) traceProcessExit(p *Task) {
	if !rq.traceOn() {
		return
	}
	rq.traceAppend(traceRec{t: rq.now, kind: trProcessExit, ctx: traceWho{task: p}, task: p})
}

// traceWakeupDone gives the last sched_wakeup the need-resched state after
// wakeup_preempt() (ttwu_do_wakeup() logs after it).
func (rq *RQ) traceWakeupDone() {
	if rq.sim.tracer == nil {
		return
	}
	st := &rq.sim.tracer.cpu[rq.cpu]
	if st.lastWake >= 0 {
		rq.trace[st.lastWake].flags |= rq.needReschedFlags()
		st.lastWake = -1
	}
}

// traceAffinityMove notes where migration_cpu_stop() moves curr; its
// switch out logs the move (traceSwitch).
func (rq *RQ) traceAffinityMove(dst int) {
	if rq.sim.tracer != nil {
		rq.sim.tracer.cpu[rq.cpu].affinityDst = dst
	}
}

// traceDrain sets the context of the sched_ttwu_pending() that follows.
func (rq *RQ) traceDrain(ipi bool) {
	if rq.sim.tracer == nil {
		return
	}
	rq.sim.tracer.cpu[rq.cpu].mode = wmDrainPoll
	if ipi {
		rq.sim.tracer.cpu[rq.cpu].mode = wmDrainIPI
	}
}

// tracePull records detach_task()'s sched_migrate_task of a pull done at
// the barrier, in the balancing CPU's context: run_rebalance_domains() in
// softirq with the busiest rq lock (count 1), or newidle balance inside
// schedule() (count 2).
func (s *Sim) tracePull(actor *RQ, p *Task, src, dst int, newidle bool) {
	// After the actor's last event (its context is its current task)
	// and after p's switch out on src, which a CPU whose work ran past
	// the epoch's end logged later than the barrier: can_migrate_task()
	// leaves a task alone while task_on_cpu().
	t := max(s.epochEnd, actor.now, p.offCPUAt+1)
	if !s.traceAt(t) {
		return
	}
	fl, pc := uint8(tfIrqsOff|tfSoftirq), uint8(1)
	ctx, pre := traceWho{task: actor.curr}, false
	if newidle {
		fl, pc = tfIrqsOff, 2
		// sched_balance_newidle() runs inside __schedule(), in the
		// task going to sleep, before the switch: the model balances
		// at the barrier, after its switch to idle, so the pull is
		// logged at that switch, ahead of it, in its prev's context:
		// the CPU's last switch, which may fall in the epoch before
		// (its balance ran past the epoch's end).
		for i := len(actor.trace) - 1; i >= 0 && actor.trace[i].t > s.epochStart-traceScanBack; i-- {
			r := &actor.trace[i]
			if r.kind != trSwitch || r.pending {
				continue
			}
			if r.next.task == nil && !r.next.stopper && r.ctx.task != nil {
				t, ctx, pre = r.t, r.ctx, true
			}
			break
		}
		if !pre {
			// The puller has left idle since (a wakeup reached it
			// before the barrier applied the pull): the kernel pulled
			// inside __schedule() and ran the pulled task; here the
			// CPU already runs another. Simplified: logged as a
			// balance pull in its current context, in softirq like
			// the periodic one.
			fl, pc = tfIrqsOff|tfSoftirq, 1
		}
	}
	actor.traceAppend(traceRec{t: t, kind: trMigrate, flags: fl, pc: pc, pre: pre, ctx: ctx, task: p, cpu: src, dest: dst})
}

// traceActiveBalance records active balancing on src: the stopper
// migration/N preempts p, pushes it to dst (sched_migrate_task), and
// switches to the idle task (the model reschedules src right after).
func (s *Sim) traceActiveBalance(src *RQ, p *Task, dst int) {
	if !src.traceOn() {
		return
	}
	stop := traceWho{stopper: true}
	src.traceAppend(traceRec{t: src.now, kind: trSwitch, flags: tfIrqsOff, pc: 2, ctx: traceWho{task: p}, next: stop, prevState: TaskRunnable})
	src.traceAppend(traceRec{t: src.now, kind: trMigrate, flags: tfIrqsOff, pc: 1, ctx: stop, task: p, cpu: src.cpu, dest: dst})
	src.traceAppend(traceRec{t: src.now, kind: trSwitch, flags: tfIrqsOff, pc: 2, ctx: stop, prevState: TaskSleeping})
}

// sample records the counters at each multiple of the period. The state
// changes only at events, so a period boundary in the gap before this
// epoch (no CPU had an event there) sees the state of the last barrier,
// and one inside this epoch sees the state at its end (at most one epoch
// late).
func (tr *tracer) sample(s *Sim, stall []int64) {
	for i, st := range stall {
		tr.stall[i] += st
	}
	cur := counterSample{nr: make([]int32, len(s.cpus))}
	for i, rq := range s.cpus {
		cur.nr[i] = int32(rq.nrRunning)
	}
	for _, g := range s.groups {
		cur.loadAvgs = append(cur.loadAvgs, g.published)
	}
	for ; tr.next <= s.epochEnd && tr.next < tr.window; tr.next += tr.period {
		cs := cur
		if tr.next < s.epochStart && tr.prev.nr != nil {
			cs = tr.prev
		}
		cs.t = tr.next
		cs.stall = tr.stall
		tr.stall = make([]int64, len(s.cpus))
		tr.samples = append(tr.samples, cs)
	}
	tr.prev = cur
}

// isProcess reports whether p is a process of its own (its group
// leader, reaped by its parent's wait()), not a thread of a process: a
// task whose address space no other task shares. Simplified: a task with
// no modeled mm (TaskSpec.MM 0) counts as a thread, as the tools that
// leave it unset (schbench, rt-app, hopper) run pthreads.
func (p *Task) isProcess() bool {
	if p.mm == 0 {
		return false
	}
	for _, t := range p.sim.tasks {
		if t != p && t.mm == p.mm {
			return false
		}
	}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func taskPrio(p *Task) int { return 120 + p.Nice }

// taskComm is p->comm: at most TASK_COMM_LEN-1 (15) bytes.
func taskComm(p *Task) string { return p.Comm[:min(len(p.Comm), 15)] }

// stopperPID is the pid given to CPU cpu's stopper thread migration/N
// (below the workloads' pids, which start at 1000).
func stopperPID(cpu int) int { return 10 + cpu }

// who names a context or switch side on cpu: its comm as the task struct
// has it, its pid and prio (the stopper is SCHED_FIFO 99: prio 0).
func (w traceWho) who(cpu int) (comm string, pid, prio int) {
	switch {
	case w.task != nil:
		return taskComm(w.task), w.task.PID, taskPrio(w.task)
	case w.stopper:
		return fmt.Sprintf("migration/%d", cpu), stopperPID(cpu), 0
	case w.parent != nil:
		return w.parent.Comm[:min(len(w.parent.Comm), 15)], w.parent.PID, 120
	}
	return fmt.Sprintf("swapper/%d", cpu), 0, 120
}

// Task states as __trace_sched_switch_state() reports them
// (include/linux/sched.h: TASK_REPORT bits, TASK_REPORT_MAX for a
// preemption).
const (
	reportSleeping   = 0x0001 // TASK_INTERRUPTIBLE, "S"
	reportExitDead   = 0x0010 // EXIT_DEAD, "X"
	reportExitZombie = 0x0020 // EXIT_ZOMBIE, "Z"
	reportPreempted  = 0x0100 // TASK_REPORT_MAX, "R+"
)

// prevStateReport is the prev_state field of a switch.
func (r *traceRec) prevStateReport() int64 {
	switch {
	case r.ctx.task == nil && !r.ctx.stopper:
		return 0 // the idle task is always runnable: "R"
	case r.prevState == TaskSleeping:
		return reportSleeping
	case r.prevState == TaskDead && r.zombie:
		// do_task_dead() after exit_notify(): a process its parent
		// waits for is EXIT_ZOMBIE.
		return reportExitZombie
	case r.prevState == TaskDead:
		// exit_notify(): a thread (not the group leader) is reaped at
		// once, EXIT_DEAD.
		return reportExitDead
	}
	return reportPreempted
}

// traceRecords returns CPU cpu's records that happened (pending ones
// dropped), in time order.
func (s *Sim) traceRecords(cpu int) []*traceRec {
	var out []*traceRec
	for i := range s.cpus[cpu].trace {
		if r := &s.cpus[cpu].trace[i]; !r.pending {
			out = append(out, r)
		}
	}
	for c := range s.tracer.cpu {
		for i := range s.tracer.cpu[c].foreign {
			if f := &s.tracer.cpu[c].foreign[i]; f.cpu == cpu {
				out = append(out, &f.rec)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *traceRec) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		return cmp.Compare(b2i(!a.pre), b2i(!b.pre))
	})
	resolveLaterCtx(out)
	return out
}

// traceName is the event's tracepoint name.
func (k traceKind) traceName() string {
	return [...]string{"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
		"sched_process_exit", "sched_stat_wait", "sched_stat_sleep", "sched_process_fork", "sched_stat_runtime", "sched_process_free"}[k]
}

// ftraceFields prints the event's fields as its print fmt does.
func (r *traceRec) ftraceFields(cpu int) string {
	switch r.kind {
	case trSwitch:
		pc, pp, pprio := r.ctx.who(cpu)
		nc, np, nprio := r.next.who(cpu)
		return fmt.Sprintf("prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d",
			pc, pp, pprio, prevStateText(r.prevStateReport()), nc, np, nprio)
	case trMigrate:
		return fmt.Sprintf("comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d", taskComm(r.task), r.task.PID, taskPrio(r.task), r.cpu, r.dest)
	case trProcessExit:
		return fmt.Sprintf("comm=%s pid=%d prio=%d", taskComm(r.task), r.task.PID, taskPrio(r.task))
	case trStatWait, trStatSleep:
		return fmt.Sprintf("comm=%s pid=%d delay=%d [ns]", taskComm(r.task), r.task.PID, r.delay)
	case trFork:
		pc, pp, _ := r.ctx.who(cpu)
		return fmt.Sprintf("comm=%s pid=%d child_comm=%s child_pid=%d", pc, pp, taskComm(r.task), r.task.PID)
	case trStatRuntime, trProcessFree:
		return r.procFields()
	}
	return fmt.Sprintf("comm=%s pid=%d prio=%d target_cpu=%03d", taskComm(r.task), r.task.PID, taskPrio(r.task), r.cpu)
}
