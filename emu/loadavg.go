package emu

import (
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
	"github.com/rqemu/rqemu/hwmodel"
)

// bootNS offsets the clocks PELT and the tg->load_avg ratelimit read
// (cfs_rq_clock_pelt(), sched_clock_cpu()) as if the machine had booted a
// second before the run: the kernel uses 0 to mean "never" in both
// (se->avg.last_update_time == 0 is "migrated, attach me";
// last_update_tg_load_avg == 0 must not ratelimit the first write).
const bootNS = 1 << 30

// peltNow is cfs_rq_clock_pelt(): rq_clock_pelt(), rq->clock_pelt minus
// lost_idle_time (no CFS bandwidth throttling is modeled, so no
// throttled_clock_pelt_time).
func (rq *RQ) peltNow() uint64 { return uint64(rq.clockPelt-rq.lostIdleTime) + bootNS }

// updateRQClockPelt is pelt.h: update_rq_clock_pelt() (v6.6; the scale
// invariance of 23127296889f "sched/fair: Update scale invariance of
// PELT", v5.1). While a task runs, the PELT clock advances by the work a
// CPU at full capacity and at the reference frequency would have done:
// delta scaled by arch_scale_cpu_capacity() (1024: the targets are
// symmetric) and by arch_scale_freq_capacity() (hwmodel FreqScale: x86's
// APERF/MPERF against the 4-core turbo, aperfmperf.c scale_freq_tick()).
// An idle CPU's PELT clock is synced back to its clock
// (_update_idle_rq_clock_pelt()), so the idle time a slower CPU "stole" by
// running longer reappears as idle in the signals: a CPU busy 95% of the
// time at 3.0 GHz against a 3.8 GHz reference has util_avg near 770, not
// 970. Simplified: the frequency is constant (the machine's sustained
// all-core clock); a real CPU turbos higher when few cores are busy.
func (rq *RQ) updateRQClockPelt(delta int64) {
	if rq.curr == nil {
		rq.clockPelt = rq.clock
		return
	}
	rq.clockPelt += delta * int64(rq.m.FreqScale) >> 10
}

// updateIdleRQClockPelt is pelt.h: update_idle_rq_clock_pelt(): a CPU
// whose utilization had reached the maximum was always running, with no
// idle time to steal back: the gap is lost_idle_time, not idle. (The
// kernel adds the rt and dl util_avg to the sum; neither class is
// modeled.)
func (rq *RQ) updateIdleRQClockPelt() {
	const divider = ((pelt.LoadAvgMax - 1024) << 10) - pelt.LoadAvgMax
	if uint64(rq.cfs.avg.UtilSum) >= divider {
		rq.lostIdleTime += rq.clock - rq.clockPelt
	}
	rq.clockPelt = rq.clock
}

// updateLoadAvg is fair.c: update_load_avg().
func (rq *RQ) updateLoadAvg(cfs *CfsRq, se *SchedEntity, flags int) {
	rq.cost(hwmodel.OpUpdateLoadAvg)
	now := rq.peltNow()
	// Track task load average for carrying it to new CPU after migrated.
	if se.Avg.LastUpdateTime != 0 && flags&skipAgeLoad == 0 {
		pelt.UpdateSE(now, &se.Avg, se.OnRQ, se.runnable(), cfs.curr == se, se.weightDown())
	}
	decayed := rq.updateCfsRqLoadAvg(now, cfs)
	if !se.isTask() && rq.propagateEntityLoadAvg(se) {
		decayed = true
	}
	switch {
	case se.Avg.LastUpdateTime == 0 && flags&doAttach != 0:
		// DO_ATTACH from enqueue_entity() with !last_update_time: we
		// migrated (or are new) and attach on this CPU.
		rq.attachEntityLoadAvg(cfs, se)
		prev := rq.tgSite
		if prev == tgSiteEnqueue {
			rq.tgSite = tgSiteEnqueueAttach
		}
		rq.updateTgLoadAvg(cfs)
		rq.tgSite = prev
	case flags&doDetach != 0:
		rq.detachEntityLoadAvg(cfs, se)
		prev := rq.tgSite
		if prev == tgSiteDequeue {
			rq.tgSite = tgSiteDequeueDetach
		}
		rq.updateTgLoadAvg(cfs)
		rq.tgSite = prev
	case decayed && flags&updateTG != 0:
		rq.updateTgLoadAvg(cfs)
	}
}

// updateCfsRqLoadAvg is fair.c: update_cfs_rq_load_avg(): take the load
// removed by wakeup migrations (reading the removed line, and taking its
// lock when there is something), then age the queue's signal.
func (rq *RQ) updateCfsRqLoadAvg(now uint64, cfs *CfsRq) bool {
	site := rq.site(SymUpdateLoadAvg)
	cfs.removed.Pending(rq.log, rq.now, site) // if (cfs_rq->removed.nr): a read of the line
	var r pelt.Removed
	if cfs.removedModel.Nr != 0 {
		r = cfs.removedModel
		cfs.removedModel = pelt.Removed{}
		cfs.removed.Take(rq.log, rq.now, site)
	}
	if cfs.isRoot() {
		// rq->cfs.avg is read remotely (cpu_load(), load balancing).
		rq.log.Record(rq.now, rq.avgLine, hwmodel.Write, site)
	}
	return pelt.UpdateCfsRqLoadAvg(now, &cfs.avg, r, &cfs.prop,
		eevdf.ScaleLoadDown(cfs.load.Weight), uint64(cfs.hNrRunning-cfs.hNrDelayed), cfs.curr != nil)
}

