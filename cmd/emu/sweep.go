package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/study"
	"golang.org/x/sys/unix"
)

func init() {
	commands = append(commands,
		command{"sweep", "expand a parameter grid into runs: print them (GNU parallel, Slurm array) or run them here", runSweep},
		command{"merge", "merge NDJSON results (emu run/reproduce/sweep -o) into compare tables", runMerge},
		command{"plot", "plot NDJSON results: a metric over a sweep axis, or latency CDFs (PNG, SVG)", runPlot})
}

const sweepUsage = `usage: emu sweep [-print | -slurm | -count | -index I | -j N] [-o FILE.ndjson | -o DIR/]
                 [-topo A,B] [-features F1|F2] [-sched NAME=V1,V2]... [-seeds N] [engine flags]
                 -workload NAME [workload flags; a comma list is an axis]

Expands a grid into one emu run per point: the cross product of the
machines, the feature sets, every workload flag given a list of values,
and the seeds (innermost). Each run appends one NDJSON record to -o (a
file; or, for a DIR/ ending in a slash, DIR/run-NNNN.ndjson each), which
emu merge and emu plot read.

Lists: -topo and workload flags split on commas (or on "|" when a value
holds a comma: -r '1,1|64,64'; a flag whose default has a comma, such as
netperf's -r, splits on "|" only). -features splits on "|"; without one,
"PROFILE,+X,-Y" is the list PROFILE, PROFILE,+X, PROFILE,-Y (each edit
alone against the profile), so -features v6.6-eevdf,+TG_LOAD_RATELIMIT
is base vs patch. Each -sched NAME=V1,V2,... is a tunable axis (one knob
per flag) crossed with the feature sets; a feature set with its own
;sched: part is one set (list several with "|").

modes:
  (none)    run every point here, -j at a time, with a progress line
  -print    print one emu run command per line (for GNU parallel, xargs)
  -count    print the number of points
  -index I  run point I only (0-based: a Slurm array task, an xargs job)
  -slurm    print an sbatch script running the grid as a job array, each
            task with -slurm-time (default 1:00:00) and -slurm-mem (2G):
            set them from one point's host_seconds and memory

examples:
  emu sweep -topo spr-2s,icl-2s -features v6.6-eevdf,+TG_LOAD_RATELIMIT -seeds 3 \
      -o udprr.ndjson -workload netperf -t UDP_RR -nr 25%,50%,75%,100% -l 0.002 -cgroup docker
  emu sweep -print -emu bin/emu -o out/ GRID... | parallel -j 8
  seq 0 $(( $(emu sweep -count GRID...) - 1 )) | xargs -P 2 -I{} emu sweep -index {} -o out/ GRID...
  emu sweep -slurm -slurm-time 0:30:00 -slurm-mem 1G -o out/ GRID... > sweep.sbatch && sbatch sweep.sbatch
  emu merge out/ && emu plot out/ -x nr -y netperf.throughput_per_client -by features -o udprr.png`

// sweep is a parsed grid.
type sweep struct {
	topos    []string
	features []string
	workload string
	// axes are the workload flags in the order given, each with its
	// values (one value: a fixed flag).
	axes  []sweepAxis
	seed  uint64
	seeds int
}

type sweepAxis struct {
	name   string
	values []string
	isBool bool
}

// job is one point of the grid.
type job struct {
	index int
	run   study.Run
	seed  uint64
}

// jobs expands the grid: topo, features, the workload axes in order,
// then the seed, the last varying fastest.
func (s *sweep) jobs() []job {
	var out []job
	idx := make([]int, len(s.axes))
	for _, topo := range s.topos {
		for _, feat := range s.features {
			for i := range idx {
				idx[i] = 0
			}
			for {
				var args []string
				for i, a := range s.axes {
					args = append(args, "-"+a.name+"="+a.values[idx[i]])
				}
				for k := range s.seeds {
					out = append(out, job{index: len(out), seed: s.seed + uint64(k),
						run: study.Run{Topo: topo, Features: feat, Workload: s.workload, Args: args}})
				}
				// the next combination, the last axis fastest
				i := len(idx) - 1
				for ; i >= 0; i-- {
					idx[i]++
					if idx[i] < len(s.axes[i].values) {
						break
					}
					idx[i] = 0
				}
				if i < 0 {
					break
				}
			}
		}
	}
	return out
}

// maxSweepPoints bounds a grid that is printed or run (-count only
// multiplies): a job per point is held in memory, and 100,000 runs are
// far beyond what a sweep on one host, or a Slurm array, runs.
const maxSweepPoints = 100_000

