package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
)

// The CPU a new task starts on: core.c wake_up_new_task() asks
// select_task_rq(p, task_cpu(p), WF_FORK), and for a fair task that is
// fair.c select_task_rq_fair()'s slow path, find_idlest_cpu()
// (sched_balance_find_dst_cpu() since v6.10), from the parent's CPU over
// the highest domain with SD_BALANCE_FORK (v6.6; v5.15 is the same on the
// rules below except the NUMA allowance, which findIdlestGroup notes):
//
//   - find_idlest_group(): per group, update_sg_wakeup_stats() (load,
//     util, runnable, nr_running, idle CPUs; the new task is on no
//     runqueue, so "without p" changes nothing) and group_classify();
//     update_pick_idlest() keeps the least busy type, then the lowest
//     avg_load (overloaded, fully busy) or the most idle CPUs and then
//     the lowest util (has spare). The local group wins ties, and a NUMA
//     domain keeps the task local while the local node would run at most
//     sd->imb_numa_nr tasks and the two differ by at most
//     NUMA_IMBALANCE_MIN idle CPUs (adjust_numa_imbalance()); on spr-2s
//     imb_numa_nr is 2 (two LLCs in the NUMA span), so from the second
//     fork on (the parent and one child run on the local node) a fork
//     goes to the node with more idle CPUs: the tools' tasks alternate
//     between the sockets.
//   - find_idlest_group_cpu(): the idle CPU with the shallowest idle
//     state, the most recently idled among equals, else the least loaded.
//   - then down the chosen CPU's domains until no group is idler.
//
// What the parent sees (Sim.forkView): the tasks created so far, each as
// runnable on its CPU with a new task's PELT signals
// (init_entity_runnable_average(), post_init_entity_util_avg()), and the
// parent itself, running on its CPU. Simplified: the view is the setup's (a workload creates its tasks before
// the run; the kernel's parent forks them over a few µs while the first
// ones already run and block); the parent is not a task of the run, and
// its reads of the remote runqueues are not priced; every idle CPU is in
// the same idle state with the same idle stamp, so the first idle CPU of
// a group in CPU order wins (the kernel's tie rule gives the same).

// forkCPU is what a parent forking at setup sees of one CPU's runqueue:
// the tasks created on it so far. Written only at setup (NewTask).
type forkCPU struct {
	nr   int
	load uint64 // cfs.avg.load_avg
	util uint64 // cfs.avg.util_avg
	run  uint64 // cfs.avg.runnable_avg
}

// noteFork adds a task created on cpu to the setup's view: the signals
// forkTask gives it (fair.c init_entity_runnable_average() and
// post_init_entity_util_avg(), against what the view holds there).
func (s *Sim) noteFork(t *Task, cpu int) {
	v := &s.forkView[cpu]
	var sa pelt.Avg
	pelt.InitEntityRunnableAverage(&sa, true, t.se.weightDown())
	pelt.PostInitEntityUtilAvg(&sa, &pelt.Avg{LoadAvg: v.load, UtilAvg: v.util}, t.se.weightDown(), schedCapacityScale)
	v.nr++
	v.load += sa.LoadAvg
	v.util += sa.UtilAvg
	v.run += sa.RunnableAvg
}

