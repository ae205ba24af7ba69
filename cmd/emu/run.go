package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

const runUsage = `usage: emu run [-topo NAME|FILE] [-features PROFILE[,+X,-X]] [-sched NAME=VALUE]...
               [engine flags] [-workload NAME] [workload flags]

Runs a workload on an emulated machine and prints its result the way the
real tool does. Engine and workload flags may come in any order; -h after
-workload NAME lists that workload's flags. Workload flags are read as the
real tool reads them: -g2 and -Tp as getopt does, --name=value long options.

defaults: -topo spr-2s -features v6.6-eevdf -workload hackbench (10 groups
of 20 senders and 20 receivers, 100 loops: hackbench's own defaults).

examples:
  emu run
  emu run -topo spr-2s -workload netperf -t UDP_RR -nr 100%% -l 0.05 -cgroup docker
  emu run -topo epyc-9654-2s -features v6.6-eevdf,+TTWU_QUEUE_L2 -workload hackbench -g 32 -f 20 -T -p -l 200
  emu run -topo hikey-8 -workload schbench -m 2 -t 4 -r 2 -profile -schedstat sched.txt
  emu run -topo icl-2s -sched base_slice_ns=2800000 -workload hackbench -g 8 -l 100
  emu run -topo host -workload pipe -l 200000 -json > run.json
  emu run -workload rtapp -f my-load.json -trace run.trace   # Perfetto: open run.trace

workloads:
%s`

// engineFlags are the flags of run and compare that are not the workload's.
type engineFlags struct {
	topo, features, workload, calib string
	seed                            uint64
	epoch                           time.Duration
	driver                          string
	workers                         int
	pin, check                      bool
	progress                        bool
	sched                           schedFlag
}

func (e *engineFlags) declare(fs *flag.FlagSet, withFeatures bool) {
	fs.StringVar(&e.topo, "topo", "spr-2s", "machine: a preset ("+strings.Join(hwmodel.PresetNames(), ", ")+": this machine) or a spec FILE")
	fs.StringVar(&e.calib, "calib", "", "calibration FILE applied to the host preset (emu calibrate -o)")
	if withFeatures {
		fs.StringVar(&e.features, "features", emu.DefaultProfile, "kernel profile with +FEATURE/-FEATURE edits (emu features lists them), then optionally ;sched:NAME=VALUE,... tunables")
	}
	fs.Var(&e.sched, "sched", schedUsage+strings.Join(emu.KnobNames(), ", "))
	fs.StringVar(&e.workload, "workload", "hackbench", "workload: "+strings.Join(bench.Names(), ", "))
	fs.Uint64Var(&e.seed, "seed", 1, "PRNG seed: same seed and flags, same bytes out")
	fs.DurationVar(&e.epoch, "epoch", 0, "epoch length (0: the machine's lookahead, the exact schedule); larger is faster and approximate")
	fs.StringVar(&e.driver, "driver", "parallel", "engine driver: parallel (goroutines step CPUs concurrently) or serial (the reference); same bytes")
	fs.IntVar(&e.workers, "workers", 0, "parallel driver goroutines (0: one per allowed host CPU)")
	fs.BoolVar(&e.pin, "pin", false, "pin the parallel driver's goroutines to host CPUs")
	fs.BoolVar(&e.check, "check", false, "run the conservation checks at every barrier (slower; panics on a broken invariant)")
	fs.BoolVar(&e.progress, "progress", true, "print a progress line on stderr for runs longer than a few seconds")
}

// runFlags are run's output flags.
type runFlags struct {
	engineFlags
	json                               bool
	schedstat, taskstats, schedDebug   string
	profile                            bool
	profileCPUs, perfScript, pprofFile string
	lines                              int
	trace                              string
	traceWindow                        time.Duration
	windowFrom, windowTo, interval     time.Duration
	cpuprofile, fgprofFile, memFile    string
	ndjson                             string
}

// engineNames are the flags declared on fs so far: the engine's, before
// the workload declares its own.
func engineNames(fs *flag.FlagSet) map[string]bool {
	engine := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { engine[f.Name] = true })
	return engine
}

