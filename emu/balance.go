package emu

import (
	"github.com/rqemu/rqemu/emu/pelt"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// Load balancing (fair.c: sched_balance_rq(), ex load_balance(), and its
// helpers, v6.6). A CPU decides what to pull with what it can see (its own
// state exactly, the others as published at the last barrier, each remote
// read priced on its line); the pull itself (detach_tasks() under the
// busiest runqueue's lock, attach_tasks() on the puller) is carried out at
// the barrier on the source's exact state. Periodic balancing runs from
// the tick of a busy CPU (SCHED_SOFTIRQ), newidle balancing when a CPU is
// about to idle, and NOHZ idle balancing on behalf of the tickless idle
// CPUs when a busy CPU kicks one (run at the barrier).
//
// Simplified, and said here: affinity-imbalanced groups (sgc->imbalance,
// LBF_DST_PINNED retries) are not modeled; the SD_SERIALIZE
// sched_balance_running cmpxchg is priced but never refuses; rd->overload
// is recomputed at every barrier from the published nr_running.

// migration types (enum migration_type).
const (
	migrateLoad = iota
	migrateUtil
	migrateTask
	migrateMisfit
)

// group types (enum group_type), in order of severity.
const (
	groupHasSpare = iota
	groupFullyBusy
	groupMisfitTask
	groupSMTBalance
	groupAsymPacking
	groupImbalanced
	groupOverloaded
)

const (
	schedCapacityScale = 1024
	maxPinnedInterval  = 512 // MAX_PINNED_INTERVAL, ms
	numaImbalanceMin   = 2   // NUMA_IMBALANCE_MIN
)

// sgStats is struct sg_lb_stats for one group.
type sgStats struct {
	cpus          []int
	avgLoad       uint64
	groupLoad     uint64
	groupUtil     uint64
	groupRunnable uint64
	groupCapacity uint64
	sumNrRunning  int
	sumHNrRunning int
	idleCPUs      int
	groupWeight   int
	cores         int
	groupType     int
	smt           bool // the group is an SMT core (SD_SHARE_CPUCAPACITY)
	smtBalance    bool
}

// lbEnv is struct lb_env plus struct sd_lb_stats.
type lbEnv struct {
	b      *RQ // the CPU doing the work (its log and costs)
	dstCPU int
	sd     *Domain
	idle   int

	imbalance     int64
	migrationType int

	local, busiest *sgStats
	totalLoad      uint64
	totalCapacity  uint64
	avgLoad        uint64
	preferSibling  bool
	sumUtil        uint64
	// sgBuf holds the groups' stats: local, busiest and the one being
	// gathered (groupStats reuses a slot neither points to).
	sgBuf [3]sgStats
}

// pullReq is a pull decided by load balancing, carried out at the barrier.
type pullReq struct {
	src, dst      int
	sd            *Domain
	idle          int
	imbalance     int64
	migrationType int
	loopMax       int

	// posted: the pull waits for the barrier (it was not decided there),
	// so rebalance_domains() went on as if it would move a task;
	// nextIfNone is the rq->next_balance of that pass had it moved none
	// (set by rebalanceDomains for a CPU_IDLE pass, with idlePass). moved
	// is the number of tasks doPull moved.
	posted     bool
	idlePass   bool
	nextIfNone int64
	moved      int
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

// holdsEnqueueFrom reports whether this CPU has yet to apply a direct
// remote enqueue (msgEnqueue) that CPU from did at or before time t.
func (rq *RQ) holdsEnqueueFrom(from int, t int64) bool {
	if rq.sim.holdsDirectFrom(from, rq, t) {
		return true
	}
	for i := range rq.events.h {
		e := &rq.events.h[i]
		if e.kind == evMsg && e.msg.kind == msgEnqueue && e.msg.from == from && e.t <= t {
			return true
		}
	}
	return false
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

// groupStats is fair.c: update_sg_lb_stats().
func (e *lbEnv) groupStats(cpus []int, local bool) *sgStats {
	sgs := &e.sgBuf[0]
	for i := 1; sgs == e.local || sgs == e.busiest; i++ {
		sgs = &e.sgBuf[i]
	}
	*sgs = sgStats{cpus: cpus, groupWeight: len(cpus)}
	m := e.b.m
	cores := &e.b.lbCores // by each core's first CPU
	cores.reset(len(m.CPUs))
	for _, c := range cpus {
		v := e.b.lbView(c)
		sgs.groupLoad += v.load
		sgs.groupUtil += v.cpuUtil()
		sgs.groupRunnable += v.runnable
		sgs.sumHNrRunning += v.hNrRunning
		sgs.sumNrRunning += v.nrRunning
		if v.idle {
			sgs.idleCPUs++
		}
		if first := m.Cores[m.CPUs[c].Core][0]; !cores.has(first) {
			cores.add(first)
			sgs.cores++
		}
	}
	sgs.smt = len(cpus) > 1 && sgs.cores == 1
	sgs.groupCapacity = schedCapacityScale * uint64(len(cpus))
	// Check for loaded SMT group to be balanced to dst CPU.
	if !local && e.idle != cpuNotIdle && sgs.smt && sgs.sumHNrRunning > 1 {
		sgs.smtBalance = true
	}
	sgs.groupType = groupClassify(uint64(e.sd.ImbalancePct), sgs)
	if sgs.groupType == groupOverloaded {
		sgs.avgLoad = sgs.groupLoad * schedCapacityScale / sgs.groupCapacity
	}
	return sgs
}

// groupClassify is fair.c: group_classify() with the domain's
// imbalance_pct: load balancing's stats (update_sg_lb_stats()) and fork
// balancing's (update_sg_wakeup_stats(), whose groups are never
// smt_balance) share it.
func groupClassify(pct uint64, sgs *sgStats) int {
	switch {
	case groupIsOverloaded(pct, sgs):
		return groupOverloaded
	case sgs.smtBalance:
		return groupSMTBalance
	case !groupHasCapacity(pct, sgs):
		return groupFullyBusy
	}
	return groupHasSpare
}

// groupIsOverloaded is fair.c: group_is_overloaded().
func groupIsOverloaded(pct uint64, sgs *sgStats) bool {
	if sgs.sumNrRunning <= sgs.groupWeight {
		return false
	}
	return sgs.groupCapacity*100 < sgs.groupUtil*pct || sgs.groupCapacity*pct < sgs.groupRunnable*100
}

// groupHasCapacity is fair.c: group_has_capacity().
func groupHasCapacity(pct uint64, sgs *sgStats) bool {
	if sgs.sumNrRunning < sgs.groupWeight {
		return true
	}
	if sgs.groupCapacity*pct < sgs.groupRunnable*100 {
		return false
	}
	return sgs.groupCapacity*100 > sgs.groupUtil*pct
}

// pickBusiest is fair.c: update_sd_pick_busiest().
func (e *lbEnv) pickBusiest(sgs *sgStats) bool {
	// Make sure that there is at least one task to pull.
	if sgs.sumHNrRunning == 0 {
		return false
	}
	busiest := e.busiest
	if busiest == nil {
		return true
	}
	if sgs.groupType != busiest.groupType {
		return sgs.groupType > busiest.groupType
	}
	switch sgs.groupType {
	case groupOverloaded:
		// Select the overloaded group with highest avg_load.
		return sgs.avgLoad > busiest.avgLoad
	case groupImbalanced:
		return false
	case groupSMTBalance:
		if sgs.idleCPUs != 0 || busiest.idleCPUs != 0 {
			return hasSparePick(sgs, busiest)
		}
		fallthrough
	case groupFullyBusy:
		// avg_load is not computed for fully busy groups: the first
		// one wins, except over an SMT group.
		if sgs.avgLoad < busiest.avgLoad {
			return false
		}
		if sgs.avgLoad == busiest.avgLoad && busiest.smt {
			return false
		}
		return true
	case groupHasSpare:
		// Do not pick sg with SMT CPUs over sg with pure CPUs, as we do
		// not want to pull task off SMT core with one task and make
		// the core idle.
		if busiest.smt != sgs.smt {
			return !(sgs.smt && sgs.sumHNrRunning <= 1)
		}
		return hasSparePick(sgs, busiest)
	}
	return true
}

// hasSparePick: select the not overloaded group with the lowest number of
// idle CPUs and the highest number of running tasks.
func hasSparePick(sgs, busiest *sgStats) bool {
	if sgs.idleCPUs > busiest.idleCPUs {
		return false
	}
	if sgs.idleCPUs == busiest.idleCPUs && sgs.sumNrRunning <= busiest.sumNrRunning {
		return false
	}
	return true
}

// updateSDLBStats is fair.c: update_sd_lb_stats().
func (e *lbEnv) updateSDLBStats() {
	if c := e.sd.child; c != nil && c.Flags&SD_PREFER_SIBLING != 0 {
		e.preferSibling = true
	}
	for _, g := range e.sd.Groups {
		isLocal := contains(g, e.dstCPU)
		sgs := e.groupStats(g, isLocal)
		e.totalLoad += sgs.groupLoad
		e.totalCapacity += sgs.groupCapacity
		e.sumUtil += sgs.groupUtil
		if isLocal {
			e.local = sgs
			continue
		}
		if e.pickBusiest(sgs) {
			e.busiest = sgs
		}
	}
	// SIS_UTIL: the LLC-spanning domain's periodic balance refreshes
	// nr_idle_scan.
	if e.idle != cpuNewlyIdle && e.b.sim.llc[e.dstCPU].sd == e.sd {
		e.updateIdleCPUScan()
	}
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// updateIdleCPUScan is fair.c: update_idle_cpu_scan(): the SIS_UTIL
// budget, a downward parabola of the LLC's average utilization reaching 0
// at about 85% (1/imbalance_pct).
func (e *lbEnv) updateIdleCPUScan() {
	if !e.b.feat.Has(SIS_UTIL) {
		return
	}
	llcWeight := uint64(e.sd.Weight())
	x := e.sumUtil / llcWeight
	pct := uint64(e.sd.ImbalancePct)
	// y = SCHED_CAPACITY_SCALE - x^2 * pct^2 / (10000 * SCHED_CAPACITY_SCALE)
	tmp := x * x * pct * pct / (10000 * schedCapacityScale)
	tmp = min(tmp, schedCapacityScale)
	y := schedCapacityScale - tmp
	// nr_idle_scan = y * llc_weight / SCHED_CAPACITY_SCALE
	nr := int(y * llcWeight / schedCapacityScale)
	llc := &e.b.sim.llc[e.dstCPU]
	if e.b.sim.llcSnap[llc.id].nrIdleScan == nr {
		return
	}
	llc.shared.SetNrIdleScan(e.b.log, e.b.logNow(), e.b.site(SymLoadBalance), nr)
	e.b.postOrApply(remoteOp{kind: opSetNrIdleScan, target: llc.id, val: int64(nr)})
}

// siblingImbalance is fair.c: sibling_imbalance().
func (e *lbEnv) siblingImbalance() int64 {
	busiest, local := e.busiest, e.local
	if e.idle == cpuNotIdle || busiest.sumNrRunning == 0 {
		return 0
	}
	nb, nl := int64(busiest.cores), int64(local.cores)
	if nb == nl {
		return max(int64(busiest.sumNrRunning-local.sumNrRunning), 0)
	}
	// Balance such that nr_running/ncores ratio are same on both groups.
	imb := max(nl*int64(busiest.sumNrRunning)-nb*int64(local.sumNrRunning), 0)
	// Normalize imbalance and do rounding on normalization.
	imb = (2*imb + nl + nb) / (nl + nb)
	// Take advantage of resource in an empty sched group.
	if imb <= 1 && local.sumNrRunning == 0 && busiest.sumNrRunning > 1 {
		imb = 2
	}
	return imb
}

// findBusiestGroup is fair.c: find_busiest_group() (sched_balance_find_src_group()).
func (e *lbEnv) findBusiestGroup() bool {
	e.updateSDLBStats()
	busiest, local := e.busiest, e.local
	if busiest == nil {
		return false
	}
	if busiest.groupType == groupImbalanced {
		return e.forceBalance()
	}
	// If the local group is busier than the selected busiest group
	// don't try and pull any tasks.
	if local.groupType > busiest.groupType {
		return false
	}
	// When groups are overloaded, use the avg_load to ensure fairness
	// between tasks.
	if local.groupType == groupOverloaded {
		if local.avgLoad >= busiest.avgLoad {
			return false
		}
		e.avgLoad = e.totalLoad * schedCapacityScale / e.totalCapacity
		if local.avgLoad >= e.avgLoad {
			return false
		}
		if 100*busiest.avgLoad <= uint64(e.sd.ImbalancePct)*local.avgLoad {
			return false
		}
	}
	// Try to move all excess tasks to a sibling domain of the busiest
	// group's child domain.
	if e.preferSibling && local.groupType == groupHasSpare && e.siblingImbalance() > 1 {
		return e.forceBalance()
	}
	if busiest.groupType != groupOverloaded {
		if e.idle == cpuNotIdle {
			// Let another idle CPU try to pull task.
			return false
		}
		if busiest.groupType == groupSMTBalance && local.smt != busiest.smt {
			return e.forceBalance()
		}
		if busiest.groupWeight > 1 && local.idleCPUs <= busiest.idleCPUs+1 {
			return false
		}
		if busiest.sumHNrRunning == 1 {
			return false
		}
	}
	return e.forceBalance()
}

func (e *lbEnv) forceBalance() bool {
	e.calculateImbalance()
	return e.imbalance != 0
}

// calculateImbalance is fair.c: calculate_imbalance(), with and without
// LB_SPREAD_LLC (Vincent Guittot's 16b0a7a1a0af: inside an LLC, balance
// task counts, never utilization).
func (e *lbEnv) calculateImbalance() {
	local, busiest := e.local, e.busiest
	switch busiest.groupType {
	case groupSMTBalance, groupImbalanced:
		e.migrationType = migrateTask
		e.imbalance = 1
		return
	}
	if local.groupType == groupHasSpare {
		llcGuard := e.b.feat.Has(LB_SPREAD_LLC) && e.sd.Flags&SD_SHARE_LLC != 0
		if busiest.groupType > groupFullyBusy && !llcGuard {
			// If busiest is overloaded, try to fill spare capacity.
			e.migrationType = migrateUtil
			e.imbalance = int64(max(local.groupCapacity, local.groupUtil) - local.groupUtil)
			if e.idle != cpuNotIdle && e.imbalance == 0 {
				e.migrationType = migrateTask
				e.imbalance = 1
			}
			return
		}
		e.migrationType = migrateTask
		if busiest.groupWeight == 1 || e.preferSibling {
			// When prefer sibling, evenly spread running tasks on
			// groups.
			e.imbalance = e.siblingImbalance()
		} else {
			// If there is no overload, we just want to even the
			// number of idle cpus.
			e.imbalance = max(int64(local.idleCPUs-busiest.idleCPUs), 0)
		}
		consistent := e.b.feat.Has(NUMA_IMB_CONSISTENT)
		if !consistent {
			// Before cb29a5c19d2d (v6.0) each branch halves (nr_diff
			// >> 1): the number of tasks to move, which the allowance
			// tests.
			e.imbalance /= 2
		}
		if e.sd.Flags&SD_NUMA != 0 {
			e.imbalance = e.adjustNumaImbalance(e.imbalance)
		}
		if consistent {
			// Number of tasks to move to restore balance.
			e.imbalance >>= 1
		}
		return
	}
	// Local is fully busy but has to take more load to relieve the
	// busiest group.
	if local.groupType < groupOverloaded {
		local.avgLoad = local.groupLoad * schedCapacityScale / local.groupCapacity
		if local.avgLoad >= busiest.avgLoad {
			e.imbalance = 0
			return
		}
		e.avgLoad = e.totalLoad * schedCapacityScale / e.totalCapacity
		if local.avgLoad >= e.avgLoad {
			e.imbalance = 0
			return
		}
	}
	// Both groups are or will become overloaded: aim at the average.
	e.migrationType = migrateLoad
	a := (int64(busiest.avgLoad) - int64(e.avgLoad)) * int64(busiest.groupCapacity)
	b := (int64(e.avgLoad) - int64(local.avgLoad)) * int64(local.groupCapacity)
	e.imbalance = max(min(a, b)/schedCapacityScale, 0)
}

// adjustNumaImbalance is fair.c: adjust_numa_imbalance() as
// calculate_imbalance() calls it: a small imbalance (NUMA_IMBALANCE_MIN) is
// allowed while the destination is lightly loaded. v5.18+ (NUMA_IMB_LLC,
// e496132ebedd): local->sum_nr_running + 1 <= sd->imb_numa_nr. v5.11 to
// v5.17: allow_numa_imbalance(busiest->sum_nr_running,
// busiest->group_weight), fewer tasks than a quarter of the busiest
// group's CPUs. Simplified: v5.18's imb_numa_nr is v6.0's (setImbNumaNr),
// the same on every preset but a single LLC per node.
func (e *lbEnv) adjustNumaImbalance(imbalance int64) int64 {
	var allow bool
	if e.b.feat.Has(NUMA_IMB_LLC) {
		allow = e.local.sumNrRunning+1 <= e.sd.imbNumaNr
	} else {
		allow = e.busiest.sumNrRunning < e.busiest.groupWeight>>2
	}
	if allow && imbalance <= numaImbalanceMin {
		return 0
	}
	return imbalance
}

// findBusiestQueue is fair.c: find_busiest_queue() (sched_balance_find_src_rq()).
func (e *lbEnv) findBusiestQueue() int {
	busiest := -1
	var busiestLoad, busiestUtil uint64
	busiestNr := 0
	for _, c := range e.busiest.cpus {
		v := e.b.seeCPU(c)
		nr := v.hNrRunning
		if nr == 0 {
			continue
		}
		switch e.migrationType {
		case migrateLoad:
			if nr == 1 && int64(v.load) > e.imbalance {
				continue
			}
			if busiest < 0 || v.load > busiestLoad {
				busiestLoad, busiest = v.load, c
			}
		case migrateUtil:
			// Don't try to pull utilization from a CPU with one
			// running task. (cpu_util(cpu_of(rq)) in v5.15; v6.6
			// reads cpu_util_cfs_boost(), which also takes the max
			// with runnable_avg (7d0583cf9ec7, v6.5): not modeled.)
			if nr <= 1 {
				continue
			}
			if u := v.cpuUtil(); busiest < 0 || busiestUtil < u {
				busiestUtil, busiest = u, c
			}
		case migrateTask:
			if busiestNr < nr {
				busiestNr, busiest = nr, c
			}
		}
	}
	return busiest
}

// shouldWeBalance is fair.c: should_we_balance().
func (e *lbEnv) shouldWeBalance() bool {
	b := e.b
	if e.idle == cpuNewlyIdle {
		// Bail out if we already have tasks or a wakeup pending.
		// (Newidle balancing is always dst's own: read it exactly.)
		o := b.sim.cpus[e.dstCPU]
		return o.nrRunning == 0 && !o.ttwuPending()
	}
	var local []int
	for _, g := range e.sd.Groups {
		if contains(g, e.dstCPU) {
			local = g
			break
		}
	}
	idleSMT := -1
	skip := &b.lbSkip
	skip.reset(len(b.m.CPUs))
	for _, c := range local {
		if skip.has(c) || !b.seeCPU(c).idle {
			continue
		}
		// Don't balance to idle SMT in busy core right away when
		// balancing cores.
		if e.sd.Flags&SD_SHARE_CPUCAPACITY == 0 && !b.coreIdle(c) {
			if idleSMT == -1 {
				idleSMT = c
			}
			for _, s := range b.m.SMTSiblings(c) {
				skip.add(s)
			}
			continue
		}
		// Are we the first idle CPU?
		return c == e.dstCPU
	}
	if idleSMT == e.dstCPU {
		return true
	}
	// Are we the first CPU of this group?
	return local[0] == e.dstCPU
}

// coreIdle is fair.c: is_core_idle().
func (b *RQ) coreIdle(cpu int) bool {
	for _, s := range b.m.SMTSiblings(cpu) {
		if s != cpu && !b.seeCPU(s).idle {
			return false
		}
	}
	return true
}

// loadBalance is fair.c: load_balance() (sched_balance_rq()) of domain sd
// for CPU dst, run by CPU b (b == dst except for NOHZ idle balancing). It
// returns the pull it decided (nil: none) and whether to continue
// balancing at higher levels. A pull decided at the barrier (the ILB's) is
// carried out at once, and its moved count is load_balance()'s ld_moved;
// one decided in an epoch is posted (req.posted) and moves at the barrier.
func (b *RQ) loadBalance(dst int, sd *Domain, idle int) (req *pullReq, cont bool) {
	e := &lbEnv{b: b, dstCPU: dst, sd: sd, idle: idle}
	sd.Stats.LBCount[idle]++
	if !e.shouldWeBalance() {
		e.outBalanced()
		return nil, false
	}
	if !e.findBusiestGroup() {
		sd.Stats.LBNoBusyG[idle]++
		e.outBalanced()
		return nil, true
	}
	src := e.findBusiestQueue()
	if src < 0 {
		sd.Stats.LBNoBusyQ[idle]++
		e.outBalanced()
		return nil, true
	}
	sd.Stats.LBImbalance[idle] += e.imbalance
	req = &pullReq{src: src, dst: dst, sd: sd, idle: idle, imbalance: e.imbalance,
		migrationType: e.migrationType, loopMax: min(b.tun.NrMigrate, b.seeCPU(src).nrRunning),
		posted: !b.pay.barrier}
	b.postOrApply(remoteOp{kind: opPull, target: src, pull: req})
	return req, true
}

// willMove is whether the caller is to go on as if load_balance() returned
// ld_moved > 0: a posted pull is predicted to move (doPull corrects the
// prediction's rq->next_balance if it does not).
func (r *pullReq) willMove() bool { return r != nil && (r.posted || r.moved > 0) }

// outBalanced is load_balance()'s out_balanced path.
func (e *lbEnv) outBalanced() {
	sd := e.sd
	sd.Stats.LBBalanced[e.idle]++
	sd.nrBalanceFailed = 0
	if e.idle == cpuNewlyIdle {
		return
	}
	// tune up the balancing interval
	if sd.balanceInterval < sd.MaxInterval {
		sd.balanceInterval *= 2
	}
}

// doPull carries out a pull at the barrier: detach_tasks() from the
// source's queue under its lock, attach_tasks() on the destination, and
// load_balance()'s bookkeeping of the outcome (failures, active balance,
// the interval).
func (s *Sim) doPull(op *remoteOp) {
	r := op.pull
	s.touch(s.cpus[op.from])
	s.touch(s.cpus[r.src])
	s.touch(s.cpus[r.dst])
	if r.posted && s.cpus[r.src].holdsEnqueueFrom(op.from, op.t) {
		// The puller counted its own direct enqueues onto the source
		// (ownEnqueues): in the kernel they are on the source's queue
		// before its detach_tasks() runs. The source applies them
		// later than this barrier here, so the pull waits for the
		// barrier after they are applied.
		actor := s.cpus[op.from]
		actor.outbox = append(actor.outbox, *op)
		return
	}
	src, dst := s.cpus[r.src], s.cpus[r.dst]
	src.catchUp(s.epochEnd)
	dst.catchUp(s.epochEnd)
	actor := s.cpus[op.from]
	moved := 0
	hot := 0
	if src.nrRunning > 1 && dst.cpu != src.cpu {
		// load_balance() runs on the balancing CPU: detach_tasks()
		// under the busiest runqueue's lock and attach_tasks() under
		// dst's are its work, so their accesses go on its log and
		// their stalls are its own. A newidle pull's are timed with
		// the rest of its balance (newidlePulled): dst is the puller.
		newidle := r.idle == cpuNewlyIdle && actor == dst
		saved := src.logOn(newidle)
		src.lockRQ(SymLoadBalance)
		src.updateRQClock()
		tasks, hotMoved := src.detachTasks(r, dst)
		src.unlockRQ(SymLoadBalance)
		src.logBack(saved, actor)
		for _, p := range tasks {
			s.tracePull(actor, p, src.cpu, dst.cpu, r.idle == cpuNewlyIdle)
		}
		hot = hotMoved
		saved = dst.logOn(newidle)
		dst.lockRQ(SymLoadBalance)
		dst.updateRQClock()
		for _, p := range tasks {
			s.attachTask(p, dst, actor)
		}
		dst.unlockRQ(SymLoadBalance)
		dst.logBack(saved, actor)
		moved = len(tasks)
		work := int64(moved) * (s.m.Cost(hwmodel.OpMigrate) + s.m.Cost(hwmodel.OpEnqueue) + s.m.Cost(hwmodel.OpDequeue))
		actor.addDebt(SymLoadBalance, work)
		if s.uclampUsed {
			// detach_task() -> dequeue_task() -> uclamp_rq_dec() on
			// src, attach_task() -> enqueue_task() -> uclamp_rq_inc()
			// on dst: the balancing CPU's too (the rqs charge
			// nothing, onBehalf), their lines already on its log.
			uc := int64(moved) * s.m.Cost(hwmodel.OpUclamp)
			actor.addDebt(SymUclampRQDec, uc)
			actor.addDebt(SymUclampRQInc, uc)
			work += 2 * uc
		}
		if newidle {
			dst.newidlePulled(r.sd, moved, work, s.epochEnd)
		}
	} else if r.idle == cpuNewlyIdle && actor == dst {
		dst.newidlePulled(r.sd, 0, 0, s.epochEnd)
	}
	r.moved = moved
	sd := r.sd
	sd.Stats.LBGained[r.idle] += int64(moved)
	sd.Stats.LBHotGained[r.idle] += int64(hot)
	if moved == 0 {
		sd.Stats.LBFailed[r.idle]++
		if r.idle != cpuNewlyIdle {
			sd.nrBalanceFailed++
		}
		// need_active_balance(): the imbalance keeps failing to
		// move tasks (imbalanced_active_balance()).
		if r.migrationType == migrateTask && sd.nrBalanceFailed > sd.CacheNiceTries+2 {
			s.activeBalance(src, dst, sd)
		}
	} else {
		sd.nrBalanceFailed = 0
	}
	// We were unbalanced, so reset the balancing interval.
	sd.balanceInterval = sd.MinInterval
	if moved == 0 && r.posted && r.idlePass {
		// rebalance_domains() of an idle CPU took the busy intervals
		// on the prediction that this pull would move a task; it
		// moved none, and the kernel's pass (v5.15, v6.6: idle and
		// busy recomputed only "if (load_balance(...))") keeps the
		// idle intervals: rq->next_balance from those, this domain's
		// from its interval just reset. (Higher domains the pass
		// skipped as not yet due at their busy interval are balanced
		// at the next tick or ILB pass instead of in the same pass.)
		next := min(r.nextIfNone, sd.lastBalance+dst.balanceInterval(sd, false))
		dst.nextBalance = min(dst.nextBalance, next)
	}
}

// logOn makes this RQ's code log its accesses for actor's log until
// logBack: the kernel runs it on actor's CPU (load_balance() detaching
// from, or attaching to, another CPU's runqueue), so the weave charges
// actor the stalls. newidle: the accesses are a newidle balance's
// (RQ.site), timed in its cost. They go to scratch (toScratch), and
// logBack appends them to actor's log in their order at actor's clock
// (logNow): the two CPUs' clocks differ, and the replay spaces a CPU's
// requests by their own costs. actor may be this RQ. It returns this
// RQ's own log, for logBack.
func (rq *RQ) logOn(newidle bool) *weave.Log {
	rq.inNewidle = newidle
	return rq.toScratch()
}

// logBack ends logOn: the accesses move to actor's log.
func (rq *RQ) logBack(own *weave.Log, actor *RQ) {
	rq.fromScratch(own, actor, func(weave.Entry) (int64, bool) { return actor.logNow(), true })
	rq.inNewidle = false
}

// detachTasks is fair.c: detach_tasks(): from the least recently run,
// take what can migrate until the imbalance is met (one task for a newly
// idle puller on a preemptible kernel).
func (src *RQ) detachTasks(r *pullReq, dst *RQ) (tasks []*Task, hotMoved int) {
	imbalance := r.imbalance
	if src.nrRunning <= 1 || imbalance <= 0 {
		return nil, 0
	}
	loop := 0
	for p := src.cfsTasks.tail; p != nil; {
		prevP := p.tlPrev
		// We don't want to steal all.
		if r.idle != cpuNotIdle && src.nrRunning <= 1 {
			break
		}
		loop++
		if loop > r.loopMax {
			break
		}
		ok, hot := src.canMigrateTask(p, r, dst)
		if ok {
			take := true
			switch r.migrationType {
			case migrateLoad:
				load := max(src.taskHLoad(p), 1)
				if load>>min(uint(r.sd.nrBalanceFailed), 63) > uint64(imbalance) {
					take = false
				} else {
					imbalance -= int64(load)
				}
			case migrateUtil:
				// v5.15..v6.7 detach_tasks(): "if (util >
				// env->imbalance) goto next": the test is not relaxed
				// by nr_balance_failed, as migrate_load's is; that
				// came with v6.8 (3af7524b1419, Pierre Gondois), which
				// no profile models. task_util_est(): a task that ran
				// long before its last sleep keeps its size (~1000 after
				// 1 s of spinning) while its util_avg decays.
				util := taskUtilEst(p)
				if util > uint64(imbalance) {
					take = false
				} else {
					imbalance -= int64(util)
				}
			case migrateTask:
				imbalance--
			}
			if take {
				src.detachTask(p, dst.cpu)
				tasks = append(tasks, p)
				if hot {
					hotMoved++
				}
				// NEWIDLE balancing is a source of latency, so
				// preemptible kernels stop after the first task.
				if r.idle == cpuNewlyIdle || imbalance <= 0 {
					break
				}
			}
		}
		p = prevP
	}
	return tasks, hotMoved
}

// canMigrateTask is fair.c: can_migrate_task(); hot reports a cache-hot
// task forced over by repeated failures (lb_hot_gained).
func (src *RQ) canMigrateTask(p *Task, r *pullReq, dst *RQ) (ok, hot bool) {
	if !p.allowedOn(dst.cpu) {
		return false, false
	}
	if src.curr == p {
		return false, false
	}
	if p.se.SchedDelayed {
		// Simplified (delayed.go): v6.12 migrates a delayed task,
		// still delayed; the model leaves it to its pick or wakeup.
		return false, false
	}
	h := src.taskHot(p, r.sd, dst)
	if !h || r.sd.nrBalanceFailed > r.sd.CacheNiceTries {
		return true, h
	}
	return false, false
}

// taskHot is fair.c: task_hot(): ran within sysctl_sched_migration_cost
// (500 us), or a buddy, and not across SMT siblings. A migrated task is
// cold (exec_start = 0, or PLACE_MIGRATE's se->migrated).
func (src *RQ) taskHot(p *Task, sd *Domain, dst *RQ) bool {
	if sd.Flags&SD_SHARE_CPUCAPACITY != 0 {
		return false
	}
	if p.se.migrated != 0 {
		return false
	}
	cfs := p.se.cfsRq
	if dst.nrRunning > 0 && (cfs.next == &p.se || cfs.last == &p.se) {
		return true
	}
	delta := int64(src.clock) - int64(p.se.ExecStart)
	return delta < src.tun.MigrationCost
}

// detachTask is fair.c: detach_task(): dequeue as TASK_ON_RQ_MIGRATING
// and set the new CPU.
func (src *RQ) detachTask(p *Task, dst int) {
	p.setState(TaskMigrating)
	src.onBehalf(src.sim.cpus[dst], func() { src.deactivateTask(p, 0) })
	src.sim.setTaskCPU(p, dst)
}

// attachTask is fair.c: attach_task(), done by actor (the balancing CPU).
func (s *Sim) attachTask(p *Task, dst, actor *RQ) {
	dst.onBehalf(actor, func() {
		dst.activateTask(p, 0)
		p.setState(TaskRunnable)
		dst.wakeupPreempt(p, 0)
	})
	dst.markDirty(p)
	dst.republish = true
}

// activeBalance is the active_load_balance_cpu_stop() path: the busiest
// CPU's stopper preempts its running task and pushes it to dst. Done here
// at the barrier: the task comes off src's CPU as if preempted, moves, and
// src reschedules at once.
func (s *Sim) activeBalance(src, dst *RQ, sd *Domain) {
	s.touch(src)
	s.touch(dst)
	p := src.curr
	if p == nil || !p.allowedOn(dst.cpu) || src.nrRunning != 1 {
		sd.Stats.ALBFailed++
		return
	}
	sd.Stats.ALBCount++
	src.catchUp(s.epochEnd)
	src.enterKernel()
	src.lockRQ(SymLoadBalance)
	src.updateRQClock()
	src.putPrevTaskFair(p)
	p.setState(TaskRunnable)
	p.Stats.NrInvolSwitch++
	src.schedInfoDepart(p)
	src.curr = nil
	src.mode = modeIdle
	src.log.Record(src.logNow(), src.currLine, hwmodel.Write, src.site(SymLoadBalance))
	src.unlockRQ(SymLoadBalance)
	s.traceActiveBalance(src, p, dst.cpu)
	// The stopper on src attaches p to dst: attach_one_task() ->
	// wakeup_preempt() -> resched_curr(dst), which must reach dst (an
	// idle dst has no other event to notice need_resched by). dst's
	// clock is brought to the barrier first (an idle CPU's stands at its
	// last event), and its new nr_running is published.
	dst.catchUp(s.epochEnd)
	dst.onBehalf(src, func() { s.moveQueuedTask(p, dst.cpu) })
	dst.markDirty(p)
	dst.republish = true
	sd.Stats.ALBPushed++
	src.events.push(event{t: src.now, kind: evMsg, msg: &message{kind: msgResched, from: dst.cpu}})
	src.markDirty(p)
	src.republish = true
}

// updateBlockedAverages is fair.c: update_blocked_averages() (v5.15,
// v6.6): take the rq lock and update_rq_clock() first, so that the blocked
// load and util of an idle CPU, whose clock stands at its last event, decay
// to now; then the fair part (updateBlockedFair).
func (rq *RQ) updateBlockedAverages() {
	rq.lockRQ(SymUpdateBlockedAverages)
	rq.updateBlockedAveragesLocked()
	rq.unlockRQ(SymUpdateBlockedAverages)
}

// updateBlockedAveragesLocked is update_blocked_averages() with the rq
// lock already held: newidle_balance() drops the lock around its
// balancing and update_blocked_averages() retakes it; the model keeps
// holding schedule()'s lock instead (a simplification: no remote CPU can
// slip in between).
func (rq *RQ) updateBlockedAveragesLocked() {
	rq.updateRQClock()
	rq.updateBlockedFair()
}

// updateBlockedFair is fair.c: __update_blocked_fair(): decay the load of
// every group queue on this CPU bottom-up, publish it to tg->load_avg, and
// carry it up.
func (rq *RQ) updateBlockedFair() {
	rq.cost(hwmodel.OpUpdateLoadAvg)
	now := rq.peltNow()
	gs := rq.sim.groups
	for i := len(gs) - 1; i >= 0; i-- {
		cfs := gs[i].cfsRq[rq.cpu]
		if cfs.isDecayed() {
			continue
		}
		if rq.updateCfsRqLoadAvg(now, cfs) {
			rq.updateTgLoadAvg(cfs)
		}
		se := gs[i].se[rq.cpu]
		if !se.skipBlockedUpdate() {
			rq.updateLoadAvg(se.cfsRq, se, updateTG)
		}
	}
	rq.updateCfsRqLoadAvg(now, rq.cfs)
}

// isDecayed is fair.c: cfs_rq_is_decayed() (with the Dec-2025 fix: a
// queue still contributing to tg->load_avg is not decayed).
func (c *CfsRq) isDecayed() bool {
	return c.load.Weight == 0 && c.avg.LoadSum == 0 && c.avg.UtilSum == 0 && c.avg.RunnableSum == 0 &&
		c.tgLoadAvgContrib == 0 && !c.prop.Pending
}

// skipBlockedUpdate is fair.c: skip_blocked_update().
func (se *SchedEntity) skipBlockedUpdate() bool {
	if se.Avg.LoadAvg != 0 || se.Avg.UtilAvg != 0 {
		return false
	}
	return !se.myQ.prop.Pending
}
