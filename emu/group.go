package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
	"github.com/rqemu/rqemu/hwmodel"
)

// TaskGroup is struct task_group: a cgroup with the cpu controller. It has
// a cfs_rq and a group entity on every CPU; the root group's per-CPU queue
// is each rq's cfs and it has no entities.
type TaskGroup struct {
	Name   string
	id     int
	parent *TaskGroup
	depth  int // root 0, a docker-like group 1

	// shares is tg->shares (scaled): cgroup v2 cpu.weight 100 = 1024.
	shares uint64

	// loadAvg is tg->load_avg: one atomic on its own line, written by
	// every CPU with a cfs_rq of this group and read on every
	// enqueue/dequeue/tick at this level (contention.Counter). published
	// is its value at the last barrier, as the deterministic reads see it:
	// barrier only (each CPU's own writes since are its RQ.tgDelta).
	loadAvg   *contention.Counter
	published int64

	// cfsRq[cpu] and se[cpu] belong to CPU cpu (fixed slices).
	cfsRq []*CfsRq
	se    []*SchedEntity
}

// ID is the group's index.
func (tg *TaskGroup) ID() int { return tg.id }

// Parent is the parent group, nil for the root.
func (tg *TaskGroup) Parent() *TaskGroup { return tg.parent }

// LoadAvg is tg->load_avg as published at the last barrier.
func (tg *TaskGroup) LoadAvg() int64 { return tg.published }

// Weight is the group's share on CPU cpu: its group entity's weight
// (unscaled), what calc_group_shares() last gave it.
func (tg *TaskGroup) Weight(cpu int) uint64 {
	if tg.parent == nil {
		return 0
	}
	return eevdf.ScaleLoadDown(tg.se[cpu].Load.Weight)
}

// NewGroup creates a task group under parent (nil: the root) with the
// given cgroup v2 cpu.weight (100 is the default, 1024 shares).
func (s *Sim) NewGroup(name string, parent *TaskGroup, cpuWeight int) (*TaskGroup, error) {
	if parent == nil {
		parent = s.root
	}
	if cpuWeight < 1 || cpuWeight > 10000 {
		return nil, fmt.Errorf("group %q: cpu.weight %d out of range [1, 10000]", name, cpuWeight)
	}
	// cgroup v2: shares = weight * 1024 / 100 (sched_weight_from_cgroup()).
	shares := eevdf.ScaleLoad(uint64(cpuWeight) * 1024 / 100)
	tg := &TaskGroup{
		Name: name, id: len(s.groups), parent: parent, depth: parent.depth + 1, shares: shares,
		loadAvg: contention.NewCounter(s.space, "tg("+name+")->load_avg", 0),
		cfsRq:   make([]*CfsRq, len(s.cpus)),
		se:      make([]*SchedEntity, len(s.cpus)),
	}
	s.groups = append(s.groups, tg)
	for cpu, rq := range s.cpus {
		rq.tgDelta = append(rq.tgDelta, 0)
		c := newCfsRq(rq, tg, s.tun)
		se := &SchedEntity{myQ: c, cfsRq: parent.cfsRq[cpu], parent: parent.se[cpu]}
		se.Owner = se
		if se.parent != nil {
			se.depth = se.parent.depth + 1
		}
		// init_tg_cfs_entry(): update_load_set(&se->load, NICE_0_LOAD).
		se.Load.Set(eevdf.Nice0Load)
		pelt.InitEntityRunnableAverage(&se.Avg, false, 0)
		// online_fair_sched_group() -> attach_entity_cfs_rq() (v6.6):
		// the group entity is attached to its parent's queue when the
		// cgroup comes online, with empty sums, long before a task joins
		// the group. So its first enqueue is not a DO_ATTACH: the util
		// and load a first task brings are carried up once, by
		// propagate_entity_load_avg(), not added a second time by
		// attach_entity_load_avg().
		pc := parent.cfsRq[cpu]
		pelt.UpdateCfsRqLoadAvg(rq.peltNow(), &pc.avg, pelt.Removed{}, &pc.prop,
			eevdf.ScaleLoadDown(pc.load.Weight), uint64(pc.hNrRunning-pc.hNrDelayed), pc.curr != nil)
		pelt.Attach(&pc.avg, &se.Avg, se.weightDown())
		tg.cfsRq[cpu] = c
		tg.se[cpu] = se
	}
	return tg, nil
}

// calcGroupShares is fair.c: calc_group_shares(): this CPU's share of the
// group weight, proportional to its queue's load over the group's total
// (tg->load_avg, with this queue's stale contribution replaced by its
// current load).
func (rq *RQ) calcGroupShares(cfs *CfsRq) uint64 {
	tg := cfs.tg
	tgShares := int64(tg.shares)
	load := max(int64(eevdf.ScaleLoadDown(cfs.load.Weight)), int64(cfs.avg.LoadAvg))
	tgWeight := rq.tgLoadAvgRead(tg)
	rq.Stats.tgSites[rq.tgSite].reads++
	// Ensure tg_weight >= load.
	tgWeight -= int64(cfs.tgLoadAvgContrib)
	tgWeight += load
	shares := tgShares * load
	if tgWeight != 0 {
		shares /= tgWeight
	}
	// MIN_SHARES has to be unscaled here to support per-CPU
	// partitioning of a group with small tg->shares.
	return uint64(min(max(shares, minShares), tgShares))
}

// updateCfsGroup is fair.c: update_cfs_group() (v6.6).
func (rq *RQ) updateCfsGroup(se *SchedEntity) {
	defer rq.leave(rq.enter(SymUpdateCfsGroup))
	g := se.myQ
	if g == nil {
		return
	}
	rq.cost(hwmodel.OpCfsGroup)
	shares := rq.calcGroupShares(g)
	if se.Load.Weight != shares {
		rq.reweightEntity(se.cfsRq, se, shares)
	}
}

// reweightEntity is fair.c: reweight_entity() (v6.6.y with the
// lag-preserving reweight_eevdf(); the CFS profiles keep vruntime).
func (rq *RQ) reweightEntity(cfs *CfsRq, se *SchedEntity, weight uint64) {
	rq.cost(hwmodel.OpReweight)
	curr := cfs.curr == se
	if se.OnRQ {
		// commit outstanding execution time
		if curr {
			rq.updateCurr(cfs)
		}
		cfs.load.Weight -= se.Load.Weight
	}
	oldDown := se.weightDown()
	if rq.eevdf() {
		cfs.q.Reweight(&se.Entity, weight)
	} else {
		inTree := se.OnRQ && !curr
		if inTree {
			cfs.q.Dequeue(&se.Entity)
		}
		se.Load.Set(weight)
		if inTree {
			cfs.q.Enqueue(&se.Entity)
		}
	}
	pelt.Reweight(&cfs.avg, &se.Avg, oldDown, se.weightDown())
	if se.OnRQ {
		cfs.load.Weight += se.Load.Weight
	}
	cfs.load.InvWeight = 0
}

// Path is the group's cgroup path ("/" for the root, "/system.slice/docker").
func (tg *TaskGroup) Path() string {
	if tg.parent == nil {
		return "/"
	}
	if tg.parent.parent == nil {
		return "/" + tg.Name
	}
	return tg.parent.Path() + "/" + tg.Name
}