// workloadValues lists the -workload values in args, in order (the first
// decides which flags the rest of args may hold).
func workloadValues(args []string) []string {
	var seen []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, p := range []string{"-workload", "--workload"} {
			if a == p && i+1 < len(args) {
				seen = append(seen, args[i+1])
			} else if v, ok := strings.CutPrefix(a, p+"="); ok {
				seen = append(seen, v)
			}
		}
	}
	return seen
}

// workloadName is the -workload value in args, or def.
func workloadName(args []string, def string) string {
	if v := workloadValues(args); len(v) > 0 {
		return v[0]
	}
	return def
}

// setup is a parsed run or compare: the machine, the workload constructor
// and the flags.
type setup struct {
	m    *hwmodel.Machine
	spec bench.Spec
	mk   func(*hwmodel.Machine) (bench.Workload, error)
	args []string
	// wargs are the workload's flags as parsed, -name=value (for
	// titles); given are its arguments as given (for its own files).
	wargs, given []string
}

// parseWithWorkload declares the engine flags (by declare) and the
// workload's on one flag set and parses args.
func parseWithWorkload(name, usage string, args []string, stderr io.Writer, e *engineFlags, declare func(fs *flag.FlagSet)) (*setup, error) {
	wname := workloadName(args, "hackbench")
	if err := onceWorkload(args); err != nil {
		return nil, err
	}
	explicit := workloadName(args, "") != ""
	fs := newFlags(name, "", stderr)
	declare(fs)
	engine := engineNames(fs)
	cmd, err := bench.Declare(fs, wname)
	if err != nil {
		return nil, &usageError{msg: err.Error()}
	}
	spec := cmd.Spec
	fs.Usage = func() { workloadUsage(stderr, usage, fs, engine, spec, explicit) }
	if err := quietParse(fs, " -workload "+wname, func() error { return cmd.Parse(args) }); err != nil {
		var ae *bench.ArgError
		switch {
		case errors.Is(err, flag.ErrHelp):
			return nil, flag.ErrHelp
		case errors.As(err, &ae):
			return nil, usagef("%s: unexpected argument %q (flags only; workload %s takes: %s)", name, ae.Arg, wname, flagNames(fs, engine))
		}
		return nil, err
	}
	var wargs []string
	fs.Visit(func(f *flag.Flag) {
		if !engine[f.Name] {
			wargs = append(wargs, "-"+f.Name+"="+f.Value.String())
		}
	})
	if err := checkDriver(e.driver); err != nil {
		return nil, err
	}
	if e.epoch < 0 || e.epoch > maxEpoch {
		return nil, usagef("-epoch: %v is out of range (allowed: 0, the exact lookahead, up to %v)", e.epoch, maxEpoch)
	}
	if e.workers < 0 {
		return nil, usagef("-workers: must not be negative, got %d", e.workers)
	}
	m, err := hwmodel.Load(e.topo, hwmodel.LoadOptions{Calib: e.calib, Hammer: weave.PredictHammer})
	if err != nil {
		return nil, err
	}
	warnEpoch(stderr, e.epoch, m)
	return &setup{m: m, spec: spec, mk: cmd.Build, args: args, wargs: wargs, given: givenArgs(fs, engine, args)}, nil
}

// checkDriver is the one check of a -driver value (run, compare,
// reproduce, sweep).
func checkDriver(d string) error {
	if d != "parallel" && d != "serial" {
		return usagef("-driver: %q is not a driver (allowed: parallel, serial)", d)
	}
	return nil
}