// ForkCPU is the CPU on which select_task_rq_fair(WF_FORK) starts a task
// that a parent running on CPU parent forks now, at setup, given the
// tasks created so far (see the comment at the top of fork.go), with
// affinity cpus (nil: every CPU). A workload whose tool forks its tasks
// from one parent places them with it, in the tool's creation order.
func (s *Sim) ForkCPU(parent int, cpus []int) int {
	if s.now > 0 {
		panic(fmt.Sprintf("emu: ForkCPU(parent %d) at %d ns: fork balancing is modeled at setup only, before the run", parent, s.now))
	}
	allowed := func(c int) bool { return true }
	if cpus != nil {
		set := make([]bool, len(s.cpus))
		for _, c := range cpus {
			set[c] = true
		}
		allowed = func(c int) bool { return set[c] }
	}
	// select_task_rq_fair(): the highest domain with the flag, walking
	// up from the parent's CPU while the flag is set (want_affine is
	// false for a fork).
	var sd *Domain
	for _, d := range s.domains[parent] {
		if d.Flags&SD_BALANCE_FORK == 0 {
			break
		}
		sd = d
	}
	cpu, newCPU := parent, parent
	// find_idlest_cpu().
	for sd != nil {
		g := s.findIdlestGroup(sd, cpu, parent, allowed)
		if g == nil {
			sd = sd.child
			continue
		}
		newCPU = s.findIdlestGroupCPU(g, cpu, parent, allowed)
		if newCPU == cpu {
			// Now try balancing at a lower domain level of cpu.
			sd = sd.child
			continue
		}
		// Now try balancing at a lower domain level of newCPU.
		cpu = newCPU
		weight := sd.Weight()
		sd = nil
		for _, d := range s.domains[cpu] {
			if weight <= d.Weight() {
				break
			}
			if d.Flags&SD_BALANCE_FORK != 0 {
				sd = d
			}
		}
	}
	if !allowed(newCPU) {
		// core.c select_task_rq(): select_fallback_rq(), the first
		// allowed CPU (simplified: of the machine, not of the node).
		for c := range s.cpus {
			if allowed(c) {
				return c
			}
		}
	}
	return newCPU
}

// forkView of CPU c as the parent on CPU parent sees it: itself running
// there.
func (s *Sim) forkSeen(c, parent int) forkCPU {
	v := s.forkView[c]
	if c == parent {
		v.nr++
		v.load += nice0LoadDown
		v.util += schedCapacityScale / 2
		v.run += schedCapacityScale / 2
	}
	return v
}

// nice0LoadDown is scale_load_down(NICE_0_LOAD): a nice-0 entity's
// load_avg when always runnable.
const nice0LoadDown = eevdf.Nice0Load >> eevdf.SchedFixedpointShift

// wakeupStats is fair.c: update_sg_wakeup_stats() of group g.
func (s *Sim) wakeupStats(sd *Domain, g []int, parent int) sgStats {
	sgs := sgStats{cpus: g, groupWeight: len(g), groupCapacity: schedCapacityScale * uint64(len(g))}
	for _, c := range g {
		v := s.forkSeen(c, parent)
		sgs.groupLoad += v.load
		sgs.groupUtil += min(v.util, schedCapacityScale)
		sgs.groupRunnable += v.run
		sgs.sumHNrRunning += v.nr
		sgs.sumNrRunning += v.nr
		if v.nr == 0 {
			sgs.idleCPUs++
		}
	}
	sgs.groupType = groupClassify(uint64(sd.ImbalancePct), &sgs)
	if sgs.groupType == groupFullyBusy || sgs.groupType == groupOverloaded {
		sgs.avgLoad = sgs.groupLoad * schedCapacityScale / sgs.groupCapacity
	}
	return sgs
}

// pickIdlest is fair.c: update_pick_idlest(): whether sgs is idler than
// the idlest so far.
func pickIdlest(idlest, sgs *sgStats) bool {
	if sgs.groupType != idlest.groupType {
		return sgs.groupType < idlest.groupType
	}
	switch sgs.groupType {
	case groupOverloaded, groupFullyBusy:
		// Select the group with the lowest avg_load.
		return idlest.avgLoad > sgs.avgLoad
	case groupHasSpare:
		// Select the group with the most idle CPUs, then the lowest
		// group_util.
		if idlest.idleCPUs != sgs.idleCPUs {
			return sgs.idleCPUs > idlest.idleCPUs
		}
		return idlest.groupUtil > sgs.groupUtil
	}
	return false // not used in the slow wakeup path
}

