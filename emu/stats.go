package emu

import (
	"fmt"
	"io"
	"slices"
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

	CheckPreemptCount int64 // wakeup preemption checks reaching the pick
	NeedPreemptCount  int64 // ... that preempted

	TgLoadAvgWrites  int64 // atomic adds to tg->load_avg
	TgLoadAvgReads   int64 // reads of tg->load_avg (calc_group_shares)
	TgRatelimitSkips int64 // update_tg_load_avg() calls stopped by the 1 ms ratelimit
	TgThresholdSkips int64 // ... stopped by the 1/64 threshold

	StallNS int64 // weave stall charged to this CPU, ns

	WakelistWakeups int64 // remote wakeups through the target's wake list
	DirectWakeups   int64 // remote wakeups taking the target's rq lock
	RemoteLockAcq   int64 // remote rq-lock acquisitions
	IPIsSent        int64 // IPIs this CPU sent (wake-list and ILB kicks)
	IPIsReceived    int64 // IPIs it received
	ILBKicks        int64 // NOHZ idle-balance kicks sent (nohz_balancer_kick())

	fracNS float64 // sub-ns costs not yet charged
}

// ProfileEntry is one line of the virtual-cycle profile.
type ProfileEntry struct {
	Symbol  string  `json:"symbol"`
	User    bool    `json:"user"`
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
		out = append(out, ProfileEntry{Symbol: s.syms.names[sym], User: s.syms.user[sym], NS: ns,
			Percent: 100 * float64(ns) / float64(max(all, 1))})
	}
	slices.SortStableFunc(out, func(a, b ProfileEntry) int {
		if a.NS != b.NS {
			return int(b.NS - a.NS)
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
	return out
}

// WriteProfile prints the profile like `perf report --sort symbol`.
func (s *Sim) WriteProfile(w io.Writer, cpus []int, title string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n#\n# Overhead  Symbol\n# ........  ......................................\n#\n", title)
	for _, e := range s.Profile(cpus) {
		mark := "[k]"
		if e.User {
			mark = "[.]"
		}
		fmt.Fprintf(&b, "  %6.2f%%  %s %s\n", e.Percent, mark, e.Symbol)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SymbolNS is the total ns all CPUs spent in the named symbol.
func (s *Sim) SymbolNS(name string) int64 {
	var ns int64
	for sym, n := range s.syms.names {
		if n == name {
			for _, rq := range s.cpus {
				ns += rq.profile[sym]
			}
		}
	}
	return ns
}
