package study

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// Run is one emulated run: a machine, a kernel and a workload command
// line, exactly what `emu run -topo TOPO -features FEATURES -workload
// WORKLOAD ARGS...` runs.
type Run struct {
	Topo     string   `json:"topo"`
	Features string   `json:"features"`
	Workload string   `json:"workload"`
	Args     []string `json:"args"`
	// WindowFrom > 0 measures the run from that many virtual seconds to
	// its first task's exit (emu run -window-from; bench.Window).
	WindowFrom float64 `json:"window_from_sec,omitempty"`
	// WindowTo > 0 ends the window, and the run, at that many virtual
	// seconds (emu run -window-to; Length.Until).
	WindowTo float64 `json:"window_to_sec,omitempty"`
}

// window is the run's bench.Window, nil for the whole run.
func (r Run) window() *bench.Window {
	if r.WindowFrom <= 0 && r.WindowTo <= 0 {
		return nil
	}
	return &bench.Window{From: int64(r.WindowFrom * 1e9), To: int64(r.WindowTo * 1e9)}
}

// CommandLine is the run as an emu command line (without the seed).
func (r Run) CommandLine() string {
	parts := []string{"emu", "run", "-topo", r.Topo, "-features", ShellQuote(r.Features), "-workload", r.Workload}
	for _, a := range r.Args {
		parts = append(parts, ShellQuote(a))
	}
	if r.WindowFrom > 0 {
		parts = append(parts, "-window-from", time.Duration(r.WindowFrom*1e9).String())
	}
	if r.WindowTo > 0 {
		parts = append(parts, "-window-to", time.Duration(r.WindowTo*1e9).String())
	}
	return strings.Join(parts, " ")
}