// count is the number of points, computed without building the grid;
// ok is false when it is past maxSweepPoints (n is then a lower bound,
// or math.MaxInt when the product overflows).
func (s *sweep) count() (n int, ok bool) {
	n = 1
	factors := []int{len(s.topos), len(s.features), s.seeds}
	for _, a := range s.axes {
		factors = append(factors, len(a.values))
	}
	for _, f := range factors {
		if f != 0 && n > math.MaxInt/f {
			return math.MaxInt, false
		}
		n *= f
	}
	return n, n <= maxSweepPoints
}

// validate builds the workload of the grid's points on each machine
// before anything runs or is printed, so a bad value is an error here
// rather than a failed point later: every point of a grid of at most
// maxValidated distinct command lines, else each value of each axis with
// the other axes at their first value (simplified: a value that fails
// only in combination with another axis's then fails at its point).
func (s *sweep) validate() error {
	for _, f := range s.features {
		if _, _, _, err := parseKernelFlag("-features", f, nil); err != nil {
			return err
		}
	}
	var argSets [][]string
	first := make([]string, len(s.axes))
	for i, a := range s.axes {
		first[i] = "-" + a.name + "=" + a.values[0]
	}
	lines := 1
	for _, a := range s.axes {
		lines *= len(a.values)
		if lines > maxValidated {
			break
		}
	}
	if lines <= maxValidated {
		for _, j := range (&sweep{topos: s.topos[:1], features: s.features[:1], workload: s.workload, axes: s.axes, seeds: 1}).jobs() {
			argSets = append(argSets, j.run.Args)
		}
	} else {
		argSets = append(argSets, first)
		for i, a := range s.axes {
			for _, v := range a.values[1:] {
				args := append([]string(nil), first...)
				args[i] = "-" + a.name + "=" + v
				argSets = append(argSets, args)
			}
		}
	}
	for _, topo := range s.topos {
		m, err := hwmodel.Load(topo, hwmodel.LoadOptions{})
		if err != nil {
			return fmt.Errorf("-topo: %w", err)
		}
		for _, args := range argSets {
			if _, err := bench.Build(s.workload, args, m); err != nil {
				var pe *bench.ParseError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return usagef("sweep: the point %s on %s: %v", strings.Join(args, " "), topo, err)
			}
		}
	}
	return nil
}

// maxValidated bounds the command lines validate builds one by one.
const maxValidated = 1000

// checkSweepOut checks -o before anything runs: a file that can be
// appended to, or (DIR/, or an existing directory) a directory that is,
// or can be created, writable; openNDJSON creates missing directories.
func checkSweepOut(out string) error {
	st, err := os.Stat(out)
	isDir := strings.HasSuffix(out, "/") || (err == nil && st.IsDir())
	dir := filepath.Clean(out)
	if !isDir {
		dir = filepath.Dir(dir)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return checkOutputs([][2]string{{"-o", out}})
		}
	}
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return usagef("-o: %s is not a directory (allowed: a FILE.ndjson, or DIR/ for one file per point)", dir)
			}
			if err := unix.Access(dir, unix.W_OK); err != nil {
				return usagef("-o: cannot write in %s: %v", dir, err)
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return usagef("-o: cannot create %s", out)
		}
		dir = parent
	}
}

// splitList splits an axis value: on "|" when it has one, else on
// commas unless commas belong to the value.
func splitList(v string, commas bool) []string {
	sep := ","
	if strings.Contains(v, "|") || !commas {
		sep = "|"
	}
	var out []string
	for _, p := range strings.Split(v, sep) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitFeatures reads -features: "A|B" is A and B; "P,+X,-Y" is P,
// P,+X and P,-Y; "P,Q" two profiles; a set with a ;sched: part is one
// set (list several with "|").
func splitFeatures(v string) []string {
	if strings.Contains(v, "|") || strings.Contains(v, ";") {
		return splitList(v, false)
	}
	var out []string
	cur := ""
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
		case strings.HasPrefix(p, "+") || strings.HasPrefix(p, "-"):
			if cur == "" {
				cur = "v6.6-eevdf"
				out = append(out, cur)
			}
			out = append(out, cur+","+p)
		default:
			cur = p
			out = append(out, p)
		}
	}
	return out
}

// sweepOpts are sweep's own flags.
type sweepOpts struct {
	print, slurm, count bool
	slurmTime, slurmMem string
	index               int
	jobs                int
	out                 string
	emu                 string
	topo, features      string
	sched               schedFlag
	e                   engineFlags
	seeds               int
}

