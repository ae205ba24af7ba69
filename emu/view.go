package emu

import (
	"slices"

	"github.com/rqemu/rqemu/emu/pelt"
	"github.com/rqemu/rqemu/hwmodel"
)

// The view: how kernel code running on one CPU reads shared kernel state
// it does not own: another CPU's runqueue, a task, an LLC's
// sd_llc_shared, a tg->load_avg (doc.go's "cross-CPU protocol"). Every
// reader here answers with the value published at the last barrier
// (snapshot.go) plus this CPU's own writes not yet published (its direct
// enqueues, wake-list pushes, wakeup migrations away, sd_llc_shared and
// tg->load_avg writes); the CPU itself, and the barrier, read exactly. The
// readers of a shared line (idleCPU, readNrRunning, readLoad, lbView,
// testIdleCores, readNrIdleScan, tgLoadAvgRead) also read it, logged for
// the weave to price. The barrier's own code reads the published state
// directly; a CPU's code reads it only through here.

// snapCPU is what this CPU sees of CPU c: itself exactly, others as
// published. Code the barrier runs on a CPU's behalf (NOHZ idle
// balancing) sees every CPU exactly: nothing else is running then. The
// readers of idle take the published value at their own time
// (cpuSnap.at); the others have no use for it.
func (rq *RQ) snapCPU(c int) cpuSnap {
	if c != rq.cpu && !rq.pay.barrier {
		return rq.sim.snap[c]
	}
	return rq.sim.cpus[c].exactSnap()
}

// exactSnap is this CPU as it is now: what publish copies, and what the
// CPU itself (or the barrier) reads. (Written for the inliner: with k
// read once and the pending wake list folded into idle, snapCPU stays
// within its budget of 80 and inlines into every probe of the wakeup and
// balancing scans. should_we_balance()'s ttwu_pending test reads its own
// CPU directly instead of a snapshot field.)
func (rq *RQ) exactSnap() cpuSnap {
	k := &rq.rqKernel
	return cpuSnap{
		idle:       k.curr == nil && k.nrRunning == 0 && len(rq.wlBatch) == 0,
		utilEst:    k.cfs.avg.UtilEst.Enqueued,
		nrRunning:  k.nrRunning,
		hNrRunning: k.cfs.hNrRunning,
		load:       k.cfs.avg.LoadAvg,
		util:       k.cfs.avg.UtilAvg,
		runnable:   k.cfs.avg.RunnableAvg,
	}
}

// taskView is what this CPU sees of task t: exact if it owns it, else the
// published snapshot. A task's CPU (its owner) changes only at barriers,
// so reading t.cpu during an epoch is safe.
func (rq *RQ) taskView(t *Task) taskSnap {
	if t.cpu == rq.cpu {
		return rq.exactTaskSnap(t)
	}
	return t.pub
}

// exactTaskSnap is task t, which this CPU owns, as it is now: what
// publish copies, and what its owner reads.
func (rq *RQ) exactTaskSnap(t *Task) taskSnap {
	return taskSnap{state: t.state, waitingOn: t.waitingOn, cpu: t.cpu, wakeeFlips: t.wakeeFlips,
		hLoad: rq.taskHLoad(t), util: t.se.Avg.UtilAvg, recentUsedCPU: t.recentUsedCPU, delayed: t.se.SchedDelayed, offCPUAt: t.offCPUAt}
}

// ownEnqueue is a wakeup this CPU enqueued on CPU cpu by the direct path
// (the target's rq lock). The kernel's waker has done activate_task() on
// the target when it returns, so its later reads of that runqueue see the
// task: nr_running, h_nr_running, the PELT sums a migrating task joins
// (attach_entity_load_avg()), and rd->overload, which add_nr_running()
// sets when nr_running reaches 2. In the model the target applies the
// enqueue in the epoch after the barrier that delivers it, and publishes
// it at the barrier after that; until then (epoch, the barrier count when
// the waker posted it, plus one) the waker adds it to what it sees
// (ownEnqueues). Simplified: a migrating task's util_avg stands for its
// util_est (util_est_enqueue()), its runnable_avg is not added, and a
// loser of a race for the wakee (claimWake) is counted as if it had
// enqueued for those two epochs.
type ownEnqueue struct {
	cpu        int
	epoch      int64
	moved      bool
	load, util uint64
}

// noteEnqueue records a direct remote enqueue of the task v shows onto
// cpu, dropping the records the snapshots show by now.
func (rq *RQ) noteEnqueue(v taskSnap, cpu int) {
	k := 0
	for _, e := range rq.enqueuedTo {
		if e.epoch+1 >= rq.sim.Epochs {
			rq.enqueuedTo[k] = e
			k++
		}
	}
	rq.enqueuedTo = append(rq.enqueuedTo[:k], ownEnqueue{cpu: cpu, epoch: rq.sim.Epochs,
		moved: v.cpu != cpu, load: v.hLoad, util: v.util})
}

