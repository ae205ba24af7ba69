package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/study"
)

const compareUsage = `usage: emu compare -base FEATURES -patch FEATURES [-seeds N] [-j N] [engine flags]
               [-workload NAME] [workload flags]

Runs the workload N times (seeds -seed .. -seed+N-1) under each feature
set and prints the kernel test robot's comparison table in lkp-tests'
compare.rb layout: the mean of each metric with its ±stddev%% (population,
shown above 2%%) over the seeds, and the change. First the metrics under
lkp's names, read from the workload's output by ports of lkp's parsers
(netperf.Throughput_total_tps, hackbench.throughput, ...), then rqemu's
own workload metrics (rqemu.WORKLOAD.*), the scheduler rates and counters
(perf-stat.ps.context-switches, perf-stat.ps.cpu-migrations, rqemu.*),
and the profile's self shares (perf-profile.self.cycles-pp.*, whose change
is in percentage points, as lkp prints it). With LKP_SRC set to an
lkp-tests checkout, lkp's own parsers (programs/TESTCASE/parse, run by
ruby) read the output instead of the ports.

The emulator is deterministic: the spread over seeds is the workload's
own randomness (placement, wakeup order), not machine noise.

examples:
  emu compare -j 2 -base v6.6-eevdf -patch v6.6-eevdf,+TG_LOAD_RATELIMIT -seeds 3 \
      -topo spr-2s -workload netperf -t UDP_RR -nr 100%% -l 0.02 -cgroup docker
  emu compare -base v6.6-eevdf,-RUN_TO_PARITY -patch v6.6-eevdf -topo spr-1s \
      -workload hackbench -g 28 -f 20 -T -l 50
  emu compare -base v6.6-eevdf -patch 'v6.6-eevdf;sched:base_slice_ns=2800000' \
      -topo icl-2s -workload hackbench -g 8 -l 100   # -sched NAME=VALUE: both sides

workloads:
%s`

// profileRows are the symbols compare reports the self share of.
var profileRows = []string{"update_cfs_group", "update_load_avg", "enqueue_task_fair", "dequeue_task_fair",
	"try_to_wake_up", "select_task_rq_fair", "__schedule", "do_idle"}

// counterRows are the counters compare reports, in order.
var counterRows = []string{"rate.wakeups_per_sec", "rate.migrations_per_sec", "rate.context_switches_per_sec",
	"sched.TgLoadAvgWrites", "sched.TgRatelimitSkips", "sched.StallNS", "sched.IPIsSent", "sched.WakelistWakeups",
	"sched.DirectWakeups", "sched.NeedPreemptCount", "sched.CheckPreemptCount"}

// lkpCounterNames are the counters lkp has names for (perf-stat's per
// second rates); the others print as rqemu.NAME.
var lkpCounterNames = map[string]string{
	"rate.context_switches_per_sec": "perf-stat.ps.context-switches",
	"rate.migrations_per_sec":       "perf-stat.ps.cpu-migrations",
}

// sample is one run's numbers.
type sample struct {
	metrics  bench.Metrics
	lkp      map[string]float64 // lkp's parser of the workload's output
	counters map[string]float64
	profile  map[string]float64
}

