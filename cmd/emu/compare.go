package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
)

const compareUsage = `usage: emu compare -base FEATURES -patch FEATURES [-seeds N] [engine flags]
               [-workload NAME] [workload flags]

Runs the workload N times (seeds -seed .. -seed+N-1) under each feature
set and prints the kernel test robot's comparison table: the mean of each
metric with its ±stddev%% over the seeds, and the change. The workload's
metrics come first (its primary metric on top), then scheduler rates and
counters, then the profile's self shares (perf-profile.self.cycles-pp.*,
whose change is in percentage points, as lkp prints it).

The emulator is deterministic: the spread over seeds is the workload's
own randomness (placement, wakeup order), not machine noise.

examples:
  emu compare -base v6.6-eevdf -patch v6.6-eevdf,+TG_LOAD_RATELIMIT -seeds 3 \
      -topo spr-2s -workload netperf -t UDP_RR -nr 100%% -l 0.02 -cgroup docker
  emu compare -base v6.6-eevdf,-RUN_TO_PARITY -patch v6.6-eevdf -topo spr-1s \
      -workload hackbench -g 28 -f 20 -T -l 50

workloads:
%s`

// profileRows are the symbols compare reports the self share of.
var profileRows = []string{"update_cfs_group", "update_load_avg", "enqueue_task_fair", "dequeue_task_fair",
	"try_to_wake_up", "select_task_rq_fair", "__schedule", "do_idle"}

// counterRows are the counters compare reports, in order.
var counterRows = []string{"rate.wakeups_per_sec", "rate.migrations_per_sec", "rate.context_switches_per_sec",
	"sched.TgLoadAvgWrites", "sched.TgRatelimitSkips", "sched.StallNS", "sched.IPIsSent", "sched.WakelistWakeups",
	"sched.DirectWakeups", "sched.NeedPreemptCount", "sched.CheckPreemptCount"}

// sample is one run's numbers.
type sample struct {
	metrics  bench.Metrics
	counters map[string]float64
	profile  map[string]float64
}

func runCompare(args []string, stdout, stderr io.Writer) error {
	var e engineFlags
	var base, patch string
	var seeds int
	declare := func(fs *flag.FlagSet) {
		e.declare(fs, false)
		fs.StringVar(&base, "base", emu.DefaultProfile, "the base feature set")
		fs.StringVar(&patch, "patch", "", "the patched feature set (required)")
		fs.IntVar(&seeds, "seeds", 3, "runs per side (seeds -seed .. -seed+N-1)")
	}
	st, err := parseWithWorkload("compare", compareUsage, args, stderr, &e, declare)
	if err != nil {
		return err
	}
	if patch == "" {
		return usagef("-patch: required (a feature set, e.g. %s,+TG_LOAD_RATELIMIT)", emu.DefaultProfile)
	}
	if seeds < 1 || seeds > 100 {
		return usagef("-seeds: must be in [1, 100], got %d", seeds)
	}
	if e.seed > math.MaxUint64-uint64(seeds) {
		return usagef("-seed: %d with -seeds %d runs past the last seed (allowed: -seed up to %d)", e.seed, seeds, uint64(math.MaxUint64-uint64(seeds)))
	}
	sides := []string{base, patch}
	feats := make([]emu.Features, 2)
	for i, spec := range sides {
		f, _, err := parseFeatureFlag("-"+[]string{"base", "patch"}[i], spec)
		if err != nil {
			return err
		}
		feats[i] = f
	}
	// Validate the workload's flags once before the runs.
	if _, err := st.mk(st.m); err != nil {
		return workloadError(err)
	}
	stop, unlisten := interrupts()
	defer unlisten()
	results := make([][]sample, 2)
	for seed := e.seed; seed < e.seed+uint64(seeds); seed++ {
		for side := range 2 {
			// A fresh workload per run: re-parse its flags.
			w, err := freshWorkload(st, &e, declare, stderr)
			if err != nil {
				return err
			}
			cfg := runConfig(&e, st.m, feats[side])
			cfg.Seed = seed
			cfg.Stop = stop
			t0 := time.Now()
			res, err := bench.Execute(w, cfg)
			if err != nil {
				return workloadError(err)
			}
			if res.Interrupted {
				fmt.Fprintln(stderr)
				writeCompare(stdout, st, sides, results)
				return errInterrupted
			}
			m := w.Metrics(res.Sim)
			prof := map[string]float64{}
			for _, p := range res.Sim.Profile(nil) {
				prof[p.Symbol] = p.Percent
			}
			results[side] = append(results[side], sample{metrics: m, counters: counters(res.Sim), profile: prof})
			if e.progress {
				fmt.Fprintf(stderr, "emu compare: %-5s seed %d: %s = %.6g (%.1f s host)\n",
					[]string{"base", "patch"}[side], seed, m.Primary, m.Values[m.Primary], time.Since(t0).Seconds())
			}
		}
	}
	writeCompare(stdout, st, sides, results)
	return nil
}

