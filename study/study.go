// Package study holds the published scheduler studies rqemu reproduces
// (../shared/experiments.md), each as data: its machine, the workload
// command lines, the feature sets compared, the metrics, the published
// figure where experiments.md gives one (never otherwise), and how the
// run is scaled down (in loops or duration, never in topology). A small
// generic function runs a study's grid and prints its table; `emu
// reproduce` is a thin caller.
package study

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Study is one published experiment.
type Study struct {
	Name string
	// Set is "calibration" (figures given: costs are fitted to them) or
	// "validation" (figures deliberately not given).
	Set string
	Doc string // one line
	// Published is the figure as experiments.md gives it; "" when it
	// gives none (the table then shows the emulated metric only).
	Published string
	Source    string // who published it, where
	Settings  []Setting
	Rows      []Row
	// Metrics are reported for every row that has none of its own; the
	// first is the one Row.Pub gives and the change columns compare.
	Metrics []Metric
	// Seeds is how many seeds each cell runs when the runner is not told
	// (Runner.Seeds 0; at least 1): a study whose metric is a rare event
	// per run (lb-spread-llc: a stacked wakeup in about 70) averages
	// several runs, as a kernel developer repeats such a benchmark.
	Seeds int
	// Ratio prints the other settings as a ratio to the first (l2-ttwu:
	// time as a ratio to base) instead of a change in %.
	Ratio bool
	// RefTopo: also run every row on this machine and print its change
	// beside (tgload-icl: the ICL gain beside the SPR gain).
	RefTopo string
	// Notes are extra lines under the table (a base profile's shares).
	Notes []Note
	// TopProfile names a row whose first setting's profile top is printed.
	TopProfile string
	// Headline is the study's one number for the summary and the
	// steady-state line.
	Headline *Headline
	// Custom replaces the generic grid (host-pipe runs the real perf).
	Custom func(r *Runner, st *Study) (*Summary, error)
	// Rollup: with Runner.Rollup, the study ends by running the other
	// calibration studies (those this runner has not run yet) and
	// counting their (row, metric) pairs and its own within x1.5 of the
	// published figures (lkp-base: rollup.go).
	Rollup bool
}

// Setting is one kernel compared: a column of the table.
type Setting struct {
	Label    string
	Features string
}

// Row is one workload variant: a line (or one line per metric) of the
// table, run once per setting.
type Row struct {
	Label string
	Topo  string
	// Features, when set, is the row's own kernel, run under every
	// setting (lkp-base: each row on its report's kernel).
	Features string
	Workload string
	// Args is the workload's command line; "{L}" stands for the run's
	// length (Length).
	Args   []string
	Length Length
	// Extra rows run only with -all: more points of a range the
	// publication states once (uclamp-pipe's 256- and 4096-byte streams),
	// or rows the model cannot tell apart (sis-util-spr1s's TCP_RR).
	Extra bool
	// Noise: the publication gives this row's figures but reports its
	// settings as within noise of each other (tgload's g1 and g4, UDP_RR
	// at 25% and 50%). Its figures are calibration pairs; the change
	// between its settings is not (noise is not a figure to meet).
	Noise bool
	// Pub are the published values of the first metric per setting
	// (0: not given). PubChange is a published change given only as text.
	Pub       []float64
	PubChange string
	// Metrics override the study's.
	Metrics []Metric
	// Needs names the kernel profile the row's kernel needs when the
	// model has none yet ("v6.11"): the row is listed with its published
	// figures, not run.
	Needs string
}

// Length is how a row is scaled down: the value "{L}" takes.
type Length struct {
	Default, Quick float64
	Int            bool   // a count (loops, seconds of schbench -r)
	Unit           string // what it is, e.g. "s virtual (netperf -l)"
	Seconds        bool   // virtual seconds: reproduce -l overrides it
	// Window and QuickWindow, when set, measure the run from that many
	// virtual seconds to its first task's exit (emu run -window-from;
	// bench.Window): the steady state of a load the publication ran for
	// minutes, without the start and the end an emulated fraction of a
	// second is made of.
	Window, QuickWindow float64
	// Until: the length is the window's end, -window-to, in virtual
	// seconds (Seconds is set too), not a workload argument: the row's
	// arguments keep the publication's loops (lkp's hackbench -l 60000),
	// and the run stops at the window's end in its steady state.
	Until bool
}

