package emu

import "github.com/rqemu/rqemu/hwmodel"

// The wakeup-placement oracle: select_task_rq_fair()'s decision on a
// hand-built view of every CPU, from the model (select.go) and from a
// plain transcription of each profile's fair.c written here, from the
// kernel source and not from the model: v5.15 and v5.19 (SIS_PROP, no
// SIS_UTIL), v6.5 and v6.6 (SIS_UTIL; SIS_PROP off since v6.0), v6.7 (SIS_PROP
// removed; cluster scheduling inert: no CLS domain on these machines).

// sisView is what the waker sees at one wakeup.
type sisView struct {
	this, prev int  // smp_processor_id(), task_cpu(p)
	sync       bool // WF_SYNC (the waker is not exiting)
	// idle is available_idle_cpu() of each CPU as published (curr is
	// idle, nr_running == 0, !ttwu_pending); idle[this] means a wakeup
	// from interrupt context on an idle CPU.
	idle []bool
	// woke are CPUs the waker itself queued a wakeup on before this one:
	// its own llist_add() set their rq->ttwu_pending.
	woke []int
	// nrRunning is the waker's rq->nr_running (0 when this is idle).
	nrRunning int
	load      []uint64 // cpu_load(): rq->cfs.avg.load_avg
	// currLoad is current->se.avg.load_avg (a root-level task), taskLoad
	// task_h_load(p).
	currLoad, taskLoad uint64
	// currFlips, pFlips are wakee_flips before record_wakee();
	// lastWakeeIsP is current->last_wakee == p.
	currFlips, pFlips uint
	lastWakeeIsP      bool
	recent            int          // p->recent_used_cpu
	hasIdleCores      map[int]bool // sd_llc_shared->has_idle_cores by LLC id (first CPU)
	// cleared is set by the transcription: select_idle_cpu() found no
	// idle core and wrote has_idle_cores = 0 (set_idle_cores(target, 0)).
	cleared    bool
	nrIdleScan map[int]int // sd_llc_shared->nr_idle_scan by LLC id
	// wakeAvgIdle, avgScanCost are v5.15's and v5.19's SIS_PROP inputs
	// (this_rq->wake_avg_idle, this_sd->avg_scan_cost), ns.
	wakeAvgIdle, avgScanCost uint64
	// wakeAge is jiffies - this_rq->wake_stamp.
	wakeAge int
}

// kernelTopo is the machine as the kernel's topology code sees it.
type kernelTopo struct {
	m *hwmodel.Machine
}

func (k kernelTopo) llcID(c int) int     { return k.m.LLCSpan(c)[0] }
func (k kernelTopo) share(a, b int) bool { return k.m.CPUs[a].LLC == k.m.CPUs[b].LLC }
func (k kernelTopo) llcSize(c int) int   { return len(k.m.LLCSpan(c)) }
func (k kernelTopo) smt() bool           { return len(k.m.SMTSiblings(0)) > 1 }

// wakeAffinePct is the imbalance_pct (topology.c: sd_init(): 110 for SMT,
// else 117) of the domain for_each_domain(cpu, tmp) in
// select_task_rq_fair() stops at: the lowest one of cpu spanning prev
// (every level has SD_WAKE_AFFINE: the NUMA distance 21 is below
// node_reclaim_distance 30).
func (k kernelTopo) wakeAffinePct(cpu, prev int) int {
	if k.m.CPUs[cpu].Core == k.m.CPUs[prev].Core {
		return 110
	}
	return 117
}

// kernelSelect is fair.c: select_task_rq_fair() for WF_TTWU, transcribed
// for profile name.
func kernelSelect(k kernelTopo, prof string, v *sisView) int {
	cpu, prev := v.this, v.prev
	newCPU := prev
	// record_wakee(p): current->wakee_flips++ when last_wakee changes.
	master := v.currFlips
	if !v.lastWakeeIsP {
		master++
	}
	// wake_wide(p)
	slave := v.pFlips
	factor := uint(k.llcSize(cpu))
	if master < slave {
		master, slave = slave, master
	}
	wide := !(slave < factor || master < slave*factor)
	if !wide && cpu != prev {
		newCPU = kernelWakeAffine(k, v, k.wakeAffinePct(cpu, prev))
	}
	return kernelSIS(k, prof, v, newCPU)
}

func (v *sisView) availableIdle(c int) bool {
	if c != v.this {
		for _, w := range v.woke {
			if w == c {
				return false // rq->ttwu_pending
			}
		}
	}
	return v.idle[c]
}

