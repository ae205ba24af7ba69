package emu

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// RQStats are a CPU's counters: the /proc/schedstat v16 cpu line (kernel
// names), Chen Yu's wakeup-preemption counters, and the emulator's own.
// Owned by the CPU.
type RQStats struct {
	YldCount    int64 // yld_count
	SchedCount  int64 // sched_count: __schedule() calls
	SchedGoidle int64 // sched_goidle
	TTWUCount   int64 // ttwu_count: wakeups done by this CPU (the waker)
	TTWULocal   int64 // ttwu_local
	RQCPUTime   int64 // rq_cpu_time: time tasks ran, ns
	RunDelay    int64 // run_delay: time tasks waited, ns
	Pcount      int64 // pcount: timeslices run
	NrSwitches  int64 // nr_switches
	Enqueues    int64 // enqueue_task() calls
	Dequeues    int64 // dequeue_task() calls

	CheckPreemptCount int64 // check_preempt_wakeup() calls (counted on entry, as Chen Yu's schedstat patch does)
	NeedPreemptCount  int64 // ... that preempted (its preempt label)

	TgLoadAvgWrites  int64 // atomic adds to tg->load_avg
	TgLoadAvgReads   int64 // reads of tg->load_avg (calc_group_shares)
	TgLineRTReads    int64 // set_task_rq()'s reads of tg->rt_se/rt_rq on tg->load_avg's line (RT_GROUP_SCHED)
	TgRatelimitSkips int64 // update_tg_load_avg() calls stopped by the 1 ms ratelimit
	TgThresholdSkips int64 // ... stopped by the 1/64 threshold
	// tgSites split the four above by call site (tgsites.go).
	tgSites [numTgSites]tgSiteCounts

	StallNS int64 // weave stall charged to this CPU, ns

	WakelistWakeups int64 // remote wakeups through the target's wake list
	OnCPUWakeups    int64 // ... of a wakee still on_cpu, queued back on its own CPU (WF_ON_CPU)
	DirectWakeups   int64 // remote wakeups taking the target's rq lock
	// RacedWakeups are signals this CPU sent to a task it saw running
	// (as published at the last barrier) that had gone to sleep since:
	// the barrier completes the wakeup on this CPU's behalf (ttwuRaced).
	// RacedRunnable are its signals that found the task between its wait's
	// check and its dequeue: ttwu_runnable(), no sleep (hold.go), or, for
	// a sleep the barrier could no longer take back, a wakeup as of one
	// still on_cpu (ttwuRaced).
	RacedWakeups  int64
	RacedRunnable int64
	// SignalHoldsFound are signals this CPU held for the barrier
	// (hold.go: holdSignal) that found the task already woken by an
	// earlier waker: left pending, no try_to_wake_up().
	SignalHoldsFound int64
	RemoteLockAcq    int64 // remote rq-lock acquisitions
	IPIsSent         int64 // IPIs this CPU sent (wake-list and ILB kicks)
	IPIsReceived     int64 // IPIs it received
	ILBKicks         int64 // NOHZ idle-balance kicks sent (nohz_balancer_kick())
	// SISScans are select_idle_cpu() scans this CPU ran as a waker (those
	// past SIS_UTIL's nr_idle_scan == 0 exit), SISProbes the CPUs their
	// for_each_cpu_wrap() visited: each tested with __select_idle_cpu(),
	// or, with an idle core, as a core with select_idle_core().
	SISScans  int64
	SISProbes int64
	// IdleCoreScans are the scans among SISScans that had has_idle_cores
	// (test_idle_cores()) and so walked the LLC core by core, past
	// SIS_UTIL's nr; IdleCoresSets the times this CPU's idle entry set
	// has_idle_cores (__update_idle_core()), which such a scan that
	// finds no idle core clears.
	IdleCoreScans int64
	IdleCoresSets int64
	// DelayedWakeups are this CPU's wakeups of a task still queued,
	// sched_delayed (v6.12 ttwu_runnable() with ENQUEUE_DELAYED);
	// DelayedDequeues the delayed tasks its picks dequeued.
	DelayedWakeups  int64
	DelayedDequeues int64
	// NrRunningNS is rq->nr_running integrated over time (tasks x ns):
	// over a window's length, the nr_running that sched_debug samples.
	NrRunningNS int64

	fracNS float64 // sub-ns costs not yet charged
}