func (l Length) format(v float64) string {
	if l.Int {
		return strconv.FormatInt(int64(max(1, v+0.5)), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// Metric is a number read from a run.
type Metric struct {
	Name string // column label
	// Key is an Outcome.Value name; Fn computes the metric when Key is "".
	Key    string
	Fn     func(o *Outcome) float64
	Format string // fmt verb for the value, "%.0f" when empty
	// Unit is appended to the label ("%", "M/s").
	Unit string
	// Pub is the published value of this metric for a single-setting
	// row (0: not given), shown beside the first setting with the ratio;
	// Row.Pub gives the first metric's per setting instead.
	Pub float64
}

func (m Metric) value(o *Outcome) float64 {
	if m.Fn != nil {
		return m.Fn(o)
	}
	v, _ := o.Value(m.Key)
	return v
}

func (m Metric) format(v float64) string {
	f := m.Format
	if f == "" {
		f = "%.0f"
	}
	return fmt.Sprintf(f, v)
}

// Note is a line under the table: a metric of one cell beside its
// published figure.
type Note struct {
	Row     string // row label
	Setting int    // index into Settings
	Metric  Metric
	Pub     string // the published figure, as experiments.md words it
}

// Headline is a study's one number: the change of Metric from the first
// setting to Setting on Row (in %, or as a ratio with Study.Ratio), or,
// with Setting 0, the metric itself.
type Headline struct {
	Row     string
	Setting int
	Metric  int    // index into the row's metrics
	Pub     string // the published headline ("" when not given)
}

// Summary is what a study reports for `reproduce all`.
type Summary struct {
	Study    string
	Headline string // what the number is
	Emulated string
	Pub      string
	// Steady is the steady-state check: the headline at half length, and
	// the relative difference; empty when not run.
	Steady  string
	HostSec float64
	// Pairs are the (row, metric) pairs with a published figure
	// (calibration studies; rollup.go).
	Pairs []Pair
}

// All lists the studies in experiments.md's order.
func All() []*Study { return studies }

// Lookup finds a study by name.
func Lookup(name string) (*Study, error) {
	for _, s := range studies {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown study %q (allowed: %s, all)", name, strings.Join(Names(), ", "))
}

// Names are the studies' names.
func Names() []string {
	var n []string
	for _, s := range studies {
		n = append(n, s.Name)
	}
	return n
}

// WriteList prints the studies, one line each, grouped by set.
func WriteList(w io.Writer) {
	for _, set := range []string{"calibration", "validation"} {
		fmt.Fprintf(w, "%s set (%s):\n", set, map[string]string{"calibration": "published figures given", "validation": "figures not given: the emulated metric only"}[set])
		for _, s := range studies {
			if s.Set == set {
				fmt.Fprintf(w, "  %-19s %s\n", s.Name, s.Doc)
			}
		}
	}
}

// rowMetrics are the metrics of a row.
func (st *Study) rowMetrics(r *Row) []Metric {
	if len(r.Metrics) > 0 {
		return r.Metrics
	}
	return st.Metrics
}

// row finds a row by label.
func (st *Study) row(label string) *Row {
	for i := range st.Rows {
		if st.Rows[i].Label == label {
			return &st.Rows[i]
		}
	}
	return nil
}

// runOf is the run of row r under setting s at length l, measured from
// window seconds (0: the whole run), on topo (the row's machine when
// empty).
func (st *Study) runOf(r *Row, s Setting, l string, window float64, topo string) Run {
	if topo == "" {
		topo = r.Topo
	}
	args := make([]string, len(r.Args))
	for i, a := range r.Args {
		args[i] = strings.ReplaceAll(a, "{L}", l)
	}
	f := s.Features
	if r.Features != "" {
		f = r.Features
	}
	run := Run{Topo: topo, Features: f, Workload: r.Workload, Args: args, WindowFrom: window}
	if r.Length.Until {
		run.WindowTo, _ = strconv.ParseFloat(l, 64)
	}
	return run
}