// ownEnqueues adds to snap (CPU c as published) the direct enqueues this
// CPU did there that the snapshot does not show yet, and reports whether
// there were any. (The barrier, balancing on an idle CPU's behalf, sees
// every CPU exactly.)
func (rq *RQ) ownEnqueues(c int, snap cpuSnap) (cpuSnap, bool) {
	if len(rq.enqueuedTo) == 0 || c == rq.cpu || rq.pay.barrier {
		return snap, false
	}
	found := false
	for _, e := range rq.enqueuedTo {
		if e.cpu != c || e.epoch+1 < rq.sim.Epochs {
			continue // another CPU, or published: the snapshot has it
		}
		found = true
		snap.idle = false
		snap.nrRunning++
		snap.hNrRunning++
		if e.moved {
			snap.load += e.load
			snap.util += e.util
			snap.utilEst += uint32(e.util)
		}
	}
	return snap, found
}

// ownRemoval is a wakeup migration away from this CPU that this CPU did
// (the wakee slept here): migrate_task_rq_fair() -> remove_entity_load_avg()
// queues the task's averages, synced to the queue's last update, on
// cfs_rq->removed, and this CPU's next update_cfs_rq_load_avg() takes them
// off its sums: the waker's own dequeue when it sleeps, or the
// update_blocked_averages() that newidle_balance() and the periodic
// balance run first. The model queues the removal at the barrier
// (setTaskCPUFrom), so until then the waker's balancing subtracts it from
// its own view (lbView). Simplified: a task in a group takes its util off
// the root (which update_tg_cfs_util() propagates) but not its load.
type ownRemoval struct {
	epoch                int64
	load, util, runnable uint64
}

// noteRemoval records the wakeup migration of p, which this CPU owns,
// away from it.
func (rq *RQ) noteRemoval(p *Task) {
	k := 0
	for _, e := range rq.removedFrom {
		if e.epoch == rq.sim.Epochs {
			rq.removedFrom[k] = e
			k++
		}
	}
	se := &p.se
	avg := se.Avg
	pelt.UpdateBlockedSE(se.cfsRq.avg.LastUpdateTime, &avg, se.weightDown()) // sync_entity_load_avg()
	r := ownRemoval{epoch: rq.sim.Epochs, util: avg.UtilAvg, runnable: avg.RunnableAvg}
	if se.cfsRq == rq.cfs {
		r.load = avg.LoadAvg
	}
	rq.removedFrom = append(rq.removedFrom[:k], r)
}

// ownRemovals takes this CPU's removals of this epoch off its own view.
func (rq *RQ) ownRemovals(v cpuSnap) cpuSnap {
	for _, e := range rq.removedFrom {
		if e.epoch != rq.sim.Epochs {
			continue // the barrier queued it on cfs_rq->removed
		}
		v.load -= min(v.load, e.load)
		v.util -= min(v.util, e.util)
		v.runnable -= min(v.runnable, e.runnable)
	}
	return v
}

// seeCPU is snapCPU at this CPU's time plus its own unpublished direct enqueues: what
// it reads of CPU c's runqueue.
func (rq *RQ) seeCPU(c int) cpuSnap {
	v, _ := rq.ownEnqueues(c, rq.snapCPU(c).at(rq.now))
	return v
}

// ownOverload is rd->overload as this CPU's own direct enqueues of the
// last two epochs set it: one of them brought its target to two tasks.
func (rq *RQ) ownOverload() bool {
	for _, e := range rq.enqueuedTo {
		if v, ok := rq.ownEnqueues(e.cpu, rq.snapCPU(e.cpu)); ok && v.nrRunning >= 2 {
			return true
		}
	}
	return false
}

// view is what the balancing CPU b sees of CPU c, reading its lines.
func (b *RQ) lbView(c int) cpuSnap {
	if c != b.cpu {
		site := b.site(SymLoadBalance)
		o := b.sim.cpus[c]
		// update_sg_lb_stats() loads each CPU's runqueue independently
		// of the others: the misses overlap.
		was := b.log.SetIndependent(true)
		o.lock.NrRunning(b.log, b.logNow(), site)
		b.log.Record(b.logNow(), o.avgLine, hwmodel.Read, site)
		b.log.SetIndependent(was)
	}
	b.cost(hwmodel.OpBalanceRQ)
	if c == b.cpu && !b.pay.barrier {
		return b.ownRemovals(b.snapCPU(c))
	}
	return b.seeCPU(c)
}

