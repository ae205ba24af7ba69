package emu

import "math/bits"

// procLayout is what the modeled kernel release prints in its /proc and
// debugfs text (kernel/sched/debug.c, stats.c) where releases differ. The
// Sim knows a feature set, not a release: the layout is that of the
// profile nearest the feature set (fewest switches apart, the earlier
// profile on a tie), so "v6.6-eevdf,+TG_LOAD_RATELIMIT" prints as v6.7
// does, and an edited v6.12-eevdf still as v6.12.
type procLayout struct {
	profile string // the nearest profile's name
	release string // "6.6": the tag the layout is read from

	// schedstatVersion is stats.c: SCHEDSTAT_VERSION: 15 to v6.8, 16 from
	// v6.9 (Ingo Molnar, "sched/debug: Increase SCHEDSTAT_VERSION to 16",
	// after enum cpu_idle_type put __CPU_NOT_IDLE first).
	schedstatVersion int

	// statsPrefix is the name proc_sched_show_task() prints the schedstat
	// fields under: "se.statistics." to v5.15 (P_SCHEDSTAT(se.statistics.F)),
	// "" from v5.16's struct sched_statistics p->stats (ceeadb83aea2).
	statsPrefix string
	// sumBlock: p->stats.sum_block_runtime exists (847fc0cd0664, v5.16).
	sumBlock bool
	// eevdf: v6.6's EEVDF print_cfs_rq() and print_task() columns
	// (147f3efaa241, af4cf40470c2); false: CFS's MIN/max_vruntime and
	// spread0.
	eevdf bool
	// leftDeadline: print_cfs_rq() prints left_deadline (the deadline-
	// ordered tree, 2227a957e1d5, v6.8).
	leftDeadline bool
	// execClock: print_cfs_rq() prints exec_clock and nr_spread_over,
	// removed for v6.12 (Chuyi Zhou, "sched/fair: Remove
	// cfs_rq::nr_spread_over and cfs_rq::exec_clock").
	execClock bool
	// utilEstSingle: util_est is one field (11137d384996, v6.8):
	// cfs_rq "util_est" and se.avg.util_est; before, cfs_rq
	// "util_est_enqueued" and se.avg.util_est.ewma/.enqueued.
	utilEstSingle bool
	// nrMigratory: rt_nr_migratory and dl_nr_migratory are printed (to
	// v6.6; Valentin Schneider's removal is v6.7's).
	nrMigratory bool
	// childRunsFirst: the header prints sysctl_sched_child_runs_first (to
	// v6.6; 17e7170645e3 removed it for v6.7).
	childRunsFirst bool
	// customSlice: print_task() prints se->custom_slice's 'S' column
	// (857b158dc5e8, tip in August 2024: v6.11-eevdf and v6.12).
	customSlice bool
	// taskTable12: print_task()'s tidy columns and header (2cab4bd024d2,
	// v6.12-rc1).
	taskTable12 bool
}

// procLayouts are the layouts of the profiles, read from debug.c and
// stats.c at the tags (v6.11-eevdf: tip sched/core before 85e511df3c,
// August 2024; simplified: its print_cfs_rq() is v6.12's).
var procLayouts = map[string]procLayout{
	"v5.15-cfs":   {release: "5.15", schedstatVersion: 15, statsPrefix: "se.statistics.", execClock: true, nrMigratory: true, childRunsFirst: true},
	"v5.19-cfs":   {release: "5.19", schedstatVersion: 15, sumBlock: true, execClock: true, nrMigratory: true, childRunsFirst: true},
	"v6.5-cfs":    {release: "6.5", schedstatVersion: 15, sumBlock: true, execClock: true, nrMigratory: true, childRunsFirst: true},
	"v6.6-eevdf":  {release: "6.6", schedstatVersion: 15, sumBlock: true, eevdf: true, execClock: true, nrMigratory: true, childRunsFirst: true},
	"v6.7-eevdf":  {release: "6.7", schedstatVersion: 15, sumBlock: true, eevdf: true, execClock: true},
	"v6.11-eevdf": {release: "6.11", schedstatVersion: 16, sumBlock: true, eevdf: true, leftDeadline: true, utilEstSingle: true, customSlice: true},
	"v6.12-eevdf": {release: "6.12", schedstatVersion: 16, sumBlock: true, eevdf: true, leftDeadline: true, utilEstSingle: true, customSlice: true, taskTable12: true},
}

// layoutFor returns the layout of the profile nearest f.
func layoutFor(f Features) procLayout {
	best, bestD := Profiles[0].Name, 65
	for _, p := range Profiles {
		if d := bits.OnesCount64(uint64(p.Set ^ f)); d < bestD {
			best, bestD = p.Name, d
		}
	}
	l := procLayouts[best]
	l.profile = best
	return l
}

// ProcProfile names the profile whose /proc text layouts the Sim prints
// (-schedstat, -taskstats, -sched-debug): the one nearest its features.
func (s *Sim) ProcProfile() string { return layoutFor(s.feat).profile }
