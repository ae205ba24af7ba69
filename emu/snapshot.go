package emu

import "math"

// What other CPUs see of a CPU, an LLC or a task between barriers (the
// package doc's "cross-CPU protocol"). The kernel reads remote runqueues
// racily (idle_cpu() in select_idle_sibling(), cpu_load() in
// wake_affine_weight(), the statistics pass of load balancing) and a
// wakee's fields under its pi_lock; the model answers from the values
// published at the last barrier, plus the reading CPU's own writes.

// cpuSnap is one CPU as published at the last barrier. Written only by
// the barrier.
type cpuSnap struct {
	idle       bool   // available_idle_cpu(): curr is idle, nothing queued, no ttwu pending
	utilEst    uint32 // cfs.avg.util_est.enqueued (0 with UTIL_EST off): readers take cpuUtil()
	nrRunning  int
	hNrRunning int
	load       uint64 // cfs.avg.load_avg (cpu_load())
	util       uint64 // cfs.avg.util_avg, uncapped: readers take cpuUtil()
	runnable   uint64 // cfs.avg.runnable_avg
	// idleAt, when idle, is when the CPU physically reached the idle
	// task: its own clock when it went idle, later by the weave's stall
	// it has not yet paid (math.MaxInt64 while an access of it still
	// waits at its line, weaveStalled; a CPU whose clock only ran past
	// the barrier gets there at its clock). Until then it is still
	// inside the __schedule() that switched
	// its last task out, rq->curr is that task, and idle_cpu() (core.c,
	// v5.15 and v6.6: "if (rq->curr != rq->idle) return 0") is false
	// for a reader: see at.
	idleAt int64
}

// at is the snapshot as a reader at virtual time t sees it: not
// idle before the CPU has physically reached its idle task. Without it a
// CPU whose dequeue waits microseconds on a saturated tg->load_avg line
// looks idle to every waker's select_idle_sibling() in the meantime.
// Simplified: the barrier's own view (exactSnap: NOHZ idle balancing on an
// idle CPU's behalf) and smtRate's busy-sibling test read idle without it.
func (v cpuSnap) at(t int64) cpuSnap {
	v.idle = v.idle && t >= v.idleAt
	return v
}

// llcSnap is an LLC's sd_llc_shared as published at the last barrier.
type llcSnap struct {
	hasIdleCores bool
	nrIdleScan   int
}

// taskSnap is what a remote waker reads of a task. Written only by the
// barrier, for tasks whose owner marked them dirty.
type taskSnap struct {
	state         TaskState
	waitingOn     *Sem
	cpu           int
	wakeeFlips    uint
	hLoad         uint64 // task_h_load()
	util          uint64
	recentUsedCPU int
	delayed       bool // se->sched_delayed: asleep but still queued (p->on_rq)
	// offCPUAt is when the task last left its CPU (finish_task_switch()
	// clears prev->on_cpu): a waker whose clock is behind it (its CPU
	// stalled on a line, weaveBehind) did not see it asleep (tryToWakeUp).
	offCPUAt int64
}

// publish refreshes the snapshots at a barrier: every CPU that changed,
// and the tasks marked dirty since the last one; the machine-wide values
// follow each snapshot replaced (setSnap).
func (s *Sim) publish() { s.publishCPUs(s.allCPUs) }

// publishCPUs is publish for the CPUs a barrier visits (visit.go): the
// others have nothing new.
func (s *Sim) publishCPUs(cpus []int) {
	for _, i := range cpus {
		s.publishCPU(i)
	}
	s.overloaded = s.nrOverloaded > 0
}

// publishCPU refreshes CPU i's snapshot and its dirty tasks', if changed.
func (s *Sim) publishCPU(i int) {
	rq := s.cpus[i]
	rq.wokeTo = rq.wokeTo[:0] // the barrier delivered them
	if !rq.republish {
		return
	}
	rq.republish = false
	v := rq.exactSnap()
	if v.idle {
		v.idleAt = rq.idleAt()
	}
	s.setSnap(i, v)
	for _, t := range rq.dirty {
		t.pub = s.cpus[t.cpu].exactTaskSnap(t)
		t.isDirty = false
	}
	rq.dirty = rq.dirty[:0]
}

