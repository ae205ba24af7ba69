package emu

import (
	"fmt"
	"slices"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
)

// Sched domain flags (include/linux/sched/sd_flags.h).
const (
	SD_BALANCE_NEWIDLE   = 1 << iota
	SD_BALANCE_EXEC      //
	SD_BALANCE_FORK      //
	SD_BALANCE_WAKE      //
	SD_WAKE_AFFINE       //
	SD_ASYM_CPUCAPACITY  //
	SD_SHARE_CPUCAPACITY // SMT
	SD_CLUSTER           //
	SD_SHARE_LLC         // SD_SHARE_PKG_RESOURCES before v6.10
	SD_SERIALIZE         //
	SD_ASYM_PACKING      //
	SD_PREFER_SIBLING    //
	SD_OVERLAP           //
	SD_NUMA              //
)

// reclaimDistance is RECLAIM_DISTANCE: NUMA levels farther than this lose
// SD_WAKE_AFFINE and fork/exec balancing (sd_init()).
const reclaimDistance = 30

// Domain is a struct sched_domain of one CPU: its span, its groups (the
// child domain's spans), flags and balancing parameters, and its
// per-domain schedstat counters. Its parameters are fixed once built; its
// balancing state is owned by its CPU, and written at the barrier too, as
// marked.
type Domain struct {
	// Name (SMT, CLS, MC, PKG, NUMA), level, span, groups, flags and
	// parameters: fixed once built (buildDomains).
	Name   string
	Level  int
	Span   []int
	spanOf []bool // by CPU
	Groups [][]int
	Flags  int

	// The balancing parameters: fixed.
	ImbalancePct   int
	CacheNiceTries int
	BusyFactor     int
	MinInterval    int64 // ms
	MaxInterval    int64 // ms
	// balanceInterval (ms), lastBalance and nrBalanceFailed are the
	// periodic balancing state. Owned by its CPU; barrier: a pull
	// decided in an epoch settles them there (doPull), and NOHZ idle
	// balancing runs an idle CPU's balance there.
	balanceInterval int64
	lastBalance     int64
	nrBalanceFailed int
	// imbNumaNr is sd->imb_numa_nr: the NUMA imbalance allowed before
	// tasks pile up in one LLC (build_sched_domains()). fixed.
	imbNumaNr int
	// avgScanCost is avg_scan_cost (ns): SIS_PROP's EWMA of this CPU's
	// select_idle_cpu() scans, on its sd_llc (select.go). Owned by its
	// CPU.
	avgScanCost int64
	// maxNewidleLBCost is max_newidle_lb_cost (ns), decayed ~1%/s, and
	// lastDecayMaxLB when it last decayed. Owned by its CPU; barrier:
	// the stall a newidle balance paid is added there (barrier()).
	maxNewidleLBCost int64
	lastDecayMaxLB   int64

	// parent, child and spanFn (the level's span of any CPU, for
	// groups): fixed.
	parent, child *Domain
	spanFn        func(cpu int) []int

	// Stats: owned by its CPU; barrier: a pull's outcome (doPull) and
	// active balancing count there.
	Stats DomainStats
}

// Contains reports whether cpu is in the domain's span.
func (d *Domain) Contains(cpu int) bool { return d.spanOf[cpu] }

// Weight is the number of CPUs spanned.
func (d *Domain) Weight() int { return len(d.Span) }

// idle types of load balancing, in the v16 schedstat column order.
const (
	cpuNotIdle   = iota // __CPU_NOT_IDLE
	cpuIdle             // CPU_IDLE
	cpuNewlyIdle        // CPU_NEWLY_IDLE
	numIdleTypes
)

// DomainStats are a domain's /proc/schedstat counters.
type DomainStats struct {
	LBCount         [numIdleTypes]int64
	LBBalanced      [numIdleTypes]int64
	LBFailed        [numIdleTypes]int64
	LBImbalance     [numIdleTypes]int64
	LBGained        [numIdleTypes]int64
	LBHotGained     [numIdleTypes]int64
	LBNoBusyQ       [numIdleTypes]int64
	LBNoBusyG       [numIdleTypes]int64
	ALBCount        int64
	ALBFailed       int64
	ALBPushed       int64
	TTWUWakeRemote  int64
	TTWUMoveAffine  int64
	TTWUMoveBalance int64
}

