package study

// The v6.12 EEVDF studies (experiments.md, validation set): PREEMPT_SHORT
// (85e511df3c, v6.12-rc1) and its update_curr() fix on lkp's SPR and ICL,
// and the shorter default slice (2ae891b826) on lkp's ICL. All run lkp's
// hackbench over sockets in lkp's cgroup (lkpHackbench).

// Per-second switch rates, the voluntary and involuntary ones apart (lkp's
// perf-stat and time.voluntary/involuntary_context_switches).
var (
	volPerSec = Metric{Name: "voluntary switches/s", Format: "%.3f", Unit: " M", Fn: func(o *Outcome) float64 {
		return float64(o.VolSwitches) / o.Counters["run.virtual_sec"] / 1e6
	}}
	involPerSec = Metric{Name: "involuntary switches/s", Format: "%.3f", Unit: " M", Fn: func(o *Outcome) float64 {
		return float64(o.InvolSwitches) / o.Counters["run.virtual_sec"] / 1e6
	}}
)

var preemptShortSPR = &Study{
	Name: "preempt-short-spr", Set: "validation",
	Doc: "lkp hackbench nr_threads 50% (112 groups), process, socket on spr-2s: v6.11 (no PREEMPT_SHORT) vs 85e511df3c (PREEMPT_SHORT, update_curr()'s rq->nr_running test) vs its fix 1c3386188ad9 (cfs_rq->nr_running)",
	Source: `Peter Zijlstra, "sched/eevdf: Allow shorter slices to wakeup-preempt" (85e511df3c, v6.12-rc1), ` +
		`and the fix of its update_curr() test (1c3386188ad9); lkp on lkp-spr-r02`,
	Settings: []Setting{
		{"v6.11", "v6.11-eevdf"},
		{"85e511df3c", "v6.12-eevdf,+RESCHED_RQ_NR_RUNNING"},
		{"fix", "v6.12-eevdf"},
	},
	Rows: []Row{{Label: "hackbench g112 process socket", Topo: "spr-2s", Workload: "hackbench",
		Args: lkpHackbench(224, 112, "process", false), Length: lkpHackbenchLen}},
	Metrics:  []Metric{hbThroughput, csPerSec, migPerSec, nrRunning},
	Headline: &Headline{Row: "hackbench g112 process socket", Setting: 1},
}

var preemptShortICL = &Study{
	Name: "preempt-short-icl", Set: "validation",
	Doc:    "lkp hackbench nr_threads 100% (128 groups), threads, socket on icl-2s: v6.12-rc1 (update_curr()'s rq->nr_running test) vs the fix (d4ac164bde: cfs_rq->nr_running)",
	Source: `the update_curr() fix of PREEMPT_SHORT's slice-protection test (d4ac164bde on tip, 1c3386188ad9); lkp on lkp-icl-2sp2`,
	Settings: []Setting{
		{"v6.12-rc1", "v6.12-eevdf,+RESCHED_RQ_NR_RUNNING"},
		{"fix", "v6.12-eevdf"},
	},
	Rows: []Row{{Label: "hackbench g128 threads socket", Topo: "icl-2s", Workload: "hackbench",
		Args: lkpHackbench(128, 128, "threads", false), Length: lkpCrowdedLen}},
	Metrics:  []Metric{hbThroughput, csPerSec, volPerSec, involPerSec},
	Headline: &Headline{Row: "hackbench g128 threads socket", Setting: 1},
}

// baseSliceICL: 2ae891b826 lowers sysctl_sched_base_slice's normalized
// default from 0.75 ms to 0.70 ms; scaled by 1 + ilog2(min(ncpus, 8)) = 4
// (update_sysctl()), that is 3.0 ms -> 2.8 ms on icl-2s. The v6.14-rc tip
// runs as v6.12-eevdf (the model has no v6.14 profile; simplified).
var baseSliceICL = &Study{
	Name: "base-slice-icl", Set: "validation",
	Doc:    "lkp hackbench nr_threads 100% (128 groups), process, socket on icl-2s: the v6.14-rc tip's base slice (3 ms) vs 2ae891b826's (2.8 ms)",
	Source: `Vincent Guittot, "sched: Reduce the default slice to avoid tasks getting an extra tick" (2ae891b826); lkp on lkp-icl-2sp2`,
	Settings: []Setting{
		{"parent", "v6.12-eevdf"},
		{"2ae891b826", "v6.12-eevdf;sched:base_slice_ns=2800000"},
	},
	Rows: []Row{{Label: "hackbench g128 process socket", Topo: "icl-2s", Workload: "hackbench",
		Args: lkpHackbench(128, 128, "process", false), Length: lkpCrowdedLen}},
	Metrics:  []Metric{hbThroughput, csPerSec, migPerSec},
	Headline: &Headline{Row: "hackbench g128 process socket", Setting: 1},
}