func (o *sweepOpts) declare(fs *flag.FlagSet) {
	fs.BoolVar(&o.print, "print", false, "print one emu run command per point")
	fs.BoolVar(&o.slurm, "slurm", false, "print an sbatch script: a job array of the points")
	fs.StringVar(&o.slurmTime, "slurm-time", "1:00:00", "-slurm: each array task's --time limit (`[D-]HH:MM:SS` or minutes)")
	fs.StringVar(&o.slurmMem, "slurm-mem", "2G", "-slurm: each array task's --mem (`N[K|M|G|T]`)")
	fs.BoolVar(&o.count, "count", false, "print the number of points")
	fs.IntVar(&o.index, "index", -1, "run only point I (0-based)")
	fs.IntVar(&o.jobs, "j", 1, "runs at a time when running here")
	fs.StringVar(&o.out, "o", "", "NDJSON output: FILE (appended), or DIR/ for one file per point")
	fs.StringVar(&o.emu, "emu", "emu", "the emu binary the printed commands call")
	fs.StringVar(&o.topo, "topo", "spr-2s", "machines, comma-separated")
	fs.StringVar(&o.features, "features", "v6.6-eevdf", `feature sets: "A|B", or "PROFILE,+X,-Y" for PROFILE, PROFILE,+X and PROFILE,-Y`)
	fs.Var(&o.sched, "sched", "a tunable axis `NAME=V1,V2,...` (one knob per flag, repeatable; crossed with the feature sets; emu features lists the knobs)")
	fs.StringVar(&o.e.workload, "workload", "hackbench", "workload: "+strings.Join(bench.Names(), ", "))
	fs.Uint64Var(&o.e.seed, "seed", 1, "first seed")
	fs.IntVar(&o.seeds, "seeds", 1, "seeds per point")
	fs.StringVar(&o.e.driver, "driver", "parallel", "engine driver: parallel or serial")
	fs.DurationVar(&o.e.epoch, "epoch", 0, "epoch length (0: the exact lookahead)")
}

// parseSweep reads sweep's flags and the workload's, which may mix.
func parseSweep(args []string, stderr io.Writer) (*sweep, *sweepOpts, error) {
	o := &sweepOpts{}
	fs := newFlags("sweep", sweepUsage, stderr)
	o.declare(fs)
	wname := workloadName(args, "hackbench")
	wfs := flag.NewFlagSet(wname, flag.ContinueOnError)
	wfs.SetOutput(io.Discard)
	if _, err := bench.Declare(wfs, wname); err != nil {
		return nil, nil, &usageError{msg: err.Error()}
	}
	var own []string
	sw := &sweep{workload: wname}
	seen := map[string]int{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "-help" || a == "--help" {
			fs.Usage()
			return nil, nil, flag.ErrHelp
		}
		if a == "--" {
			continue // netperf's test-specific options share the flag set
		}
		if len(a) < 2 || a[0] != '-' {
			return nil, nil, usagef("sweep: unexpected argument %q (flags only)", a)
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isBool := func(f *flag.Flag) bool {
			b, ok := f.Value.(interface{ IsBoolFlag() bool })
			return ok && b.IsBoolFlag()
		}
		if f := fs.Lookup(name); f != nil {
			if !hasVal && !isBool(f) {
				if i+1 >= len(args) {
					return nil, nil, usagef("sweep: flag needs an argument: -%s", name)
				}
				i++
				val, hasVal = args[i], true
			}
			if hasVal {
				own = append(own, "-"+name+"="+val)
			} else {
				own = append(own, "-"+name)
			}
			continue
		}
		f := wfs.Lookup(name)
		if f == nil {
			return nil, nil, usagef("sweep: flag provided but not defined: -%s (sweep's flags and workload %s's: %s)", name, wname, wflagNames(wfs))
		}
		if !hasVal {
			if isBool(f) {
				val = "true"
			} else {
				if i+1 >= len(args) {
					return nil, nil, usagef("sweep: flag needs an argument: -%s", name)
				}
				i++
				val = args[i]
			}
		}
		ax := sweepAxis{name: f.Name, isBool: isBool(f), values: splitList(val, !strings.Contains(f.DefValue, ","))}
		if len(ax.values) == 0 {
			return nil, nil, usagef("-%s: empty list", name)
		}
		for _, v := range ax.values {
			if err := wfs.Set(f.Name, v); err != nil {
				return nil, nil, usagef("-%s: %q: %v", name, v, err)
			}
		}
		if j, dup := seen[f.Name]; dup {
			sw.axes[j] = ax
		} else {
			seen[f.Name] = len(sw.axes)
			sw.axes = append(sw.axes, ax)
		}
	}
	if err := parse(fs, own); err != nil {
		return nil, nil, err
	}
	if err := checkDriver(o.e.driver); err != nil {
		return nil, nil, err
	}
	if o.e.epoch < 0 || o.e.epoch > maxEpoch {
		return nil, nil, usagef("-epoch: %v is out of range", o.e.epoch)
	}
	if o.seeds < 1 || o.seeds > 1000 {
		return nil, nil, usagef("-seeds: must be in [1, 1000], got %d", o.seeds)
	}
	if o.e.seed > math.MaxUint64-uint64(o.seeds) {
		return nil, nil, usagef("-seed: %d with -seeds %d runs past the last seed", o.e.seed, o.seeds)
	}
	if o.jobs < 1 || o.jobs > 1024 {
		return nil, nil, usagef("-j: must be in [1, 1024], got %d", o.jobs)
	}
	modes := 0
	for _, b := range []bool{o.print, o.slurm, o.count, o.index >= 0} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		return nil, nil, usagef("sweep: -print, -slurm, -count and -index exclude each other")
	}
	if err := checkSlurmLimits(o.slurmTime, o.slurmMem); err != nil {
		return nil, nil, err
	}
	sw.topos = splitList(o.topo, true)
	sw.features = splitFeatures(o.features)
	if len(sw.topos) == 0 || len(sw.features) == 0 {
		return nil, nil, usagef("sweep: -topo and -features need at least one value")
	}
	feats, err := expandSched(sw.features, o.sched)
	if err != nil {
		return nil, nil, err
	}
	sw.features = feats
	sw.seed, sw.seeds = o.e.seed, o.seeds
	return sw, o, nil
}

