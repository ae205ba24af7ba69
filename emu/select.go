package emu

import "github.com/rqemu/rqemu/hwmodel"

// The CPU a wakeup goes to: fair.c's select_task_rq_fair() with
// wake_affine() and select_idle_sibling(), run by the waker inside
// try_to_wake_up() (ttwu.go), and the remote reads they make (idle_cpu(),
// cpu_load(), sd_llc_shared), each priced on the physical line and
// answered from what the last barrier published (view.go).

// allowedOn reports whether cpu is in p->cpus_ptr. The affinity changes
// only at barriers, so any CPU may read it.
func (p *Task) allowedOn(cpu int) bool {
	return p.affinity == nil || p.affinity[cpu]
}

// --- select_task_rq_fair() ---

// selectTaskRQ is core.c: select_task_rq() for the fair class: the
// fair choice, or a fallback if it is not allowed.
func (rq *RQ) selectTaskRQ(p *Task, v taskSnap, prev, wakeFlags int) int {
	cpu := rq.selectTaskRQFair(p, v, prev, wakeFlags)
	if !p.allowedOn(cpu) {
		for c := range rq.sim.cpus {
			if p.allowedOn(c) {
				return c
			}
		}
	}
	return cpu
}

// selectTaskRQFair is fair.c: select_task_rq_fair() for a wakeup
// (WF_TTWU: SD_BALANCE_WAKE is never set, so always the fast path).
func (rq *RQ) selectTaskRQFair(p *Task, v taskSnap, prev, wakeFlags int) int {
	defer rq.leave(rq.enter(SymSelectTaskRQFair))
	rq.cost(hwmodel.OpSelectRQ)
	cpu := rq.cpu
	newCPU := prev
	sync := wakeFlags&wfSync != 0
	rq.recordWakee(p)
	rq.affineFlags = 0
	wantAffine := !rq.wakeWide(v) && p.allowedOn(cpu)
	for _, d := range rq.sim.domains[cpu] {
		// If both 'cpu' and 'prev_cpu' are part of this domain, cpu is
		// a valid SD_WAKE_AFFINE target.
		if wantAffine && d.Flags&SD_WAKE_AFFINE != 0 && d.Contains(prev) {
			if cpu != prev {
				newCPU = rq.wakeAffine(d, p, v, cpu, prev, sync)
				// schedstat_inc(p->stats.nr_wakeups_affine_attempts),
				// and nr_wakeups_affine when it picks this_cpu.
				rq.affineFlags = wfAffineTried
				if newCPU == cpu {
					rq.affineFlags |= wfAffine
				}
			}
			break
		}
		if !wantAffine {
			break
		}
	}
	return rq.selectIdleSibling(p, v, prev, newCPU)
}

// recordWakee is fair.c: record_wakee() on current (the waker task; a
// wakeup from interrupt context on an idle CPU has no current to record).
func (rq *RQ) recordWakee(p *Task) {
	cur := rq.curr
	if cur == nil {
		return
	}
	// Only decay a single time; tasks that have less then 1 wakeup per
	// jiffy will not have built up many flips.
	if rq.now > cur.wakeeFlipDecayTS+nsecPerSec {
		cur.wakeeFlips >>= 1
		cur.wakeeFlipDecayTS = rq.now
	}
	if cur.lastWakee != p {
		cur.lastWakee = p
		cur.wakeeFlips++
		rq.markDirty(cur)
	}
}

// wakeWide is fair.c: wake_wide().
func (rq *RQ) wakeWide(v taskSnap) bool {
	if rq.curr == nil {
		return false
	}
	master, slave := rq.curr.wakeeFlips, v.wakeeFlips
	factor := uint(rq.sim.llc[rq.cpu].size)
	if master < slave {
		master, slave = slave, master
	}
	return !(slave < factor || master < slave*factor)
}

// wakeAffine is fair.c: wake_affine().
func (rq *RQ) wakeAffine(d *Domain, p *Task, v taskSnap, this, prev int, sync bool) int {
	target := -1
	if rq.feat.Has(WA_IDLE) {
		target = rq.wakeAffineIdle(this, prev, sync)
	}
	if rq.feat.Has(WA_WEIGHT) && target < 0 {
		target = rq.wakeAffineWeight(d, p, v, this, prev, sync)
	}
	if target != this {
		return prev
	}
	d.Stats.TTWUMoveAffine++
	return target
}

// wakeAffineIdle is fair.c: wake_affine_idle().
func (rq *RQ) wakeAffineIdle(this, prev int, sync bool) int {
	// If this_cpu is idle, it implies the wakeup is from interrupt
	// context. Only allow the move if cache is shared.
	if rq.idleCPU(this, SymSelectTaskRQFair) && rq.sim.cpusShareCache(this, prev) {
		if rq.idleCPU(prev, SymSelectTaskRQFair) {
			return prev
		}
		return this
	}
	if sync && rq.nrRunning == 1 {
		return this
	}
	if rq.idleCPU(prev, SymSelectTaskRQFair) {
		return prev
	}
	return -1
}