// key identifies a run and its seed (the engine settings are the
// runner's, the same for every run).
func (r Run) key(seed uint64) string {
	return fmt.Sprintf("%s|%s|%s|%q|%g|%g|%d", r.Topo, r.Features, r.Workload, r.Args, r.WindowFrom, r.WindowTo, seed)
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_=+%./:,@", c))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Engine is how every run is executed (the engine flags of emu run).
type Engine struct {
	Driver  string // "parallel" (default) or "serial"
	Epoch   int64  // ns; 0: the lookahead
	Workers int
	Pin     bool
	Check   bool
	Calib   string // calibration file for the host preset
	// Stop ends a run at its next barrier when it becomes readable.
	Stop <-chan struct{}
	// Progress, when set, gets each run's progress.
	Progress func(now, limit int64)
	// Values, when set, are spec numbers set in memory on its topologies
	// before Build (emu fit's candidates: fit.go).
	Values *SpecValues
}

// SpecValues are spec numbers by path (hwmodel Spec.SetValue) for the
// presets Topos; a run on another topology is left alone.
type SpecValues struct {
	Topos  []string
	Paths  []string
	Values []float64
}

// edit is the hwmodel.LoadOptions.Edit of topo: nil when v does not
// apply to it.
func (v *SpecValues) edit(topo string) func(*hwmodel.Spec) error {
	if v == nil || !slices.Contains(v.Topos, topo) {
		return nil
	}
	return func(s *hwmodel.Spec) error {
		for i, p := range v.Paths {
			if err := s.SetValue(p, v.Values[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// String is v as a cache key part ("" for none).
func (v *SpecValues) String() string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v.Topos, v.Paths, v.Values)
}

// ErrInterrupted is a run stopped through Engine.Stop.
var ErrInterrupted = errors.New("interrupted")

// Outcome is a finished run's numbers: everything a table, an NDJSON
// record, a merge or a plot reads.
type Outcome struct {
	Run      Run
	Seed     uint64
	CPUs     int
	EpochNS  int64
	Complete bool
	// Interrupted: Stop ended the run; the numbers cover the time run.
	Interrupted bool
	Failure     error
	Metrics     bench.Metrics
	// LKP are the metrics lkp-tests' parsers read from the workload's
	// output (netperf.Throughput_tps, hackbench.throughput).
	LKP      map[string]float64
	Counters map[string]float64
	// Profile is the whole machine's profile (share of all time, idle
	// included, as perf report prints it), largest first, at most 40.
	Profile []emu.ProfileEntry
	// Shares are the busy shares (BusyShare) of the profile's symbols;
	// NodeShares[n] the same over NUMA node n's CPUs (nil on one node).
	Shares     map[string]float64
	NodeShares []map[string]float64
	// NodeIdle[n] is the idle loop's share of NUMA node n's CPUs' time
	// (emu.IdleLoopSymbols), in % (nil on one node): where a machine-wide
	// idle share comes from, such as a socket the tasks have not reached.
	NodeIdle []float64
	// Self are every symbol's shares of all time, idle included (lkp's
	// perf-profile.self.cycles-pp.*), in %.
	Self map[string]float64
	// VolSwitches and InvolSwitches are the tasks' nr_voluntary_switches
	// and nr_involuntary_switches summed (/proc/PID/status).
	VolSwitches, InvolSwitches int64
	// TgLine is the weave's statistics of the task group's tg->load_avg
	// line most stalled on (Sim.Lines), nil when the run has none.
	TgLine     *weave.LineStats
	Histograms []bench.Histogram
	// Drift is, for a run read over a window with a set end (Until), each
	// window rate's change from the window's first half to its second,
	// in %: the counters' rate.* keys and lkp's metrics (as LKP names
	// them). A steady state drifts by noise only; nil without halves.
	Drift map[string]float64
	// Sched are the tunables in force, by name (those the run's kernel
	// has: Tunables.Values).
	Sched   map[string]uint64
	Report  string
	HostSec float64
}

// Value reads a metric by name: a workload metric ("throughput_per_client",
// or "netperf.throughput_per_client"), one of lkp's
// ("netperf.Throughput_tps", "hackbench.throughput"), a counter
// ("rate.wakeups_per_sec", "sched.NeedPreemptCount"), or a busy share
// ("share.update_cfs_group").
func (o *Outcome) Value(name string) (float64, bool) {
	if o.Run.WindowFrom > 0 || o.Run.WindowTo > 0 {
		// A windowed run's lkp keys are the window's (Execute); the
		// workload's own metrics are the whole run's, and answer only
		// what lkp has no key for.
		if v, ok := o.LKP[name]; ok {
			return v, true
		}
	}
	if v, ok := o.Metrics.Values[name]; ok {
		return v, true
	}
	if rest, ok := strings.CutPrefix(name, o.Run.Workload+"."); ok {
		if v, ok := o.Metrics.Values[rest]; ok {
			return v, true
		}
	}
	if v, ok := o.LKP[name]; ok {
		return v, true
	}
	if v, ok := o.Counters[name]; ok {
		return v, true
	}
	if sym, ok := strings.CutPrefix(name, "share."); ok {
		return o.Shares[sym], true // a symbol never run has share 0
	}
	if sym, ok := strings.CutPrefix(name, "self."); ok {
		return o.Self[sym], true
	}
	return 0, false
}

// Execute runs r with the given seed.
func Execute(r Run, seed uint64, eng Engine) (*Outcome, error) {
	m, err := hwmodel.Load(r.Topo, hwmodel.LoadOptions{Calib: eng.Calib, Hammer: weave.PredictHammer, Edit: eng.Values.edit(r.Topo)})
	if err != nil {
		return nil, err
	}
	w, err := bench.Build(r.Workload, r.Args, m)
	if pe := (*bench.ParseError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: %w", r.CommandLine(), pe.Err)
	}
	if err != nil {
		return nil, err
	}
	f, sched, _, err := emu.ParseKernel(r.Features)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	res, err := bench.Execute(w, bench.RunConfig{Machine: m, Features: f, Sched: sched, Seed: seed, Epoch: eng.Epoch,
		Driver: eng.Driver, Workers: eng.Workers, Pin: eng.Pin, Check: eng.Check, Stop: eng.Stop, Progress: eng.Progress, Window: r.window()})
	if err != nil {
		return nil, err
	}
	o := Summarize(r, seed, res)
	o.HostSec = time.Since(t0).Seconds()
	o.EpochNS = eng.Epoch
	if o.EpochNS == 0 {
		o.EpochNS = res.Sim.Lookahead()
	}
	return o, nil
}

// Summarize reads a finished run into an Outcome.
func Summarize(r Run, seed uint64, res *bench.Result) *Outcome {
	s := res.Sim
	var report strings.Builder
	if err := res.Workload.Report(&report, s); err != nil {
		report.WriteString("report: " + err.Error())
	}
	// A run with a measurement window (Run.WindowFrom) reads its
	// counters, profile, switches and lkp's throughput over the window;
	// the report and the workload's own metrics stay the whole run's.
	win := res.Window
	prof, counters := s.Profile(nil), s.Counters()
	lkp := bench.LKPStats(r.Workload, report.String())
	if win != nil {
		prof, counters = win.Profile(-1), win.Counters()
		lkp = bench.WindowLKPStats(r.Workload, lkp, win, res.Workload)
	}
	shares := busyShares(prof)
	self := map[string]float64{}
	for _, p := range prof {
		self[p.Symbol] = p.Percent
	}
	var vol, invol int64
	if win != nil {
		vol, invol = win.Switches()
	} else {
		for _, t := range s.Tasks() {
			vol += t.Stats.NrVolSwitch
			invol += t.Stats.NrInvolSwitch
		}
	}
	var nodeShares []map[string]float64
	var nodeIdle []float64
	if nodes := s.Machine().Nodes; len(nodes) > 1 {
		for n, cpus := range nodes {
			p := s.Profile(cpus)
			if win != nil {
				p = win.Profile(n)
			}
			nodeShares = append(nodeShares, busyShares(p))
			nodeIdle = append(nodeIdle, idlePercent(p))
		}
	}
	if len(prof) > 40 {
		prof = prof[:40]
	}
	var tg *weave.LineStats
	for _, l := range s.Lines() {
		if strings.HasPrefix(l.Name, "tg(") && strings.HasSuffix(l.Name, ")->load_avg") {
			tg = &l
			break
		}
	}
	if tg != nil && win != nil {
		// The line's window share, as the counters' (its busy time over
		// the window's length, its transfers per the window's wakeups).
		if l, ok := win.Line(tg.Name); ok {
			tg = &l
		}
	}
	o := &Outcome{TgLine: tg, Run: r, Seed: seed, CPUs: len(s.Machine().CPUs), Complete: res.Complete, Interrupted: res.Interrupted,
		Failure: res.Failure, Metrics: res.Workload.Metrics(s), LKP: lkp,
		Counters: counters, Profile: prof, Shares: shares, NodeShares: nodeShares, NodeIdle: nodeIdle, Report: report.String(),
		Sched: s.Tunables().Values(s.Features()), Self: self, VolSwitches: vol, InvolSwitches: invol}
	if h, ok := res.Workload.(bench.Histogrammer); ok {
		o.Histograms = h.Histograms(s)
	}
	if win != nil {
		o.Drift = windowDrift(r.Workload, win, res.Workload)
	}
	return o
}

// windowDrift is Outcome.Drift: each rate of the window's second half
// against its first, in %, nil when the window has no halves.
func windowDrift(workload string, win *bench.WindowResult, w bench.Workload) map[string]float64 {
	a, b, ok := win.Halves()
	if !ok {
		return nil
	}
	d := map[string]float64{}
	change := func(k string, x, y float64) {
		if x != 0 {
			d[k] = (y/x - 1) * 100
		}
	}
	ca, cb := a.Counters(), b.Counters()
	for k, x := range ca {
		if strings.HasPrefix(k, "rate.") {
			change(k, x, cb[k])
		}
	}
	prog := bench.LKPProgram(workload)
	la, lb := bench.LKPPrefixed(prog, a.LKP(w)), bench.LKPPrefixed(prog, b.LKP(w))
	for k, x := range la {
		change(k, x, lb[k])
	}
	return d
}

// busyShares is every symbol's share of a profile's non-idle time, in %:
// what a cycles profile shows (halted idle CPUs count no cycles).
func busyShares(prof []emu.ProfileEntry) map[string]float64 {
	var all, idle int64
	for _, p := range prof {
		all += p.NS
		if p.Symbol == "do_idle" {
			idle = p.NS
		}
	}
	shares := map[string]float64{}
	for _, p := range prof {
		if p.Symbol != "do_idle" {
			shares[p.Symbol] = 100 * float64(p.NS) / float64(max(all-idle, 1))
		}
	}
	return shares
}

// idlePercent is the idle loop's share of a profile's time, in %.
func idlePercent(prof []emu.ProfileEntry) float64 {
	var all, idle int64
	syms := emu.IdleLoopSymbols()
	for _, p := range prof {
		all += p.NS
		if slices.Contains(syms, p.Symbol) {
			idle += p.NS
		}
	}
	return 100 * float64(idle) / float64(max(all, 1))
}

// Params are the workload flags a command line sets, name to value as
// the flag prints it (netperf -nr 100% gives "nr": "100%"); nil when the
// command line does not parse.
func Params(workload string, args []string) map[string]string {
	fs := parsedFlags(workload, args)
	if fs == nil {
		return nil
	}
	p := map[string]string{}
	fs.Visit(func(f *flag.Flag) { p[f.Name] = f.Value.String() })
	return p
}

// parsedFlags is the workload's flag set after its command line, read as
// emu run reads it (aliases share a value, unset flags keep their
// defaults); nil when the command line does not parse.
func parsedFlags(workload string, args []string) *flag.FlagSet {
	fs := flag.NewFlagSet(workload, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c, err := bench.Declare(fs, workload)
	if err != nil || c.Parse(args) != nil {
		return nil
	}
	return fs
}

// flagInts are the integer values of the named workload flags on a run's
// command line (their defaults where not given); zeros when the command
// line does not parse or a flag is not an integer.
func flagInts(r Run, names ...string) []int {
	out := make([]int, len(names))
	fs := parsedFlags(r.Workload, r.Args)
	if fs == nil {
		return out
	}
	for i, n := range names {
		if f := fs.Lookup(n); f != nil {
			out[i], _ = strconv.Atoi(f.Value.String())
		}
	}
	return out
}