func runCompare(args []string, stdout, stderr io.Writer) error {
	var e engineFlags
	var base, patch string
	var seeds, jobs int
	// schbench has a -j of its own (its JSON file): there, compare's runs
	// at once are -jobs (declaring -j twice was a panic).
	jobsFlag := "j"
	if workloadHasFlag(workloadName(args, "hackbench"), "j") {
		jobsFlag = "jobs"
	}
	declare := func(fs *flag.FlagSet) {
		e.declare(fs, false)
		fs.StringVar(&base, "base", emu.DefaultProfile, "the base feature set")
		fs.StringVar(&patch, "patch", "", "the patched feature set (required)")
		fs.IntVar(&seeds, "seeds", 3, "runs per side (seeds -seed .. -seed+N-1)")
		fs.IntVar(&jobs, jobsFlag, 1, "runs executed at once, sharing the host's CPUs (same bytes; on a host with few CPUs, -"+jobsFlag+" N beats one parallel run at a time)")
	}
	st, err := parseWithWorkload("compare", compareUsage, args, stderr, &e, declare)
	if err != nil {
		return err
	}
	if jobsFlag == "jobs" && slices.ContainsFunc(st.wargs, func(a string) bool { return strings.HasPrefix(a, "-j=") }) {
		return usagef("-j: %s's own -j (its JSON file) is not written by compare; runs at once are -jobs N here", st.spec.Name)
	}
	if patch == "" {
		return usagef("-patch: required (a feature set, e.g. %s,+TG_LOAD_RATELIMIT)", emu.DefaultProfile)
	}
	if seeds < 1 || seeds > 100 {
		return usagef("-seeds: must be in [1, 100], got %d", seeds)
	}
	if jobs < 1 || jobs > 256 {
		return usagef("-%s: runs at once must be in [1, 256], got %d", jobsFlag, jobs)
	}
	if e.seed > math.MaxUint64-uint64(seeds) {
		return usagef("-seed: %d with -seeds %d runs past the last seed (allowed: -seed up to %d)", e.seed, seeds, uint64(math.MaxUint64-uint64(seeds)))
	}
	sides := []string{base, patch}
	feats := make([]emu.Features, 2)
	scheds := make([]emu.SchedSettings, 2)
	for i, spec := range sides {
		// The -sched flags apply to both sides, each side's own
		// ;sched: part under them.
		f, s, canon, err := parseKernelFlag("-"+[]string{"base", "patch"}[i], spec, e.sched)
		if err != nil {
			return err
		}
		feats[i], scheds[i], sides[i] = f, s, canon
	}
	// Validate the workload's flags once before the runs.
	if _, err := st.mk(st.m); err != nil {
		return workloadError(err)
	}
	lkpSrc, err := lkpSourceFor(st.spec.Name)
	if err != nil {
		return err
	}
	stop, unlisten := interrupts()
	defer unlisten()
	// The runs, seed by seed, base then patch; each a fresh workload
	// (its flags parsed again: declare binds them to these variables, so
	// all are built here, before any run starts).
	var runs []*compareRun
	for seed := e.seed; seed < e.seed+uint64(seeds); seed++ {
		for side := range 2 {
			w, err := freshWorkload(st, &e, declare, stderr)
			if err != nil {
				return err
			}
			cfg := runConfig(&e, st.m, feats[side])
			cfg.Sched = scheds[side]
			cfg.Seed = seed
			if jobs > 1 && cfg.Workers == 0 {
				// As sweep -j: the host's CPUs shared among the runs.
				cfg.Workers = max(1, runtime.GOMAXPROCS(0)/jobs)
			}
			runs = append(runs, &compareRun{side: side, w: w, cfg: cfg, lkpSrc: lkpSrc, done: make(chan struct{})})
		}
	}
	wait := study.InOrder(jobs, len(runs), stop, func(i int, halt <-chan struct{}) {
		r := runs[i]
		if study.Halted(halt) {
			r.interrupted = true
		} else {
			r.run(halt, st.spec.Name)
		}
		close(r.done)
	})
	defer wait()
	results := make([][]sample, 2)
	// Collected in order, so the progress lines and the table are the
	// same whatever -j is.
	for _, r := range runs {
		<-r.done
		if r.err != nil {
			return r.err
		}
		if r.interrupted {
			fmt.Fprintln(stderr)
			writeCompare(stdout, st, sides, results)
			return errInterrupted
		}
		results[r.side] = append(results[r.side], r.sample)
		if e.progress {
			m := r.sample.metrics
			fmt.Fprintf(stderr, "emu compare: %-5s seed %d: %s = %.6g (%.1f s host)\n",
				[]string{"base", "patch"}[r.side], r.cfg.Seed, m.Primary, m.Values[m.Primary], r.hostSec)
		}
	}
	writeCompare(stdout, st, sides, results)
	return nil
}