// llcInfo is what the scheduler caches per CPU about its LLC domain
// (update_top_cache_domain()): sd_llc, its size and id, and the shared
// line.
type llcInfo struct {
	sd     *Domain
	size   int
	id     int // sd_llc_id: the first CPU of the span
	shared *contention.LLCShared
	l2ID   int // the L2 (cluster or core) id, for TTWU_QUEUE_L2
}

// numaInPackage is smpboot.c's x86_has_numa_in_package: some package
// holds CPUs of two nodes (set_cpu_sibling_map(): match_pkg() and not
// topology_same_node()).
func numaInPackage(m *hwmodel.Machine) bool {
	for _, pkg := range m.Packages {
		for _, c := range pkg {
			if m.CPUs[c].Node != m.CPUs[pkg[0]].Node {
				return true
			}
		}
	}
	return false
}

// buildDomains builds every CPU's sched domains from the machine as the
// kernel does (sched_init_domains(), default_topology / x86_topology):
// SMT (SMT siblings), CLS (CPUs behind one L2), MC (the LLC), PKG (the
// package, unless it spans nodes), then one NUMA level per distinct SLIT distance. A level whose
// span equals its child's degenerates away (sd_parent_degenerate()); when
// CLS and MC coincide the LLC level is kept, named MC.
func (s *Sim) buildDomains() {
	m := s.m
	n := m.NumCPUs()
	type level struct {
		name  string
		span  func(cpu int) []int
		flags int
		numa  int // SLIT distance for NUMA levels
	}
	base := SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE
	levels := []level{
		{"SMT", func(c int) []int { return m.SMTSiblings(c) }, base | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC | SD_PREFER_SIBLING, 0},
		{"CLS", func(c int) []int { return m.L2s[m.CPUs[c].L2] }, base | SD_CLUSTER | SD_SHARE_LLC | SD_PREFER_SIBLING, 0},
		{"MC", func(c int) []int { return m.LLCSpan(c) }, base | SD_SHARE_LLC | SD_PREFER_SIBLING, 0},
	}
	// smpboot.c: build_sched_topology(): with NUMA inside the package
	// (x86_has_numa_in_package: a package holds CPUs of more than one
	// node, as Cascade Lake-AP's two dies do) the PKG level is skipped,
	// "since the NUMA domains will auto-magically create the right
	// spanning domains based on the SLIT".
	if !numaInPackage(m) {
		levels = append(levels, level{"PKG", func(c int) []int { return m.Packages[m.CPUs[c].Package] }, base | SD_PREFER_SIBLING, 0})
	}
	// NUMA levels: for each distinct distance d > 10, the CPUs of nodes
	// within d of this CPU's node (sched_init_numa()).
	var dists []int
	for _, row := range m.Distance {
		for _, d := range row {
			if d > 10 && !slices.Contains(dists, d) {
				dists = append(dists, d)
			}
		}
	}
	slices.Sort(dists)
	for _, d := range dists {
		d := d
		fl := base | SD_NUMA | SD_SERIALIZE
		if d > reclaimDistance {
			fl &^= SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE
		}
		// One span per home node (the CPUs of a node share it, read
		// only), built when first asked for.
		spans := make([][]int, len(m.Nodes))
		levels = append(levels, level{"NUMA", func(c int) []int {
			home := m.CPUs[c].Node
			if spans[home] == nil {
				var span []int
				for node, cpus := range m.Nodes {
					if m.Distance[home][node] <= d {
						span = append(span, cpus...)
					}
				}
				slices.Sort(span)
				spans[home] = span
			}
			return spans[home]
		}, fl, d})
	}
	s.domains = make([][]*Domain, n)
	s.llc = make([]llcInfo, n)
	shared := map[int]*contention.LLCShared{}
	// seen[c] == stamp: CPU c is in a group already built for the domain
	// at hand (a map per domain cost a 1,024-CPU machine 1 M inserts).
	seen := make([]int32, n)
	stamp := int32(0)
	for cpu := 0; cpu < n; cpu++ {
		var doms []*Domain
		prevSpan := []int{cpu}
		for _, lv := range levels {
			span := lv.span(cpu)
			if slices.Equal(span, prevSpan) {
				// Degenerate: same span as the child. An LLC-sharing
				// child absorbs MC's name.
				if lv.name == "MC" && len(doms) > 0 && doms[len(doms)-1].Name == "CLS" {
					doms[len(doms)-1].Name = "MC"
					doms[len(doms)-1].Flags &^= SD_CLUSTER
				}
				continue
			}
			if len(span) == 1 {
				continue
			}
			d := &Domain{Name: lv.name, Span: span, Flags: lv.flags, BusyFactor: 16, spanFn: lv.span}
			d.spanOf = make([]bool, n)
			for _, c := range span {
				d.spanOf[c] = true
			}
			// sd_init(): imbalance_pct 110 for SMT, 117 otherwise
			// (LLC levels and the rest); cache_nice_tries SMT 0,
			// LLC 1, NUMA 2, others 1.
			d.ImbalancePct = 117
			d.CacheNiceTries = 1
			switch {
			case d.Flags&SD_SHARE_CPUCAPACITY != 0:
				d.ImbalancePct = 110
				d.CacheNiceTries = 0
			case d.Flags&SD_NUMA != 0:
				d.CacheNiceTries = 2
			}
			w := int64(len(span))
			d.MinInterval, d.MaxInterval, d.balanceInterval = w, 2*w, w
			d.maxNewidleLBCost = 0
			doms = append(doms, d)
			prevSpan = span
		}
		for i, d := range doms {
			d.Level = i
			if i > 0 {
				d.child = doms[i-1]
				doms[i-1].parent = d
			}
			// Groups: the child's spans (single CPUs at the lowest).
			stamp++
			for _, c := range d.Span {
				if seen[c] == stamp {
					continue
				}
				var g []int
				if d.child == nil {
					g = []int{c}
				} else {
					g = d.child.spanFn(c)
				}
				for _, x := range g {
					seen[x] = stamp
				}
				d.Groups = append(d.Groups, g)
			}
		}
		s.domains[cpu] = doms
		setImbNumaNr(doms)
		// sd_llc: the highest domain with SD_SHARE_LLC.
		info := llcInfo{id: cpu, size: 1, l2ID: m.L2s[m.CPUs[cpu].L2][0]}
		for _, d := range doms {
			if d.Flags&SD_SHARE_LLC != 0 {
				info.sd, info.size, info.id = d, d.Weight(), d.Span[0]
			}
		}
		if sh, ok := shared[info.id]; ok {
			info.shared = sh
		} else {
			info.shared = contention.NewLLCShared(s.space, fmt.Sprintf("sd_llc_shared[%d]", info.id), m.CPUs[cpu].Node)
			shared[info.id] = info.shared
			// The machine was idle before the workload starts, as a
			// benchmark's machine is: idle entry set has_idle_cores
			// (__update_idle_core()), and the idle LLC's periodic
			// balance set nr_idle_scan to the LLC weight
			// (update_idle_cpu_scan() at zero utilization). A freshly
			// booted kernel has them zeroed until its first balance;
			// starting from boot would run the first LLC balance
			// interval (sd_weight ms) with idle scanning off.
			info.shared.Init(true, info.size)
			s.llcSnap[info.id] = llcSnap{hasIdleCores: true, nrIdleScan: info.size}
		}
		s.llc[cpu] = info
	}
}