// ProfileEntry is one line of the virtual-cycle profile.
type ProfileEntry struct {
	Symbol  string  `json:"symbol"`
	User    bool    `json:"user"`
	DSO     string  `json:"dso,omitempty"` // a user symbol's program
	NS      int64   `json:"ns"`
	Percent float64 `json:"percent"`
}

// Profile is the time of the given CPUs (all when cpus is nil) by symbol,
// largest first, idle included.
func (s *Sim) Profile(cpus []int) []ProfileEntry {
	if cpus == nil {
		for i := range s.cpus {
			cpus = append(cpus, i)
		}
	}
	totals := make([]int64, len(s.syms.names))
	var all int64
	for _, c := range cpus {
		for sym, ns := range s.cpus[c].profile {
			totals[sym] += ns
			all += ns
		}
	}
	var out []ProfileEntry
	for sym, ns := range totals {
		if ns == 0 {
			continue
		}
		out = append(out, ProfileEntry{Symbol: s.symbolName(Symbol(sym)), User: s.syms.user[sym], DSO: s.syms.dso[sym], NS: ns,
			Percent: 100 * float64(ns) / float64(max(all, 1))})
	}
	sortProfile(out)
	return out
}

// sortProfile orders a profile largest first, ties by name.
func sortProfile(out []ProfileEntry) {
	slices.SortStableFunc(out, func(a, b ProfileEntry) int {
		if a.NS != b.NS {
			return int(b.NS - a.NS)
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
}

// ProfileDiff is the profile of the time between two of a run's
// profiles, b taken after a (a measurement window: bench.Window), largest
// first, with each symbol's share of the window's time.
func ProfileDiff(b, a []ProfileEntry) []ProfileEntry {
	type key struct {
		sym, dso string
		user     bool
	}
	before := map[key]int64{}
	for _, e := range a {
		before[key{e.Symbol, e.DSO, e.User}] = e.NS
	}
	var out []ProfileEntry
	var all int64
	for _, e := range b {
		e.NS -= before[key{e.Symbol, e.DSO, e.User}]
		if e.NS <= 0 {
			continue
		}
		all += e.NS
		out = append(out, e)
	}
	for i := range out {
		out[i].Percent = 100 * float64(out[i].NS) / float64(max(all, 1))
	}
	sortProfile(out)
	return out
}

// profileDSO is the shared object perf report names for an entry: the
// kernel, or the program a user symbol belongs to.
func profileDSO(e ProfileEntry) string {
	if !e.User {
		return kernelDSO
	}
	return e.DSO
}

// perfUnit is perf's convert_unit(): the count in K, M or G.
func perfUnit(n int64) string {
	unit := " "
	for _, u := range []string{"K", "M", "G"} {
		if n > 1000 {
			n /= 1000
			unit = u
		}
	}
	return fmt.Sprintf("%d%s", n, unit)
}

// profileSampleHz is the sampling rate the Samples line assumes per CPU
// (perf record's default -F 4000).
const profileSampleHz = 4000

// profileEvent is the event a profile of cpus names and its precise_ip:
// perf's default cycles:pp (precise_ip 2, the PEBS/IBS sampling the x86
// servers have), plain cycles on a Cortex-A53 (no precise sampling: perf
// falls back), and a per-CPU table's event suffixed with its CPUs, so
// that lkp's perf-profile parser, which keys every table by its event,
// does not add it to the whole machine's (-cpu3: cycles-pp-cpu3.SYMBOL).
func (s *Sim) profileEvent(cpus []int) (string, int) {
	event, precise := "cycles:pp", 2
	if strings.Contains(s.m.Model, "Cortex-A53") {
		event, precise = "cycles", 0
	}
	if cpus != nil {
		ids := make([]string, len(cpus))
		for i, c := range cpus {
			ids[i] = strconv.Itoa(c)
		}
		event += "-cpu" + strings.Join(ids, "_")
	}
	return event, precise
}

// WriteProfile prints the profile of the given CPUs (all when nil) as
// `perf report --children --header --sort=dso,symbol` prints a
// `perf record -a -g` of the run: the "# ========" header block, the
// Samples / Event count lines for the sampled event (profileEvent), and Children / Self /
// Shared Object / Symbol rows, each followed by its call chains in perf's
// -g folded,0.5,callee form, which lkp-tests' programs/perf-profile/parse
// parses into perf-profile.{children,self,calltrace}.cycles-pp.*. The
// chains are the kernel paths that charged the cycles (chains.go). title
// is printed as a comment after the header.
func (s *Sim) WriteProfile(w io.Writer, cpus []int, title string) error {
	prof := s.Profile(cpus)
	var total int64
	dsoW, symW := len("Shared Object"), len("Symbol")
	for _, e := range prof {
		total += e.NS
		dsoW = max(dsoW, len(profileDSO(e)))
		symW = max(symW, len(e.Symbol)+4)
	}
	ncpu := len(s.cpus)
	var b strings.Builder
	b.WriteString("# ========\n")
	fmt.Fprintf(&b, "# captured on    : Thu Jan  1 00:00:00 1970\n")
	fmt.Fprintf(&b, "# header version : 1\n")
	fmt.Fprintf(&b, "# hostname : %s\n", s.m.Name)
	fmt.Fprintf(&b, "# os release : rqemu (the modeled kernel's features: see the title below)\n")
	fmt.Fprintf(&b, "# perf version : rqemu virtual-cycle profile\n")
	fmt.Fprintf(&b, "# arch : %s\n", s.m.Arch)
	fmt.Fprintf(&b, "# nrcpus online : %d\n# nrcpus avail : %d\n", ncpu, ncpu)
	fmt.Fprintf(&b, "# cpudesc : %s\n", s.m.Model)
	fmt.Fprintf(&b, "# cmdline : perf record -a -g -F %d\n", profileSampleHz)
	event, precise := s.profileEvent(cpus)
	fmt.Fprintf(&b, "# event : name = %s, , id = { }, size = 136, { sample_period, sample_freq } = %d, sample_type = IP|TID|TIME|CALLCHAIN|CPU|PERIOD, read_format = ID, disabled = 1, inherit = 1, freq = 1, precise_ip = %d, sample_id_all = 1\n", event, profileSampleHz, precise)
	b.WriteString("# ========\n#\n")
	fmt.Fprintf(&b, "# %s\n#\n", title)
	b.WriteString("# Total Lost Samples: 0\n#\n")
	fmt.Fprintf(&b, "# Samples: %s of event '%s'\n", perfUnit(total*profileSampleHz/1_000_000_000), event)
	fmt.Fprintf(&b, "# Event count (approx.): %d\n#\n", int64(s.m.NSToCycles(float64(total))))
	fmt.Fprintf(&b, "# Children      Self  %-*s  %s\n", dsoW, "Shared Object", "Symbol")
	fmt.Fprintf(&b, "# ........  ........  %s  %s\n#\n", strings.Repeat(".", dsoW), strings.Repeat(".", symW))
	chains := s.foldedChains(cpus)
	children := map[string]int64{}
	for _, c := range chains {
		seen := map[string]bool{}
		for _, f := range c.frames {
			if !seen[f] {
				seen[f] = true
				children[f] += c.ns
			}
		}
	}
	// perf report --children sorts by Children; a function with no self
	// time of its own (a caller only) is listed too.
	rows := slices.Clone(prof)
	for name := range children {
		if !slices.ContainsFunc(rows, func(e ProfileEntry) bool { return e.Symbol == name }) {
			rows = append(rows, ProfileEntry{Symbol: name})
		}
	}
	slices.SortStableFunc(rows, func(a, b ProfileEntry) int {
		if ca, cb := children[a.Symbol], children[b.Symbol]; ca != cb {
			return int(cb - ca)
		}
		if a.NS != b.NS {
			return int(b.NS - a.NS)
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
	pctOf := func(ns int64) string { return fmt.Sprintf("%.2f%%", 100*float64(ns)/float64(max(total, 1))) }
	for _, e := range rows {
		mark := "[k]"
		if e.User {
			mark = "[.]"
		}
		fmt.Fprintf(&b, "%10s  %8s  %-*s  %s %s\n", pctOf(max(children[e.Symbol], e.NS)), pctOf(e.NS), dsoW, profileDSO(e), mark, e.Symbol)
		// -g folded,0.5,callee (lkp's perf-profile monitor): the chains
		// through this function, from it up to their first modeled
		// caller, at 0.5% of the samples or more.
		for _, f := range foldedFrom(chains, e.Symbol, total/200) {
			fmt.Fprintf(&b, "%s %s\n", pctOf(f.ns), strings.Join(f.frames, ";"))
		}
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chainNS is a call chain's functions, leaf first, and its ns.
type chainNS struct {
	frames []string
	ns     int64
}

// foldedChains is every call chain the given CPUs charged (chains.go),
// by the names perf shows, identical ones merged, in a stable order.
func (s *Sim) foldedChains(cpus []int) []chainNS {
	if cpus == nil {
		for i := range s.cpus {
			cpus = append(cpus, i)
		}
	}
	byKey := map[string]*chainNS{}
	var out []*chainNS
	for _, c := range cpus {
		s.cpus[c].calls.charged(func(chain []Symbol, ns int64) {
			var frames []string
			for _, sym := range chain {
				frames = append(frames, s.symbolName(sym))
			}
			k := strings.Join(frames, ";")
			if byKey[k] == nil {
				byKey[k] = &chainNS{frames: frames}
				out = append(out, byKey[k])
			}
			byKey[k].ns += ns
		})
	}
	res := make([]chainNS, len(out))
	for i, c := range out {
		res[i] = *c
	}
	slices.SortStableFunc(res, func(a, b chainNS) int {
		return strings.Compare(strings.Join(a.frames, ";"), strings.Join(b.frames, ";"))
	})
	return res
}

// foldedFrom is the chains through fn cut to start at it (callee order:
// fn, its caller, ...), merged, at least min ns, largest first.
func foldedFrom(chains []chainNS, fn string, min int64) []chainNS {
	byKey := map[string]*chainNS{}
	var out []*chainNS
	for _, c := range chains {
		i := slices.Index(c.frames, fn)
		if i < 0 {
			continue
		}
		k := strings.Join(c.frames[i:], ";")
		if byKey[k] == nil {
			byKey[k] = &chainNS{frames: c.frames[i:]}
			out = append(out, byKey[k])
		}
		byKey[k].ns += c.ns
	}
	var res []chainNS
	for _, c := range out {
		if c.ns >= max(min, 1) {
			res = append(res, *c)
		}
	}
	slices.SortStableFunc(res, func(a, b chainNS) int {
		if a.ns != b.ns {
			return int(b.ns - a.ns)
		}
		return strings.Compare(strings.Join(a.frames, ";"), strings.Join(b.frames, ";"))
	})
	return res
}

// SymbolNS is the total ns all CPUs spent in the named symbol (as the
// profile names it).
func (s *Sim) SymbolNS(name string) int64 {
	var ns int64
	for sym := range s.syms.names {
		if s.symbolName(Symbol(sym)) == name {
			for _, rq := range s.cpus {
				ns += rq.profile[sym]
			}
		}
	}
	return ns
}