// idleCPU is core.c: available_idle_cpu() of cpu as this CPU sees it:
// reads of its rq->curr, nr_running and ttwu_pending lines.
func (rq *RQ) idleCPU(cpu int, sym Symbol) bool {
	if cpu != rq.cpu {
		rq.cost(hwmodel.OpSISProbe)
		o := rq.sim.cpus[cpu]
		site := rq.site(sym)
		// The probes' loads do not depend on each other (the scan's
		// addresses come from the CPU number): an out-of-order core
		// overlaps their misses.
		was := rq.log.SetIndependent(true)
		rq.log.Record(rq.now, o.currLine, hwmodel.Read, site)
		o.lock.NrRunning(rq.log, rq.now, site)
		o.wake.Pending(rq.log, rq.now, site)
		rq.log.SetIndependent(was)
		if slices.Contains(rq.wokeTo, cpu) {
			// core.c: idle_cpu() tests rq->ttwu_pending, which this
			// CPU's own wake-list push (or direct enqueue) set this
			// epoch: a waker waking several tasks in a row does not
			// see the CPU it just woke a task onto as idle.
			return false
		}
		if _, own := rq.ownEnqueues(cpu, cpuSnap{}); own {
			// The same for a direct enqueue the barrier delivered
			// but the target has not yet published (ownEnqueue).
			return false
		}
	}
	return rq.snapCPU(cpu).at(rq.now).idle
}

// readNrRunning reads cpu's rq->nr_running.
func (rq *RQ) readNrRunning(cpu int, sym Symbol) int {
	if cpu != rq.cpu {
		rq.sim.cpus[cpu].lock.NrRunning(rq.log, rq.now, rq.site(sym))
	}
	return rq.seeCPU(cpu).nrRunning
}

// readLoad is fair.c: cpu_load(): the rq's cfs.avg.load_avg.
func (rq *RQ) readLoad(cpu int, sym Symbol) uint64 {
	if cpu != rq.cpu {
		rq.log.Record(rq.now, rq.sim.cpus[cpu].avgLine, hwmodel.Read, rq.site(sym))
	}
	return rq.seeCPU(cpu).load
}

// testIdleCores is fair.c: test_idle_cores().
func (rq *RQ) testIdleCores(cpu int) bool {
	llc := &rq.sim.llc[cpu]
	llc.shared.HasIdleCores(rq.log, rq.now, rq.site(SymSelectIdleSibling))
	if v, ok := rq.llcWrite(llc.id); ok {
		return v
	}
	return rq.sim.llcSnap[llc.id].hasIdleCores
}

// readNrIdleScan reads sd_llc_shared->nr_idle_scan.
func (rq *RQ) readNrIdleScan(cpu int) int {
	llc := &rq.sim.llc[cpu]
	llc.shared.NrIdleScan(rq.log, rq.now, rq.site(SymSelectIdleSibling))
	return rq.sim.llcSnap[llc.id].nrIdleScan
}

func (rq *RQ) llcWrite(id int) (bool, bool) {
	for _, w := range rq.llcWrites {
		if w.id == id {
			return w.v, true
		}
	}
	return false, false
}

func (rq *RQ) setLLCWrite(id int, v bool) {
	for i := range rq.llcWrites {
		if rq.llcWrites[i].id == id {
			rq.llcWrites[i].v = v
			return
		}
	}
	rq.llcWrites = append(rq.llcWrites, llcWrite{id, v})
}

type llcWrite struct {
	id int
	v  bool
}

// tgLoadAvgRead is the atomic_long_read() of tg->load_avg in
// calc_group_shares(): the line is really read (and priced), but the value
// used is the one published at the last barrier plus this CPU's own
// writes, so the decision does not depend on the host's race.
func (rq *RQ) tgLoadAvgRead(tg *TaskGroup) int64 {
	tg.loadAvg.Load(rq.log, rq.now, rq.site(SymUpdateCfsGroup))
	rq.Stats.TgLoadAvgReads++
	return tg.published + rq.tgDelta[tg.id]
}

// publishedIdle is CPU c's idle as published, at no time in particular:
// smtRate's busy-sibling test (simplified: not at this CPU's time, not
// with its own enqueues).
func (rq *RQ) publishedIdle(c int) bool { return rq.sim.snap[c].idle }

// onCPUOf is p->on_cpu of CPU prev's last switched-out task as the barrier
// published it (ttwuOnCPU).
func (rq *RQ) onCPUOf(prev int) onCPUSnap { return rq.sim.onCPU[prev] }

// publishedNrIdleScan is LLC id's nr_idle_scan as published, without this
// CPU's line read: update_idle_cpu_scan()'s "if (READ_ONCE(...) != nr)"
// before its write (simplified: the read is not logged).
func (rq *RQ) publishedNrIdleScan(id int) int { return rq.sim.llcSnap[id].nrIdleScan }