// propagateEntityLoadAvg is fair.c: propagate_entity_load_avg() for a
// group entity.
func (rq *RQ) propagateEntityLoadAvg(se *SchedEntity) bool {
	g := se.myQ
	return pelt.PropagateEntity(&se.cfsRq.avg, &se.cfsRq.prop, &se.Avg, se.weightDown(),
		&g.avg, &g.prop, eevdf.ScaleLoadDown(g.load.Weight))
}

// attachEntityLoadAvg is fair.c: attach_entity_load_avg().
func (rq *RQ) attachEntityLoadAvg(cfs *CfsRq, se *SchedEntity) {
	pelt.Attach(&cfs.avg, &se.Avg, se.weightDown())
	cfs.prop.Add(int64(se.Avg.LoadSum))
}

// detachEntityLoadAvg is fair.c: detach_entity_load_avg().
func (rq *RQ) detachEntityLoadAvg(cfs *CfsRq, se *SchedEntity) {
	pelt.Detach(&cfs.avg, &se.Avg, se.weightDown())
	cfs.prop.Add(-int64(se.Avg.LoadSum))
}

// seUpdateRunnable is fair.c: se_update_runnable().
func (rq *RQ) seUpdateRunnable(se *SchedEntity) {
	if !se.isTask() {
		se.runnableWeight = uint64(se.myQ.hNrRunning - se.myQ.hNrDelayed) // 6.12.y: less h_nr_delayed
	}
}

// updateTgLoadAvg is fair.c: update_tg_load_avg(): publish this cfs_rq's
// load change to the task group's global tg->load_avg, if it moved by more
// than 1/64 of what was published, and (TG_LOAD_RATELIMIT, v6.7) at most
// once per ms (NSEC_PER_MSEC; the tg_load_avg_ratelimit_ns tunable).
func (rq *RQ) updateTgLoadAvg(cfs *CfsRq) {
	if cfs.isRoot() {
		return
	}
	now := rq.clock + bootNS // sched_clock_cpu()
	if rq.feat.Has(TG_LOAD_RATELIMIT) && now-cfs.lastUpdateTgLoadAvg < rq.tun.TgLoadAvgRatelimit {
		rq.Stats.TgRatelimitSkips++
		rq.Stats.tgSites[rq.tgSite].ratelimitSkips++
		return
	}
	delta := int64(cfs.avg.LoadAvg) - int64(cfs.tgLoadAvgContrib)
	if abs64(delta) > int64(cfs.tgLoadAvgContrib/64) {
		rq.tgLoadAvgAdd(cfs.tg, delta)
		cfs.tgLoadAvgContrib = cfs.avg.LoadAvg
		cfs.lastUpdateTgLoadAvg = now
	} else {
		rq.Stats.TgThresholdSkips++
		rq.Stats.tgSites[rq.tgSite].thresholdSkips++
	}
}

// tgLoadAvgAdd is the atomic_long_add() on tg->load_avg: a real atomic on
// the shared line, logged for the weave, and recorded for this CPU's
// deterministic view.
func (rq *RQ) tgLoadAvgAdd(tg *TaskGroup, delta int64) {
	tg.loadAvg.Add(rq.log, rq.now, rq.site(SymUpdateLoadAvg), delta)
	rq.accessCost(SymUpdateLoadAvg, hwmodel.RMW)
	rq.tgDelta[tg.id] += delta
	rq.Stats.TgLoadAvgWrites++
	rq.Stats.tgSites[rq.tgSite].writes++
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// utilEstEnqueue is fair.c: util_est_enqueue() (v5.15, v6.6): as p
// becomes runnable, its estimate joins the root cfs_rq's sum, which
// cpu_util() reads. (Only the root queue keeps one: the kernel passes
// &rq->cfs whatever p's group.)
func (rq *RQ) utilEstEnqueue(p *Task) {
	if !rq.feat.Has(UTIL_EST) {
		return
	}
	pelt.UtilEstEnqueue(&rq.cfs.avg, &p.se.Avg)
}

// utilEstDequeue is fair.c: util_est_dequeue() (v5.15, v6.6): p's
// estimate leaves the root sum, before its dequeue updates PELT.
func (rq *RQ) utilEstDequeue(p *Task) {
	if !rq.feat.Has(UTIL_EST) {
		return
	}
	pelt.UtilEstDequeue(&rq.cfs.avg, &p.se.Avg)
}

// utilEstUpdate is fair.c: util_est_update() (v5.15, v6.6), called at the
// end of dequeue_task_fair(): a task that goes to sleep has completed an
// activation and its util_avg, just updated by the dequeue, is a new
// sample; a task dequeued to migrate (detach_task(), a move between
// queues) is not. The capacity is capacity_orig_of(): 1024 on the
// symmetric targets.
func (rq *RQ) utilEstUpdate(p *Task, taskSleep bool) {
	if !rq.feat.Has(UTIL_EST) || !taskSleep {
		return
	}
	pelt.UtilEstUpdate(&p.se.Avg, schedCapacityScale, rq.feat.Has(UTIL_EST_FASTUP))
}

// taskUtilEst is fair.c: task_util_est() (v5.15, v6.6): the larger of p's
// util_avg and its estimate (the estimate is 0 with UTIL_EST off, as no
// sample is ever taken).
func taskUtilEst(p *Task) uint64 {
	return max(p.se.Avg.UtilAvg, pelt.TaskUtilEst(&p.se.Avg))
}

// updateBlockedAverages is fair.c: update_blocked_averages() (v5.15,
// v6.6): take the rq lock and update_rq_clock() first, so that the blocked
// load and util of an idle CPU, whose clock stands at its last event, decay
// to now; then the fair part (updateBlockedFair).
func (rq *RQ) updateBlockedAverages() {
	defer rq.leave(rq.enter(SymUpdateBlockedAverages))
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
	defer func(prev tgSite) { rq.tgSite = prev }(rq.atTgSite(tgSiteBlocked))
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