// kernelWakeAffine is wake_affine() with wake_affine_idle() and
// wake_affine_weight() (WA_IDLE, WA_WEIGHT, WA_BIAS on in every profile;
// capacity_of() 1024 on both).
func kernelWakeAffine(k kernelTopo, v *sisView, pct int) int {
	this, prev := v.this, v.prev
	target := -1
	// wake_affine_idle()
	if v.availableIdle(this) && k.share(this, prev) {
		if v.availableIdle(prev) {
			target = prev
		} else {
			target = this
		}
	} else if v.sync && v.nrRunning == 1 {
		target = this
	} else if v.availableIdle(prev) {
		target = prev
	}
	if target < 0 {
		// wake_affine_weight()
		thisEff := int64(v.load[this])
		decided := false
		if v.sync {
			// task_h_load(current) of a root-level task: load_avg *
			// h_load / (cfs_rq_load_avg + 1), h_load of the root its
			// load_avg.
			cur := int64(v.currLoad * v.load[this] / (v.load[this] + 1))
			if v.idle[this] {
				cur = 0 // the idle task
			}
			if cur > thisEff {
				target, decided = this, true
			}
			thisEff -= cur
		}
		if !decided {
			tl := int64(v.taskLoad)
			thisEff += tl
			thisEff *= 100
			thisEff *= 1024
			prevEff := int64(v.load[prev]) - tl
			prevEff *= int64(100 + (pct-100)/2)
			prevEff *= 1024
			if v.sync {
				prevEff++
			}
			if thisEff < prevEff {
				target = this
			}
		}
	}
	if target != this {
		return prev
	}
	return target
}

// kernelSIS is select_idle_sibling(p, prev, target).
func kernelSIS(k kernelTopo, prof string, v *sisView, target int) int {
	prev := v.prev
	if v.availableIdle(target) {
		return target
	}
	if prev != target && k.share(prev, target) && v.availableIdle(prev) {
		return prev
	}
	// (The per-CPU kthread case needs a kthread waker: none here.)
	r := v.recent
	if r >= 0 && r != prev && r != target && k.share(r, target) && v.availableIdle(r) {
		return r
	}
	hasIdleCore := false
	if k.smt() {
		hasIdleCore = v.hasIdleCores[k.llcID(target)]
		if !hasIdleCore && k.share(prev, target) {
			// select_idle_smt(p, prev): v5.15 does not skip prev
			// itself, v6.6 does; prev is not idle here either way.
			for _, c := range k.m.SMTSiblings(prev) {
				if c != prev && v.availableIdle(c) {
					return c
				}
			}
		}
	}
	if i := kernelSelectIdleCPU(k, prof, v, hasIdleCore, target); i >= 0 {
		return i
	}
	return target
}

// kernelSelectIdleCPU is select_idle_cpu() with select_idle_core().
func kernelSelectIdleCPU(k kernelTopo, prof string, v *sisView, hasIdleCore bool, target int) int {
	nr := int(^uint32(0) >> 1) // INT_MAX
	n := len(k.m.CPUs)
	sisProp := prof == "v5.15-cfs" || prof == "v5.19-cfs"
	if sisProp && !hasIdleCore {
		// SIS_PROP (v5.15 and v5.19 features.h: on). If we're busy,
		// age away the remaining predicted idle time.
		avgIdle := v.wakeAvgIdle
		for age := v.wakeAge; age > 0 && avgIdle != 0; age-- {
			avgIdle >>= 1
		}
		avgCost := v.avgScanCost + 1
		spanAvg := uint64(k.llcSize(target)) * avgIdle
		if spanAvg > 4*avgCost {
			nr = int(spanAvg / avgCost)
		} else {
			nr = 4
		}
	}
	if !sisProp {
		// SIS_UTIL
		nr = v.nrIdleScan[k.llcID(target)] + 1
		if nr == 1 {
			return -1
		}
	}
	idleCPU := -1
	skip := map[int]bool{}
	// for_each_cpu_wrap(cpu, cpus, target + 1), cpus = sd_llc span.
	for j := 1; j <= n; j++ {
		c := (target + j) % n
		if !k.share(c, target) || skip[c] {
			continue
		}
		if hasIdleCore {
			idle := true
			for _, s := range k.m.SMTSiblings(c) {
				if !v.availableIdle(s) {
					idle = false
					if idleCPU == -1 {
						continue
					}
					break
				}
				if idleCPU == -1 {
					idleCPU = s
				}
			}
			if idle {
				return c
			}
			for _, s := range k.m.SMTSiblings(c) {
				skip[s] = true
			}
			continue
		}
		nr--
		if nr == 0 {
			return -1
		}
		if v.availableIdle(c) {
			idleCPU = c
			break
		}
	}
	if hasIdleCore {
		v.cleared = true
	}
	return idleCPU
}