// compareRun is one run of compare: set up before the runs start, its
// results written by the goroutine that runs it before done closes.
type compareRun struct {
	side   int
	w      bench.Workload
	cfg    bench.RunConfig
	lkpSrc *bench.LKPSource // nil: the ports read the output
	done   chan struct{}

	sample      sample
	interrupted bool
	err         error
	hostSec     float64
}

// run executes the run and reads its numbers.
func (r *compareRun) run(stop <-chan struct{}, workload string) {
	cfg := r.cfg
	cfg.Stop = stop
	t0 := time.Now()
	res, err := bench.Execute(r.w, cfg)
	r.hostSec = time.Since(t0).Seconds()
	switch {
	case err != nil:
		r.err = workloadError(err)
		return
	case res.Interrupted:
		r.interrupted = true
		return
	case !res.Complete:
		r.err = unfinished(r.w)
		return
	}
	m := r.w.Metrics(res.Sim)
	var report strings.Builder
	if err := r.w.Report(&report, res.Sim); err != nil {
		r.err = err
		return
	}
	prof := map[string]float64{}
	for _, p := range res.Sim.Profile(nil) {
		prof[p.Symbol] = p.Percent
	}
	var lkp map[string]float64
	if r.lkpSrc == nil {
		lkp = bench.LKPStats(workload, report.String())
	} else if lkp, err = r.lkpSrc.Stats(workload, report.String()); err != nil {
		r.err = err
		return
	}
	r.sample = sample{metrics: m, lkp: lkp, counters: res.Sim.Counters(), profile: prof}
}

// lkpSourceFor opens $LKP_SRC for the workloads' parsers; nil when it is
// not set. A wrong LKP_SRC is bad input (exit 2).
func lkpSourceFor(workloads ...string) (*bench.LKPSource, error) {
	dir := os.Getenv("LKP_SRC")
	if dir == "" {
		return nil, nil
	}
	src, err := bench.OpenLKPSource(dir, workloads...)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	return src, nil
}

// workloadHasFlag reports whether workload name declares flag f.
func workloadHasFlag(name, f string) bool {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if _, err := bench.Declare(fs, name); err != nil {
		return false
	}
	return fs.Lookup(f) != nil
}

func freshWorkload(st *setup, e *engineFlags, declare func(*flag.FlagSet), stderr io.Writer) (bench.Workload, error) {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	declare(fs)
	cmd, err := bench.Declare(fs, st.spec.Name)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	if err := cmd.Parse(st.args); err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	w, err := cmd.Build(st.m)
	if err != nil {
		return nil, workloadError(err)
	}
	return w, nil
}

// lkpMeanStd is the mean and lkp's standard deviation (the population
// one, lib/statistics.rb; -1 for a single value, as compare.rb has it).
func lkpMeanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, -1
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)))
}

// compare.rb's column widths (Compare::ABS_WIDTH, REL_WIDTH, ERR_WIDTH).
const (
	absWidth = 10
	relWidth = 10
	errWidth = 6
)

// lkpAvg is show_perf_change()'s value: %.2f under 1000, %.4g over 1e8,
// else %d (Ruby truncates the float).
func lkpAvg(v float64) string {
	switch a := math.Abs(v); {
	case a < 1000:
		return fmt.Sprintf("%*.2f", absWidth, v)
	case a > 100_000_000:
		return fmt.Sprintf("%*.4g", absWidth, v)
	}
	return fmt.Sprintf("%*d", absWidth, int64(v))
}

// lkpStd is its ±stddev% (shown above 2%).
func lkpStd(avg, std float64) string {
	if avg != 0 {
		std = 100 * std / avg
	}
	if std > 2 {
		return fmt.Sprintf(" ±%*d%%", errWidth-3, int64(std))
	}
	return strings.Repeat(" ", errWidth)
}