// setSnap publishes CPU i's snapshot v and keeps the machine-wide values
// derived from the snapshots in step: rd->overload (some CPU has two
// runnable tasks: nrOverloaded of them), the tickless idle CPUs, and each
// LLC's nr_busy_cpus. They were recomputed from every snapshot at every
// barrier; a barrier now costs them only for the CPUs that changed.
func (s *Sim) setSnap(i int, v cpuSnap) {
	s.snapCounts(i, -1)
	s.snap[i] = v
	s.snapCounts(i, 1)
}

// snapCounts adds d times CPU i's snapshot to the machine-wide counts.
func (s *Sim) snapCounts(i, d int) {
	over, idle := s.snap[i].counts()
	if over {
		s.nrOverloaded += d
	}
	if idle {
		s.nohzIdle += d
	} else {
		s.llcBusy[s.llc[i].id] += d
	}
}

// counts is what a CPU's snapshot adds to the machine-wide values: it
// overloads the root domain (two runnable tasks: add_nr_running()'s
// rd->overload), and it is idle (nohz.nr_cpus) or busy (its LLC's
// nr_busy_cpus).
func (v *cpuSnap) counts() (overloaded, idle bool) { return v.nrRunning >= 2, v.idle }

// markDirty queues t for republication at the next barrier. Called by
// the task's owner whenever something a remote waker reads changes.
func (rq *RQ) markDirty(t *Task) {
	rq.sim.touch(rq)
	if !t.isDirty {
		t.isDirty = true
		rq.dirty = append(rq.dirty, t)
	}
}

// ttwuPending is rq->ttwu_pending in the model: a wake-list batch is open.
func (rq *RQ) ttwuPending() bool { return len(rq.wlBatch) > 0 }

// idleAt is cpuSnap.idleAt of this CPU, were it idle: publish sets it
// (the CPU itself, and the barrier, read exactSnap without it).
func (rq *RQ) idleAt() int64 {
	if rq.weaveStalled {
		return math.MaxInt64
	}
	return rq.now + rq.debt
}

// cpuUtil is fair.c: cpu_util_cfs() -> cpu_util(cpu, NULL, -1, 0) (v6.6;
// cpu_util(cpu) in v5.15) of the CPU a snapshot shows: the root queue's
// util_avg, or under UTIL_EST its util_est.enqueued (the estimates of the
// tasks runnable there) if larger, at most the CPU's original capacity
// (1024 on the symmetric targets). With UTIL_EST off the sum stays 0
// (util_est_enqueue() is gated too), so the max is util_avg. A migrated
// task's util arrives whole while the old CPU's decays, so the sum can
// pass the capacity; the users (update_sg_lb_stats()'s group_util,
// SIS_UTIL's sum_util, find_busiest_queue()'s migrate_util) see the cap.
// The max and the cap are taken here, not in exactSnap, which must stay
// within the inliner's budget.
func (v cpuSnap) cpuUtil() uint64 {
	return min(max(v.util, uint64(v.utilEst)), schedCapacityScale)
}

// onCPUSnap is p->on_cpu of a sleeping task as a remote waker sees it: the
// task's CPU went idle after switching it out, but only in its own clock;
// the weave's stall of that __schedule() (the dequeue's tg->load_avg
// accesses, the newidle balance's reads) is not yet paid, and until it is
// the CPU is physically still inside the switch. Until is when it leaves
// it: the idle start the stall postpones (math.MaxInt64 while an access
// of the CPU still waits at its line, weaveStalled).
type onCPUSnap struct {
	task  *Task
	until int64
}

// onCPUView is what the barrier publishes of this CPU as onCPU, once the
// weave's stall is handed out: the task it is still switching out, if any.
func (rq *RQ) onCPUView() onCPUSnap {
	switch {
	case rq.switchedOut == nil || rq.mode != modeIdle || rq.debt == 0 && !rq.weaveBehind:
		return onCPUSnap{}
	case rq.weaveStalled:
		return onCPUSnap{task: rq.switchedOut, until: math.MaxInt64}
	}
	// Its clock (past the barrier, when the weave is only behind because
	// the CPU ran ahead) is where finish_task_switch() clears
	// prev->on_cpu, later by the stall not yet paid.
	return onCPUSnap{task: rq.switchedOut, until: rq.now + rq.debt}
}