// Domains returns CPU cpu's sched domains, lowest first.
func (s *Sim) Domains(cpu int) []*Domain { return s.domains[cpu] }

// cpusShareCache is core.c: cpus_share_cache(): same sd_llc_id.
func (s *Sim) cpusShareCache(a, b int) bool { return s.llc[a].id == s.llc[b].id }

// cpusShareL2 is Mathieu Desnoyers' cpus_share_l2c() (TTWU_QUEUE_L2).
func (s *Sim) cpusShareL2(a, b int) bool { return s.llc[a].l2ID == s.llc[b].l2ID }

// setImbNumaNr is the imb_numa_nr computation of build_sched_domains():
// at the first level above the LLC, 1/8 of it for a single LLC per node,
// else the number of LLCs; scaled up by the span ratio above that.
func setImbNumaNr(doms []*Domain) {
	imb, imbSpan := 0, 1
	for _, sd := range doms {
		child := sd.child
		if sd.Flags&SD_SHARE_LLC == 0 && child != nil && child.Flags&SD_SHARE_LLC != 0 {
			nrLLCs := sd.Weight() / child.Weight()
			if nrLLCs == 1 {
				imb = sd.Weight() >> 3
			} else {
				imb = nrLLCs
			}
			imb = max(1, imb)
			sd.imbNumaNr = imb
			imbSpan = sd.Weight()
			for top := sd.parent; top != nil; top = top.parent {
				if top.Flags&SD_NUMA != 0 {
					imbSpan = top.Weight()
					break
				}
			}
		} else {
			sd.imbNumaNr = imb * max(1, sd.Weight()/imbSpan)
		}
	}
}