// outFor is the NDJSON file of point i.
func (o *sweepOpts) outFor(i int) string {
	if strings.HasSuffix(o.out, "/") {
		return filepath.Join(o.out, fmt.Sprintf("run-%04d.ndjson", i))
	}
	if st, err := os.Stat(o.out); err == nil && st.IsDir() {
		return filepath.Join(o.out, fmt.Sprintf("run-%04d.ndjson", i))
	}
	return o.out
}

// command is point j as an emu run command line.
func (o *sweepOpts) command(j job) string {
	parts := []string{study.ShellQuote(o.emu), "run", "-progress=false", "-topo", study.ShellQuote(j.run.Topo),
		"-features", study.ShellQuote(j.run.Features), "-seed", fmt.Sprint(j.seed)}
	if o.e.driver != "parallel" {
		parts = append(parts, "-driver", o.e.driver)
	}
	if o.e.epoch != 0 {
		parts = append(parts, "-epoch", o.e.epoch.String())
	}
	if o.out != "" {
		parts = append(parts, "-o", study.ShellQuote(o.outFor(j.index)))
	}
	parts = append(parts, "-workload", j.run.Workload)
	for _, a := range j.run.Args {
		parts = append(parts, study.ShellQuote(a))
	}
	return strings.Join(parts, " ") + " >/dev/null"
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	sw, o, err := parseSweep(args, stderr)
	if err != nil {
		return err
	}
	n, ok := sw.count()
	if o.count {
		if n == math.MaxInt {
			return usagef("sweep: the grid has more than %d points", math.MaxInt)
		}
		fmt.Fprintln(stdout, n)
		return nil
	}
	if !ok {
		return usagef("sweep: the grid has %s points, more than the %d allowed (-count prints the number; split the grid)", countString(n), maxSweepPoints)
	}
	running := !o.print && !o.slurm
	if running && o.out == "" {
		return usagef("sweep: -o FILE.ndjson or -o DIR/ is needed to run the points (or -print them)")
	}
	if running && o.index >= n {
		return usagef("-index: %d is out of range (the grid has %d points: 0..%d)", o.index, n, n-1)
	}
	if err := sw.validate(); err != nil {
		return err
	}
	if running {
		if err := checkSweepOut(o.out); err != nil {
			return err
		}
	}
	jobs := sw.jobs()
	switch {
	case o.print:
		for _, j := range jobs {
			fmt.Fprintln(stdout, o.command(j))
		}
		return nil
	case o.slurm:
		writeSlurm(stdout, o, args, len(jobs))
		return nil
	}
	if o.index >= 0 {
		jobs = jobs[o.index : o.index+1]
	}
	return runJobs(jobs, n, o, stderr)
}