// givenArgs are the workload's own arguments in args, as given: args
// without the engine's flags and their values.
func givenArgs(fs *flag.FlagSet, engine map[string]bool, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 1 && a[0] == '-' {
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if f := fs.Lookup(name); f != nil && engine[name] {
				if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool && !hasValue {
					i++
				}
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// workloadUsage is run's and compare's -h: the command's usage, the
// workloads (only the one given with -workload NAME), then the engine's
// flags and the workload's, in two groups.
func workloadUsage(w io.Writer, usage string, fs *flag.FlagSet, engine map[string]bool, spec bench.Spec, explicit bool) {
	list := workloadList()
	if explicit {
		list = workloadEntry(spec)
	}
	fmt.Fprintf(w, usage+"\n", list)
	fmt.Fprintln(w, "engine flags:")
	printFlags(w, fs, func(n string) bool { return engine[n] })
	title := spec.Name
	if !explicit {
		title += ", the default; -workload NAME -h lists another's"
	}
	if spec.ArgsUsage != "" {
		title += "; then, anywhere among them: " + spec.ArgsUsage
	}
	fmt.Fprintf(w, "\nworkload flags (%s):\n", title)
	printFlags(w, fs, func(n string) bool { return !engine[n] })
}

// printFlags prints fs's flags that keep selects as flag.PrintDefaults
// does, with one entry for the names of one flag (aliases: the same
// usage, default and type): a one-letter name first and its long names
// with "--", as the real tools' getopt_long spells them.
func printFlags(w io.Writer, fs *flag.FlagSet, keep func(string) bool) {
	type entry struct {
		names []string
		f     *flag.Flag
	}
	var entries []*entry
	byKey := map[string]*entry{}
	fs.VisitAll(func(f *flag.Flag) {
		if !keep(f.Name) {
			return
		}
		key := f.Usage + "\x00" + f.DefValue + "\x00" + fmt.Sprintf("%T", f.Value)
		if e, ok := byKey[key]; ok {
			e.names = append(e.names, f.Name)
			return
		}
		e := &entry{names: []string{f.Name}, f: f}
		byKey[key] = e
		entries = append(entries, e)
	})
	for _, e := range entries {
		sort.SliceStable(e.names, func(i, j int) bool { return len(e.names[i]) < len(e.names[j]) })
	}
	sort.SliceStable(entries, func(i, j int) bool {
		return strings.ToLower(entries[i].names[0]) < strings.ToLower(entries[j].names[0])
	})
	for _, e := range entries {
		var b strings.Builder
		b.WriteString("  ")
		short := len(e.names[0]) == 1
		for i, n := range e.names {
			if i > 0 {
				b.WriteString(", ")
			}
			if short && len(n) > 1 {
				b.WriteString("--")
			} else {
				b.WriteString("-")
			}
			b.WriteString(n)
		}
		typ, usage := flag.UnquoteUsage(e.f)
		if typ != "" {
			b.WriteString(" " + typ)
		}
		if b.Len() <= 4 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !isZeroValue(e.f) {
			if fmt.Sprintf("%T", e.f.Value) == "*flag.stringValue" {
				fmt.Fprintf(&b, " (default %q)", e.f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", e.f.DefValue)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// isZeroValue is the flag package's test for a default not worth
// printing: DefValue is what a new Value of the flag's type prints.
func isZeroValue(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	defer func() {
		if recover() != nil {
			zero = false
		}
	}()
	return f.DefValue == v.String()
}

func workloadList() string {
	var b strings.Builder
	for _, n := range bench.Names() {
		s, _ := bench.Lookup(n)
		b.WriteString(workloadEntry(s))
	}
	return b.String()
}

func workloadEntry(s bench.Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-10s %s\n", s.Name, s.Doc)
	for _, ex := range s.Examples {
		fmt.Fprintf(&b, "             %s\n", ex)
	}
	return b.String()
}

// flagNames lists the workload's flags (those not in engine).
func flagNames(fs *flag.FlagSet, engine map[string]bool) string {
	var n []string
	fs.VisitAll(func(f *flag.Flag) {
		if !engine[f.Name] {
			n = append(n, "-"+f.Name)
		}
	})
	return strings.Join(n, " ")
}

// workloadError turns a workload's flag error into a usage error (exit 2).
func workloadError(err error) error {
	var fe *bench.FlagError
	if errors.As(err, &fe) {
		return &usageError{msg: err.Error()}
	}
	return err
}

// interrupts is how run learns of Ctrl-C: a channel closed on the first
// SIGINT or SIGTERM (which caughtSignal then reports), and a function
// that stops listening. After the first signal the default action is
// back, so a second one ends the process at once. Tests replace it.
var interrupts = func() (<-chan struct{}, func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			if n, ok := sig.(syscall.Signal); ok {
				caught.Store(int32(n))
			}
			close(stop)
		case <-done:
		}
	}()
	return stop, func() { signal.Stop(ch); close(done) }
}

// errInterrupted is a run stopped by Ctrl-C or SIGTERM: its partial
// result was printed; the exit status is 128 + the signal (130 for
// SIGINT, 143 for SIGTERM).
var errInterrupted = errors.New("interrupted: the result above covers only the time run")

func runRun(args []string, stdout, stderr io.Writer) error {
	var f runFlags
	st, err := parseWithWorkload("run", runUsage, args, stderr, &f.engineFlags, f.declareRun)
	if err != nil {
		return err
	}
	p, err := planRun(&f, st, stdout, stderr)
	if err != nil {
		return err
	}
	res, hostSec, profErr, err := p.execute(stderr)
	if err != nil {
		return err
	}
	if err := p.report(stdout, res, hostSec); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "emu: %.3f s virtual in %.2f s host (%s, %s driver, seed %d)\n", float64(res.Sim.Now())/1e9, hostSec, st.m.Name, f.driver, f.seed)
	if win := res.Window; win != nil {
		c := win.Counters()
		to := "the first exit"
		if f.windowTo > 0 {
			to = "-window-to"
		}
		fmt.Fprintf(stderr, "emu: window %.3f-%.3f s (-window-from to %s): %.0f context switches/s, %.0f migrations/s, %.0f wakeups/s",
			c["run.window_from_sec"], c["run.window_to_sec"], to, c["rate.context_switches_per_sec"], c["rate.migrations_per_sec"], c["rate.wakeups_per_sec"])
		if lkp := win.LKP(res.Workload); lkp != nil {
			for _, k := range slices.Sorted(maps.Keys(lkp)) {
				fmt.Fprintf(stderr, ", %s.%s %.0f", bench.LKPProgram(st.spec.Name), k, lkp[k])
			}
		}
		fmt.Fprintln(stderr)
	}
	if res.Interrupted {
		if profErr != nil {
			fmt.Fprintln(stderr, "emu:", profErr)
		}
		return errInterrupted
	}
	if profErr != nil {
		return profErr
	}
	if res.Failure != nil {
		return res.Failure
	}
	if !res.Complete {
		return unfinished(p.w)
	}
	return nil
}

// declareRun declares run's own flags, beside the engine's and the
// workload's.
func (f *runFlags) declareRun(fs *flag.FlagSet) {
	f.declare(fs, true)
	fs.BoolVar(&f.json, "json", false, "print one JSON object (config, host, seed, result, report, lkp, counters, profile) instead of the text; "+jsonHostKeys)
	fs.StringVar(&f.schedstat, "schedstat", "", "write /proc/schedstat at the end of the run to FILE (version 15 to v6.8's layout, 16 from v6.9, as the -features profile prints it)")
	fs.StringVar(&f.taskstats, "taskstats", "", "write every task's /proc/<pid>/sched block (pid order, the profile's fields) to FILE")
	fs.StringVar(&f.schedDebug, "sched-debug", "", "write /proc/sched_debug (debugfs sched/debug) as the -features profile's kernel prints it at the end of the run to FILE")
	fs.BoolVar(&f.profile, "profile", false, "print the virtual-cycle profile (perf report style) after the result")
	fs.StringVar(&f.profileCPUs, "profile-cpus", "", "also print the profile of these CPUs, one table each (e.g. 0,1,112)")
	fs.StringVar(&f.pprofFile, "pprof", "", "write the profile's call chains as a pprof profile (go tool pprof -top FILE) to FILE")
	fs.StringVar(&f.perfScript, "perf-script", "", "write the profile's call chains as perf script prints a perf record -a -g (4000 Hz) to FILE: stackcollapse-perf.pl folds it into a flame graph")
	fs.IntVar(&f.lines, "lines", 0, "print the N most contended shared lines after the result (stall, busy time, accesses, transfers by distance class), as perf c2c ranks cachelines")
	fs.StringVar(&f.trace, "trace", "", "write the sched tracepoints (switch, waking, wakeup, wakeup_new, migrate_task, process_fork, process_exit, process_free, stat_runtime; stat_wait and stat_sleep with sched_schedstats=1) to FILE (FILE.dat: trace-cmd trace.dat; else ftrace text) and Chrome-JSON counters to FILE.counters.json")
	fs.DurationVar(&f.traceWindow, "trace-window", 100*time.Millisecond, "virtual time covered by -trace, from the start")
	fs.DurationVar(&f.windowFrom, "window-from", 0, "measure the counters, profile and lkp metrics of -json and -o over a window of virtual time, from this time (perf stat -D) to the first task's exit, as lkp's minutes-long runs average a steady state (0: the whole run)")
	fs.DurationVar(&f.windowTo, "window-to", 0, "end the window, and the run, at this virtual time, done or not (perf stat -a -- sleep N over a longer run): a run with lkp's loops read in its steady state (0: the first task's exit)")
	fs.DurationVar(&f.interval, "interval", 0, "print perf stat -I's counts every this much virtual time on stderr (task-clock, context-switches, cpu-migrations; then nr_running, migrations per wakeup and the workload's lkp rate), a multiple of 1ms (0: none)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a Go CPU profile of the emulator itself to FILE")
	fs.StringVar(&f.fgprofFile, "fgprof", "", "write an fgprof (on- and off-CPU) profile of the emulator to FILE")
	fs.StringVar(&f.memFile, "memprofile", "", "write a Go heap profile of the emulator at the end to FILE")
	fs.StringVar(&f.ndjson, "o", "", "append the run as one NDJSON record (config, seed, host, result, lkp, report, counters, histograms) to FILE")
}

// runPlan is a run's command line, checked, with its workload built and
// its output files checked writable.
type runPlan struct {
	f        *runFlags
	st       *setup
	feat     emu.Features
	sched    emu.SchedSettings
	featSpec string
	cpus     []int // -profile-cpus
	w        bench.Workload
	fw       bench.FileWriter // the workload's own files, or nil
	text     io.Writer        // where the text result goes
}

// planRun checks run's flags, builds the workload and checks every output
// file before the run starts.
func planRun(f *runFlags, st *setup, stdout, stderr io.Writer) (*runPlan, error) {
	feat, sched, featSpec, err := parseKernelFlag("-features", f.features, f.sched)
	if err != nil {
		return nil, err
	}
	if f.traceWindow <= 0 || f.traceWindow > bench.MaxSeconds*time.Second {
		return nil, usagef("-trace-window: %v is out of range (allowed: more than 0, at most %ds of virtual time)", f.traceWindow, bench.MaxSeconds)
	}
	if f.lines < 0 || f.lines > 1<<20 {
		return nil, usagef("-lines: %d is out of range (allowed: 0 to %d lines)", f.lines, 1<<20)
	}
	if f.windowFrom < 0 || f.windowFrom > bench.MaxSeconds*time.Second {
		return nil, usagef("-window-from: %v is out of range (allowed: 0, the whole run, up to %ds of virtual time)", f.windowFrom, bench.MaxSeconds)
	}
	if f.windowTo < 0 || f.windowTo > bench.MaxSeconds*time.Second || (f.windowTo > 0 && f.windowTo <= f.windowFrom) {
		return nil, usagef("-window-to: %v is out of range (allowed: 0, the first exit, or after -window-from %v, up to %ds of virtual time)", f.windowTo, f.windowFrom, bench.MaxSeconds)
	}
	if f.interval < 0 || f.interval%time.Millisecond != 0 {
		return nil, usagef("-interval: %v is not a whole number of milliseconds (allowed: 0, none, or 1ms, 2ms, ...)", f.interval)
	}
	var cpus []int
	if f.profileCPUs != "" {
		if cpus, err = parseCPUList(f.profileCPUs, len(st.m.CPUs)); err != nil {
			return nil, usagef("-profile-cpus: %v", err)
		}
	}
	w, err := st.mk(st.m)
	if err != nil {
		return nil, workloadError(err)
	}
	outs := [][2]string{{"-perf-script", f.perfScript}, {"-pprof", f.pprofFile}, {"-schedstat", f.schedstat}, {"-taskstats", f.taskstats}, {"-sched-debug", f.schedDebug}, {"-trace", f.trace},
		{"-trace", counterFile(f.trace)}, {"-o", f.ndjson}, {"-memprofile", f.memFile}, {"-cpuprofile", f.cpuprofile}, {"-fgprof", f.fgprofFile}}
	// A workload's own files (schbench -j); "-" is stdout, and the text
	// then goes to stderr, as the real tool prints it there.
	fw, _ := w.(bench.FileWriter)
	text := stdout
	if fw != nil {
		for _, of := range fw.Files() {
			if of.Path != "-" {
				outs = append(outs, [2]string{of.Flag, of.Path})
				continue
			}
			if f.json {
				return nil, usagef("%s -: stdout is -json's; give %s a FILE", of.Flag, of.Flag)
			}
			text = stderr
		}
	}
	if dir := filepath.Dir(f.ndjson); f.ndjson != "" && dir != "." {
		// openNDJSON creates -o's directory (emu sweep -print -o DIR/
		// hands every point a file in it): create it before the check.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, usagef("-o: cannot create %s: %v", dir, err)
		}
	}
	if err := checkOutputs(outs); err != nil {
		return nil, err
	}
	return &runPlan{f: f, st: st, feat: feat, sched: sched, featSpec: featSpec, cpus: cpus, w: w, fw: fw, text: text}, nil
}

// execute runs the workload with the profiles and Ctrl-C handling on:
// the result, the host seconds it took, and the profiles' error.
func (p *runPlan) execute(stderr io.Writer) (res *bench.Result, hostSec float64, profErr, err error) {
	f := p.f
	stopProf, err := startProfiles(f.cpuprofile, f.fgprofFile)
	if err != nil {
		return nil, 0, nil, err
	}
	stop, unlisten := interrupts()
	unlisten = sync.OnceFunc(unlisten)
	defer unlisten()
	cfg := runConfig(&f.engineFlags, p.st.m, p.feat)
	cfg.Sched = p.sched
	cfg.Stop = stop
	cfg.TraceWindow = 0
	cfg.CallChains = f.profile || f.profileCPUs != "" || f.perfScript != "" || f.pprofFile != ""
	if f.trace != "" {
		cfg.TraceWindow = int64(f.traceWindow)
	}
	if f.windowFrom > 0 || f.windowTo > 0 {
		cfg.Window = &bench.Window{From: int64(f.windowFrom), To: int64(f.windowTo)}
	}
	host0 := time.Now()
	var prog *progress
	if f.progress {
		prog = newProgress(newStatusLine(stderr), host0, p.w, p.st)
		if f.windowTo > 0 {
			prog.loops = nil // the run ends at -window-to: its time is its progress
			prog.atMost = false
		}
		cfg.Progress = prog.update
	}
	if f.interval > 0 {
		cfg.Interval = int64(f.interval)
		cfg.OnInterval = intervalPrinter(stderr, p.w, p.st.spec.Name, len(p.st.m.CPUs), prog.clear)
	}
	res, err = bench.Execute(p.w, cfg)
	// The run is over: a signal from here on (say, while an output FIFO
	// waits for its reader) takes its default action and ends emu.
	unlisten()
	profErr = stopProf()
	if err != nil {
		return nil, 0, nil, workloadError(err)
	}
	hostSec = time.Since(host0).Seconds()
	prog.clear()
	return res, hostSec, profErr, nil
}

// report prints the result (text or -json) and writes every output file.
func (p *runPlan) report(stdout io.Writer, res *bench.Result, hostSec float64) error {
	f, st, s, text := p.f, p.st, res.Sim, p.text
	if p.fw != nil {
		if err := p.fw.WriteFiles(stdout, s, bench.RunInfo{Args: st.given, Kernel: p.featSpec, Unix: time.Now().Unix()}); err != nil {
			return err
		}
	}
	if f.json {
		if err := writeRunJSON(stdout, f, p.featSpec, st, res, hostSec); err != nil {
			return err
		}
	} else {
		if err := p.w.Report(text, s); err != nil {
			return err
		}
		if f.profile {
			if err := s.WriteProfile(text, nil, fmt.Sprintf("virtual cycles of all %d CPUs, %s on %s", len(st.m.CPUs), p.featSpec, st.m.Name)); err != nil {
				return err
			}
			for _, c := range p.cpus {
				if err := s.WriteProfile(text, []int{c}, fmt.Sprintf("CPU %d", c)); err != nil {
					return err
				}
			}
		}
		if f.lines > 0 {
			if err := s.WriteLines(text, f.lines); err != nil {
				return err
			}
		}
	}
	if f.ndjson != "" {
		if err := appendRunRecord(f.ndjson, f, p.featSpec, st, res, hostSec); err != nil {
			return err
		}
	}
	for _, out := range []struct {
		flag, file string
		write      func(io.Writer) error
	}{
		{"-perf-script", f.perfScript, s.WritePerfScript},
		{"-pprof", f.pprofFile, func(w io.Writer) error {
			return s.WritePprof(w, fmt.Sprintf("rqemu: virtual cycles, %s on %s", p.featSpec, st.m.Name))
		}},
		{"-schedstat", f.schedstat, s.WriteSchedstat},
		{"-taskstats", f.taskstats, s.WriteTaskStats},
		{"-sched-debug", f.schedDebug, s.WriteSchedDebug},
		{"-trace", f.trace, traceWriter(s, f.trace)},
		{"-trace", counterFile(f.trace), s.WriteChromeCounters},
		{"-memprofile", f.memFile, func(w io.Writer) error { runtime.GC(); return pprof.WriteHeapProfile(w) }},
	} {
		if out.file == "" {
			continue
		}
		if err := writeFile(out.file, out.write); err != nil {
			return fmt.Errorf("%s: %w", out.flag, err)
		}
	}
	return nil
}

// traceWriter picks -trace's format by the file name: FILE.dat is a
// trace-cmd trace.dat, anything else ftrace text.
func traceWriter(s *emu.Sim, file string) func(io.Writer) error {
	if strings.HasSuffix(file, ".dat") {
		return s.WriteTraceDat
	}
	return s.WriteFtrace
}

func counterFile(trace string) string {
	if trace == "" {
		return ""
	}
	return trace + ".counters.json"
}

func runConfig(e *engineFlags, m *hwmodel.Machine, feat emu.Features) bench.RunConfig {
	return bench.RunConfig{Machine: m, Features: feat, Seed: e.seed, Epoch: int64(e.epoch), Driver: e.driver,
		Workers: e.workers, Pin: e.pin, Check: e.check}
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseCPUList(s string, n int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CPU number", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("%q is not a CPU range", part)
			}
		}
		if a < 0 || b >= n || a > b {
			return nil, fmt.Errorf("%q out of range [0, %d)", part, n)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// jsonHostKeys says which keys of -json depend on where and how the run
// ran: the rest is the same bytes for the same seed and flags, whatever
// the driver, -workers, -pin or -progress.
const jsonHostKeys = "host.* (this host, and host_seconds) depends on the host, and config.driver and config.args (the command line) on how it was run: the rest is the same bytes for the same seed and flags, whichever the driver"

func writeRunJSON(w io.Writer, f *runFlags, featSpec string, st *setup, res *bench.Result, hostSec float64) error {
	s := res.Sim
	var report strings.Builder
	if err := res.Workload.Report(&report, s); err != nil {
		return err
	}
	id := hwmodel.CPUIDIdentity()
	hostname, _ := os.Hostname()
	cs, prof := s.Counters(), s.Profile(nil)
	lkp := bench.LKPStats(st.spec.Name, report.String())
	if win := res.Window; win != nil {
		cs, prof = win.Counters(), win.Profile(-1)
		lkp = bench.WindowLKPStats(st.spec.Name, lkp, win, res.Workload)
	}
	if len(prof) > 40 {
		prof = prof[:40]
	}
	out := map[string]any{
		"config": map[string]any{
			"topo": st.m.Name, "cpus": len(st.m.CPUs), "features": featSpec,
			"workload": st.spec.Name, "args": st.args, "seed": f.seed, "epoch_ns": epochNS(f.epoch, s),
			"driver": f.driver, "sched": s.Tunables().Values(s.Features()),
		},
		"host": map[string]any{
			"hostname": hostname, "vendor": id.Vendor, "model": id.Model, "arch": id.Arch,
			"cpus": runtime.NumCPU(), "go": runtime.Version(), "os": runtime.GOOS,
			"host_seconds": hostSec,
		},
		"complete":    res.Complete,
		"interrupted": res.Interrupted,
		"result":      res.Workload.Metrics(s),
		"report":      report.String(),
		"counters":    cs,
		"profile":     prof,
	}
	if f.windowFrom > 0 {
		out["config"].(map[string]any)["window_from_sec"] = f.windowFrom.Seconds()
	}
	if f.windowTo > 0 {
		out["config"].(map[string]any)["window_to_sec"] = f.windowTo.Seconds()
	}
	if lkp != nil {
		out["lkp"] = lkp
	}
	if h, ok := res.Workload.(bench.Histogrammer); ok {
		out["histograms"] = h.Histograms(s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func epochNS(e time.Duration, s *emu.Sim) int64 {
	if e > 0 {
		return int64(e)
	}
	return s.Lookahead()
}
