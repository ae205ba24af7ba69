package emu

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
	if e.b.publishedNrIdleScan(llc.id) == nr {
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