// wakeAffineWeight is fair.c: wake_affine_weight().
func (rq *RQ) wakeAffineWeight(d *Domain, p *Task, v taskSnap, this, prev int, sync bool) int {
	thisEff := int64(rq.readLoad(this, SymSelectTaskRQFair))
	if sync && rq.curr != nil {
		cur := int64(rq.taskHLoad(rq.curr))
		if cur > thisEff {
			return this
		}
		thisEff -= cur
	}
	taskLoad := int64(v.hLoad)
	thisEff += taskLoad
	if rq.feat.Has(WA_BIAS) {
		thisEff *= 100
	}
	thisEff *= 1024 // capacity_of(prev)
	prevEff := int64(rq.readLoad(prev, SymSelectTaskRQFair))
	prevEff -= taskLoad
	if rq.feat.Has(WA_BIAS) {
		prevEff *= int64(100 + (d.ImbalancePct-100)/2)
	}
	prevEff *= 1024 // capacity_of(this)
	if sync {
		prevEff++
	}
	if thisEff < prevEff {
		return this
	}
	return -1
}

// selectIdleSibling is fair.c: select_idle_sibling() (v6.6, no
// asymmetric capacity, no cluster scheduling on the target machines).
func (rq *RQ) selectIdleSibling(p *Task, v taskSnap, prev, target int) int {
	defer rq.leave(rq.enter(SymSelectIdleSibling))
	sim := rq.sim
	if rq.idleCPU(target, SymSelectIdleSibling) {
		return target
	}
	// If the previous CPU is cache affine and idle, don't be stupid.
	if prev != target && sim.cpusShareCache(prev, target) && rq.idleCPU(prev, SymSelectIdleSibling) {
		return prev
	}
	// Check a recently used CPU as a potential idle candidate.
	recent := v.recentUsedCPU
	rq.sisRecent = prev // p->recent_used_cpu = prev, applied by the wakee's owner
	if recent >= 0 && recent != prev && recent != target && sim.cpusShareCache(recent, target) &&
		p.allowedOn(recent) && rq.idleCPU(recent, SymSelectIdleSibling) {
		return recent
	}
	llc := sim.llc[target]
	if llc.sd == nil {
		return target
	}
	hasIdleCore := false
	if sim.smtActive {
		hasIdleCore = rq.testIdleCores(target)
		if !hasIdleCore && sim.cpusShareCache(prev, target) {
			if i := rq.selectIdleSMT(p, llc.sd, prev); i >= 0 {
				return i
			}
		}
	}
	if i := rq.selectIdleCPU(p, llc.sd, hasIdleCore, target); i >= 0 {
		return i
	}
	return target
}

// selectIdleSMT is fair.c: select_idle_smt().
func (rq *RQ) selectIdleSMT(p *Task, sd *Domain, target int) int {
	for _, c := range rq.m.SMTSiblings(target) {
		if c == target {
			continue
		}
		if sd.Contains(c) && p.allowedOn(c) && rq.idleCPU(c, SymSelectIdleSibling) {
			return c
		}
	}
	return -1
}

// selectIdleCPU is fair.c: select_idle_cpu(), with SIS_PROP's bound
// (v5.15/v5.19: the waker's predicted idle time over the average cost of
// a scan, timed with cpu_clock()) and SIS_UTIL's nr_idle_scan (v6.0+;
// it overrides SIS_PROP's nr when both are on, as in v6.0 to v6.6).
func (rq *RQ) selectIdleCPU(p *Task, sd *Domain, hasIdleCore bool, target int) int {
	nr := int(^uint(0) >> 1)
	sisProp := rq.feat.Has(SIS_PROP) && !hasIdleCore
	thisSD := rq.sim.llc[rq.cpu].sd // this_sd: sd_llc of this CPU
	var t0, d0 int64
	if sisProp && thisSD != nil {
		nr = rq.sisPropNr(sd, thisSD)
		// time = cpu_clock(this): the scan's cost as charged to this
		// CPU, its clock or, at a barrier, its debt. Simplified: the
		// weave's stalls of the probes, reported at a later barrier,
		// are not in it (newidle's cost takes them: sim.go).
		t0, d0 = rq.now, rq.debt
	}
	if rq.feat.Has(SIS_UTIL) {
		// because !--nr is the condition to stop scan
		nr = rq.readNrIdleScan(target) + 1
		// overloaded LLC is unlikely to have idle cpu/core
		if nr == 1 {
			return -1
		}
	}
	rq.Stats.SISScans++
	if hasIdleCore {
		rq.Stats.IdleCoreScans++
	}
	idleCPU := -1
	span := sd.Span
	start := wrapStart(span, target)
	skip := &rq.sisSkip
	skip.reset(len(rq.m.CPUs))
	for k := 0; k < len(span); k++ {
		c := span[(start+k)%len(span)]
		if !p.allowedOn(c) || skip.has(c) {
			continue
		}
		if hasIdleCore {
			rq.Stats.SISProbes++
			if i := rq.selectIdleCore(p, c, &idleCPU, skip); i >= 0 {
				return i
			}
		} else {
			nr--
			if nr == 0 {
				// v5.15/v5.19 return here, before the cost update.
				return -1
			}
			rq.Stats.SISProbes++
			if rq.idleCPU(c, SymSelectIdleSibling) {
				idleCPU = c
				break
			}
		}
	}
	if hasIdleCore {
		rq.setIdleCores(target, false)
	}
	if sisProp && thisSD != nil {
		time := rq.now - t0 + rq.debt - d0
		// Account for the scan cost of wakeups against the average
		// idle time.
		rq.wakeAvgIdle -= min(rq.wakeAvgIdle, time)
		updateAvg(&thisSD.avgScanCost, time)
	}
	return idleCPU
}