func freshWorkload(st *setup, e *engineFlags, declare func(*flag.FlagSet), stderr io.Writer) (bench.Workload, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	declare(fs)
	mk := st.spec.Flags(fs)
	if err := fs.Parse(st.args); err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	w, err := mk(st.m)
	if err != nil {
		return nil, workloadError(err)
	}
	return w, nil
}

// meanStd is the mean and the sample standard deviation in % of the mean.
func meanStd(v []float64) (mean, stdPct float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 || mean == 0 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, 100 * math.Sqrt(ss/float64(len(v)-1)) / math.Abs(mean)
}

func fmtVal(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0.00"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtStd(p float64) string {
	if p < 1 {
		return "      "
	}
	return fmt.Sprintf("± %2.0f%%", p)
}

// writeCompare prints lkp's comparison table.
func writeCompare(w io.Writer, st *setup, sides []string, results [][]sample) {
	n := min(len(results[0]), len(results[1]))
	if n == 0 {
		fmt.Fprintln(w, "no complete pair of runs")
		return
	}
	fmt.Fprintf(w, "%s on %s (%d CPUs), %d seed(s)\n", strings.Join(append([]string{st.spec.Name}, st.wargs...), " "), st.m.Name, len(st.m.CPUs), n)
	fmt.Fprintf(w, "\nfeatures:\n  base:  %s\n  patch: %s\n\n", sides[0], sides[1])
	fmt.Fprintf(w, "%16s %27s\n", "base", "patch")
	fmt.Fprintf(w, "---------------- --------------------------- \n")
	fmt.Fprintf(w, "         %%stddev     %%change         %%stddev\n")
	fmt.Fprintf(w, "             \\          |                \\  \n")
	row := func(name string, get func(sample) (float64, bool), points bool) {
		var a, b []float64
		for i := 0; i < n; i++ {
			va, oka := get(results[0][i])
			vb, okb := get(results[1][i])
			if !oka && !okb {
				continue
			}
			a, b = append(a, va), append(b, vb)
		}
		if len(a) == 0 {
			return
		}
		ma, sa := meanStd(a)
		mb, sb := meanStd(b)
		var change string
		switch {
		case points:
			change = fmt.Sprintf("%+.1f", mb-ma)
		case ma == 0 && mb == 0:
			change = "0.0%"
		case ma == 0:
			change = "new"
		default:
			change = fmt.Sprintf("%+.1f%%", 100*(mb-ma)/math.Abs(ma))
		}
		fmt.Fprintf(w, "%10s %s %10s %10s %s  %s\n", fmtVal(ma), fmtStd(sa), change, fmtVal(mb), fmtStd(sb), name)
	}
	m0 := results[0][0].metrics
	prefix := st.spec.Name + "."
	keys := []string{m0.Primary}
	var rest []string
	for k := range m0.Values {
		if k != m0.Primary {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range append(keys, rest...) {
		row(prefix+k, func(s sample) (float64, bool) { v, ok := s.metrics.Values[k]; return v, ok }, false)
	}
	for _, k := range counterRows {
		row(k, func(s sample) (float64, bool) { v, ok := s.counters[k]; return v, ok }, false)
	}
	for _, sym := range profileRows {
		row("perf-profile.self.cycles-pp."+sym, func(s sample) (float64, bool) { v, ok := s.profile[sym]; return v, ok }, true)
	}
	better := "lower"
	if m0.HigherIsBetter {
		better = "higher"
	}
	fmt.Fprintf(w, "\n%s%s: %s is better\n", prefix, m0.Primary, better)
}