// lkpChange is its change column: %+.1f (%.2g from 100000), in percent
// or, for perf-profile and other percentage stats, in points.
func lkpChange(p float64, abs bool) string {
	f := fmt.Sprintf("%+*.1f", relWidth, p)
	if math.Abs(p) >= 100_000 {
		f = fmt.Sprintf("%+*.2g", relWidth, p)
	}
	if abs {
		return f + "  "
	}
	return f + "% "
}

// writeCompare prints the table as lkp-tests' compare.rb show_group()
// does for two commits, with the feature sets in the commits' place and
// the run's settings as the common axes.
func writeCompare(w io.Writer, st *setup, sides []string, results [][]sample) {
	n := min(len(results[0]), len(results[1]))
	if n == 0 {
		fmt.Fprintln(w, "no complete pair of runs")
		return
	}
	keys, vals := []string{"tbox_group", "testcase"}, []string{st.m.Name, st.spec.Name}
	for _, a := range st.wargs {
		k, v, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		keys, vals = append(keys, k), append(vals, v)
	}
	keys, vals = append(keys, "seeds"), append(vals, fmt.Sprint(n))
	fmt.Fprintln(w, strings.Repeat("=", 89))
	fmt.Fprintf(w, "%s:\n  %s\n\n", strings.Join(keys, "/"), strings.Join(vals, "/"))
	fmt.Fprintf(w, "features: \n  %s\n  %s\n\n", sides[0], sides[1])
	first := absWidth + errWidth
	width := first + relWidth + 1
	fmt.Fprintf(w, "%*s %*s \n", first, sides[0][:min(len(sides[0]), first)], width, sides[1][:min(len(sides[1]), width)])
	fmt.Fprintf(w, "%s %s \n", strings.Repeat("-", first), strings.Repeat("-", width))
	fmt.Fprintf(w, "         %%stddev     %%change         %%stddev\n")
	fmt.Fprintf(w, "             \\          |                \\  \n")
	row := func(name string, get func(sample) (float64, bool)) {
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
		ma, sa := lkpMeanStd(a)
		mb, sb := lkpMeanStd(b)
		// calc_perf_change(): points for perf-profile and % stats, else
		// percent of the base (a zero base counts as 1e-100).
		abs := strings.HasPrefix(name, "perf-profile") || strings.HasSuffix(name, "%")
		change := mb - ma
		if !abs {
			base := ma
			if base == 0 {
				base = 1e-100
			}
			change = 100 * (mb - base) / base
		}
		fmt.Fprintf(w, "%s%s%s%s%s  %s\n", lkpAvg(ma), lkpStd(ma, sa), lkpChange(change, abs), lkpAvg(mb), lkpStd(mb, sb), name)
	}
	lkpKeys := map[string]bool{}
	for i := 0; i < n; i++ {
		for k := range results[0][i].lkp {
			lkpKeys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(lkpKeys)) {
		row(k, func(s sample) (float64, bool) { v, ok := s.lkp[k]; return v, ok })
	}
	m0 := results[0][0].metrics
	prefix := "rqemu." + st.spec.Name + "."
	keys = []string{m0.Primary}
	var rest []string
	for k := range m0.Values {
		if k != m0.Primary {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range append(keys, rest...) {
		row(prefix+k, func(s sample) (float64, bool) { v, ok := s.metrics.Values[k]; return v, ok })
	}
	for _, k := range counterRows {
		name, ok := lkpCounterNames[k]
		if !ok {
			name = "rqemu." + k
		}
		row(name, func(s sample) (float64, bool) { v, ok := s.counters[k]; return v, ok })
	}
	for _, sym := range profileRows {
		row("perf-profile.self.cycles-pp."+sym, func(s sample) (float64, bool) { v, ok := s.profile[sym]; return v, ok })
	}
	fmt.Fprintln(w)
}
