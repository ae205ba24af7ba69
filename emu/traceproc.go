package emu

import (
	"encoding/binary"
	"fmt"
)

// sched_stat_runtime and sched_process_free (include/trace/events/sched.h).
//
// sched_stat_runtime is fair.c: update_curr()'s, for a task entity, after
// its vruntime moved: "comm pid runtime vruntime" to v6.7, without
// vruntime from v6.8 (5fe6ec8f6ab5, update_curr_task()). It is logged in
// the buffer of the CPU whose queue is updated, in the context of its
// current task, irqs off under the rq lock. Simplified: an update_curr()
// another CPU runs on this queue (a direct remote wakeup, a load
// balancer's detach) is logged here too, and the flags are the rq lock's
// ("d..1.") whatever the caller (the tick's hardirq, __schedule()'s
// depth 2).
//
// sched_process_free is kernel/exit.c: delayed_put_task_struct(), the RCU
// callback that put_task_struct_rcu_user() queues when the last rcu_users
// reference goes: for a thread reaped in exit_notify(), finish_task_switch()
// after the dead task's last switch, on its CPU. Simplified: the grace
// period ends at the second tick after that switch, the callback runs there
// in RCU_SOFTIRQ ("..s.."), in the context of whatever task the CPU runs
// then (resolved from the CPU's switches when the trace is written), and a
// process is freed the same way (its parent's wait4() reap is not modeled).
//
// sched_process_exec is not logged: no modeled task execs during the run
// (the tools exec before their tasks fork or clone them).

// traceStatRuntime records update_curr()'s sched_stat_runtime for p.
func (rq *RQ) traceStatRuntime(p *Task, delta int64) {
	if !rq.traceOn() {
		return
	}
	rq.traceAppend(traceRec{t: rq.now, kind: trStatRuntime, flags: tfIrqsOff, pc: 1, ctx: traceWho{task: rq.curr}, task: p,
		delay: delta, vruntime: p.se.Vruntime})
}

// traceProcessFree records the RCU callback that frees p, which has just
// switched out for the last time.
func (rq *RQ) traceProcessFree(p *Task) {
	tick := rq.tun.TickNsec
	t := (rq.now/tick + 2) * tick
	if !rq.sim.traceAt(t) {
		return
	}
	rq.traceAppend(traceRec{t: t, kind: trProcessFree, flags: tfSoftirq, task: p, ctxLater: true})
}

// resolveLaterCtx gives the records logged ahead of time (ctxLater) the
// context the CPU has at their time: the task its last switch before
// them switched in (the idle task if none). recs are one CPU's, in order.
func resolveLaterCtx(recs []*traceRec) {
	var cur traceWho
	for _, r := range recs {
		switch {
		case r.kind == trSwitch:
			cur = r.next
		case r.ctxLater:
			r.ctx = cur
		}
	}
}

// statRuntimeVruntime: the event has its vruntime field (to v6.7).
func (s *Sim) statRuntimeVruntime() bool { return !layoutFor(s.feat).utilEstSingle }

// procFields prints the two events' fields as their print fmts do.
func (r *traceRec) procFields() string {
	p := r.task
	if r.kind == trProcessFree {
		return fmt.Sprintf("comm=%s pid=%d prio=%d", taskComm(p), p.PID, taskPrio(p))
	}
	if p.sim.statRuntimeVruntime() {
		return fmt.Sprintf("comm=%s pid=%d runtime=%d [ns] vruntime=%d [ns]", taskComm(p), p.PID, r.delay, r.vruntime)
	}
	return fmt.Sprintf("comm=%s pid=%d runtime=%d [ns]", taskComm(p), p.PID, r.delay)
}

// procPayload appends the two events' fields to a trace.dat record.
func procPayload(b []byte, r *traceRec) []byte {
	le := binary.LittleEndian
	var c [16]byte
	copy(c[:], taskComm(r.task))
	b = append(b, c[:]...)
	b = le.AppendUint32(b, uint32(int32(r.task.PID)))
	if r.kind == trProcessFree {
		return le.AppendUint32(b, uint32(int32(taskPrio(r.task))))
	}
	b = append(b, 0, 0, 0, 0) // to the u64's offset, 32
	b = le.AppendUint64(b, uint64(r.delay))
	if r.task.sim.statRuntimeVruntime() {
		b = le.AppendUint64(b, r.vruntime)
	}
	return b
}

// datEventList is the trace.dat's events: datEvents, then these two in
// the modeled release's format.
func (s *Sim) datEventList() []datEvent {
	rt := datEvent{trStatRuntime, 314, []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"u64 runtime", 8, false}},
		`"comm=%s pid=%d runtime=%Lu [ns]", REC->comm, REC->pid, (unsigned long long)REC->runtime`}
	if s.statRuntimeVruntime() {
		rt.fields = append(rt.fields, datField{"u64 vruntime", 8, false})
		rt.print = `"comm=%s pid=%d runtime=%Lu [ns] vruntime=%Lu [ns]", REC->comm, REC->pid, (unsigned long long)REC->runtime, (unsigned long long)REC->vruntime`
	}
	free := datEvent{trProcessFree, 315, []datField{{"char comm[16]", 16, false}, {"pid_t pid", 4, true}, {"int prio", 4, true}},
		`"comm=%s pid=%d prio=%d", REC->comm, REC->pid, REC->prio`}
	return append(append([]datEvent(nil), datEvents...), rt, free)
}