// countString is a point count, or "more than MaxInt" when it overflowed.
func countString(n int) string {
	if n == math.MaxInt {
		return fmt.Sprintf("more than %d", n)
	}
	return fmt.Sprint(n)
}

// runJobs runs points here, o.jobs at a time, with a progress line.
func runJobs(jobs []job, of int, o *sweepOpts, stderr io.Writer) error {
	stop, unlisten := interrupts()
	defer unlisten()
	workers := 0
	if o.jobs > 1 {
		workers = max(1, runtime.GOMAXPROCS(0)/o.jobs)
	}
	eng := study.Engine{Driver: o.e.driver, Epoch: int64(o.e.epoch), Workers: workers, Stop: stop}
	writers := map[string]*ndjsonWriter{}
	var mu sync.Mutex
	var firstErr error
	// written counts the records written, failed the points that ended
	// without one (an error, an interrupt).
	written, failed, running := 0, 0, 0
	t0 := time.Now()
	status := newStatusLine(stderr)
	report := func(final bool) {
		el := time.Since(t0)
		eta := "?"
		if done := written + failed; done > 0 {
			eta = (time.Duration(float64(el) / float64(done) * float64(len(jobs)-done))).Round(time.Second).String()
		}
		fails := ""
		if failed > 0 {
			fails = fmt.Sprintf(", %d without a record", failed)
		}
		status.show(fmt.Sprintf("emu sweep: %d/%d written, %d running%s, %s host, ETA %s", written, len(jobs), running, fails, el.Round(100*time.Millisecond), eta), final)
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for range min(o.jobs, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				mu.Lock()
				running++
				report(false)
				mu.Unlock()
				out, err := study.Execute(j.run, j.seed, eng)
				if err == nil && out.Interrupted {
					err = errInterrupted
				}
				if err == nil && !out.Complete {
					err = fmt.Errorf("point %d (%s, seed %d) did not finish within its bound", j.index, j.run.CommandLine(), j.seed)
				}
				mu.Lock()
				running--
				if err == nil {
					rec := newRecord(out, o.e.driver)
					rec.Sweep = &recordSweep{Index: j.index, Of: of}
					path := o.outFor(j.index)
					w := writers[path]
					if w == nil {
						if w, err = openNDJSON(path); err == nil {
							writers[path] = w
						}
					}
					if err == nil {
						err = w.write(rec)
					}
				}
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("point %d: %w", j.index, err)
				}
				if err == nil {
					written++
				} else {
					failed++
				}
				report(false)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	report(true)
	for _, w := range writers {
		if err := w.close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if errors.Is(firstErr, errInterrupted) {
		return errInterrupted
	}
	return firstErr
}

// wflagNames lists a workload's flags.
func wflagNames(fs *flag.FlagSet) string {
	var n []string
	fs.VisitAll(func(f *flag.Flag) { n = append(n, "-"+f.Name) })
	return strings.Join(n, " ")
}

// expandSched crosses the feature sets with the -sched axes (one knob per
// flag, its values a list, the last axis varying fastest) into canonical
// feature specs (emu.ParseKernel), each checked: a bad name, value or
// knob for a set's kernel is bad input before anything runs.
func expandSched(features, axes []string) ([]string, error) {
	type axis struct {
		name string
		vals []string
	}
	var list []axis
	for _, a := range axes {
		name, vals, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, usagef("-sched: %q is not NAME=V1,V2,... (allowed names: %s)", a, strings.Join(emu.KnobNames(), ", "))
		}
		for _, p := range list {
			if p.name == name {
				return nil, usagef("-sched: %s given twice (one flag per knob; list its values in it)", name)
			}
		}
		vs := splitList(vals, true)
		if len(vs) == 0 {
			return nil, usagef("-sched: %s: empty list", name)
		}
		list = append(list, axis{name, vs})
	}
	var out []string
	for _, f := range features {
		idx := make([]int, len(list))
		for {
			var extra []string
			for i, a := range list {
				extra = append(extra, a.name+"="+a.vals[idx[i]])
			}
			_, _, canon, err := parseKernelFlag("-features", f, extra)
			if err != nil {
				return nil, err
			}
			out = append(out, canon)
			i := len(idx) - 1
			for ; i >= 0; i-- {
				if idx[i]++; idx[i] < len(list[i].vals) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	return out, nil
}