// findIdlestGroup is fair.c: find_idlest_group() for a task forked by a
// parent on CPU parent, balancing at sd of CPU this: nil to stay in the
// local group.
func (s *Sim) findIdlestGroup(sd *Domain, this, parent int, allowed func(int) bool) []int {
	// sd->groups starts at this CPU's group and goes round the span.
	start := 0
	for i, g := range sd.Groups {
		if contains(g, this) {
			start = i
			break
		}
	}
	var idlest, local []int
	var localSgs sgStats
	idlestSgs := sgStats{avgLoad: ^uint64(0), groupType: groupOverloaded}
	for k := range sd.Groups {
		g := sd.Groups[(start+k)%len(sd.Groups)]
		ok := false
		for _, c := range g {
			if allowed(c) {
				ok = true
				break
			}
		}
		if !ok {
			continue // no CPU of the group is allowed
		}
		sgs := s.wakeupStats(sd, g, parent)
		if k == 0 && contains(g, this) {
			local, localSgs = g, sgs
			continue
		}
		if pickIdlest(&idlestSgs, &sgs) {
			idlest, idlestSgs = g, sgs
		}
	}
	switch {
	case idlest == nil:
		return nil // there is no idlest group to push tasks to
	case local == nil:
		return idlest // the local group was skipped for affinity
	case localSgs.groupType < idlestSgs.groupType:
		return nil // the local group is idler
	case localSgs.groupType > idlestSgs.groupType:
		return idlest
	}
	switch localSgs.groupType {
	case groupOverloaded, groupFullyBusy:
		// Calculate the allowed imbalance based on load.
		imbalance := uint64(nice0LoadDown * (sd.ImbalancePct - 100) / 100)
		// Across NUMA domains, add the imbalance to the remote node's
		// load and consider staying local.
		if sd.Flags&SD_NUMA != 0 && idlestSgs.avgLoad+imbalance >= localSgs.avgLoad {
			return nil
		}
		if idlestSgs.avgLoad >= localSgs.avgLoad+imbalance {
			return nil
		}
		if 100*localSgs.avgLoad <= uint64(sd.ImbalancePct)*idlestSgs.avgLoad {
			return nil
		}
	case groupHasSpare:
		if sd.Flags&SD_NUMA != 0 {
			// v6.6: keep the task close to its parent while the
			// local node would run at most imb_numa_nr tasks and the
			// nodes differ by at most NUMA_IMBALANCE_MIN idle CPUs
			// (adjust_numa_imbalance()). imb_numa_nr is capped by the
			// allowed CPUs of the local group (p->nr_cpus_allowed is
			// never NR_CPUS on a real machine). No NUMA_BALANCING
			// preference: a new task has no numa_preferred_nid.
			// Simplified: imb_numa_nr came with v5.18 (earlier
			// kernels, v5.15 among them, measured the allowance
			// against the domain's weight); the model applies v6.6's
			// rule under every profile, as calculate_imbalance()
			// does.
			imbNumaNr := sd.imbNumaNr
			n := 0
			for _, c := range local {
				if allowed(c) {
					n++
				}
			}
			imbNumaNr = min(imbNumaNr, n)
			imbalance := localSgs.idleCPUs - idlestSgs.idleCPUs
			if imbalance < 0 {
				imbalance = -imbalance
			}
			if localSgs.sumNrRunning+1 <= imbNumaNr && imbalance <= numaImbalanceMin {
				return nil
			}
		}
		// Select the group with the most idle CPUs.
		if localSgs.idleCPUs >= idlestSgs.idleCPUs {
			return nil
		}
	}
	return idlest
}

// findIdlestGroupCPU is fair.c: find_idlest_group_cpu(): an idle CPU
// (every one is in the same idle state here, with the same stamp, so the
// first in CPU order), else the least loaded, else this.
func (s *Sim) findIdlestGroupCPU(g []int, this, parent int, allowed func(int) bool) int {
	if len(g) == 1 {
		return g[0]
	}
	least, minLoad := this, ^uint64(0)
	for _, c := range g {
		if !allowed(c) {
			continue
		}
		v := s.forkSeen(c, parent)
		if v.nr == 0 {
			return c
		}
		if v.load < minLoad {
			least, minLoad = c, v.load
		}
	}
	return least
}