// sisPropNr is select_idle_cpu()'s SIS_PROP bound (fair.c v5.15 and
// v5.19): age this_rq->wake_avg_idle by halving it per jiffy since the
// last wakeup of an idle CPU set it ("if we're busy, the assumption that
// the last idle period predicts the future is flawed"), then scan
// span_weight * wake_avg_idle / (avg_scan_cost + 1) CPUs, at least 4.
func (rq *RQ) sisPropNr(sd, thisSD *Domain) int {
	now := rq.jiffies()
	for rq.wakeStamp < now && rq.wakeAvgIdle != 0 {
		rq.wakeStamp++
		rq.wakeAvgIdle >>= 1
	}
	avgIdle := rq.wakeAvgIdle
	avgCost := thisSD.avgScanCost + 1
	spanAvg := int64(sd.Weight()) * avgIdle
	if spanAvg > 4*avgCost {
		return int(spanAvg / avgCost)
	}
	return 4
}

// updateAvg is sched.h: update_avg(): an EWMA with weight 1/8.
func updateAvg(avg *int64, sample int64) {
	*avg += (sample - *avg) / 8
}

// wrapStart is where select_idle_cpu()'s for_each_cpu_wrap(cpu, cpus,
// target + 1) starts in span (sorted): the first CPU after target, or the
// first of the span when target is its last.
func wrapStart(span []int, target int) int {
	for i, c := range span {
		if c > target {
			return i
		}
	}
	return 0
}

// selectIdleCore is fair.c: select_idle_core(): the whole core must be
// idle; remember an idle CPU as a fallback; skip the core's other CPUs.
func (rq *RQ) selectIdleCore(p *Task, core int, idleCPU *int, skip *cpuSet) int {
	idle := true
	for _, c := range rq.m.SMTSiblings(core) {
		if !rq.idleCPU(c, SymSelectIdleSibling) {
			idle = false
			if *idleCPU == -1 {
				continue
			}
			break
		}
		if *idleCPU == -1 && p.allowedOn(c) {
			*idleCPU = c
		}
	}
	if idle {
		return core
	}
	for _, c := range rq.m.SMTSiblings(core) {
		skip.add(c)
	}
	return -1
}

// --- sd_llc_shared writes: on the line now, in the model at the barrier (the reads are view.go's) ---

// setIdleCores is fair.c: set_idle_cores(): a write to the LLC's shared
// line, applied to the model at the barrier (last writer in time wins).
func (rq *RQ) setIdleCores(cpu int, v bool) {
	llc := &rq.sim.llc[cpu]
	llc.shared.SetHasIdleCores(rq.log, rq.now, rq.site(SymSelectIdleSibling), v)
	rq.setLLCWrite(llc.id, v)
	var x int64
	if v {
		x = 1
	}
	rq.post(remoteOp{kind: opSetIdleCores, target: llc.id, val: x})
}

// updateIdleCore is fair.c: __update_idle_core() on idle entry: if every
// SMT sibling is idle too, the LLC has an idle core.
func (rq *RQ) updateIdleCore() {
	if !rq.sim.smtActive {
		return
	}
	if rq.testIdleCores(rq.cpu) {
		return
	}
	for _, c := range rq.m.SMTSiblings(rq.cpu) {
		if c != rq.cpu && !rq.idleCPU(c, SymSchedule) {
			return
		}
	}
	rq.Stats.IdleCoresSets++
	rq.setIdleCores(rq.cpu, true)
}

// taskHLoad is fair.c: task_h_load(): the task's load as seen at the
// root, through its group's share (update_cfs_rq_h_load()). Computed on
// the task's own CPU.
func (rq *RQ) taskHLoad(p *Task) uint64 {
	cfs := p.se.cfsRq
	return p.se.Avg.LoadAvg * rq.cfsRqHLoad(cfs) / (cfs.avg.LoadAvg + 1)
}

// cfsRqHLoad is cfs_rq->h_load: the root's load_avg scaled down the
// hierarchy by each group entity's share of its parent's load.
func (rq *RQ) cfsRqHLoad(cfs *CfsRq) uint64 {
	if cfs.isRoot() {
		return cfs.avg.LoadAvg
	}
	se := cfs.tg.se[rq.cpu]
	parent := se.cfsRq
	return rq.cfsRqHLoad(parent) * se.Avg.LoadAvg / (parent.avg.LoadAvg + 1)
}
