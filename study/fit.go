package study

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
)

// Fit is one `emu fit` (issue 42 §2): a family's constants fitted to its
// calibration rows by coordinate descent (descend) over their grids.
// Each candidate edits the family's presets in memory
// (Engine.Values -> hwmodel LoadOptions.Edit) and runs every row;
// its objective is the mean over the rows' (row, metric) pairs, as
// reproduce's rollup counts them, of ln(emulated/published)^2.
type Fit struct {
	Family *Family
	Consts []Const // the family's, or -vary's
	Quick  bool    // -scale quick
	Seed   uint64
	Rounds int
	// Jobs is how many runs execute at once: a line search's candidates
	// run together; the output is the same whatever Jobs is.
	Jobs   int
	Driver string
	Stop   <-chan struct{}
	Out    io.Writer
	// Progress, when set, gets a line per evaluation with its host time
	// (stderr: the host time differs from run to run).
	Progress io.Writer
	// exec executes a run (nil: Execute); tests stub it.
	exec func(Run, uint64, Engine) (*Outcome, error)
	// all are the studies fitted to (nil: the package's); tests set it.
	all []*Study
	// spec reads a preset's spec (nil: presetSpec); tests set it.
	spec func(topo string) (*hwmodel.Spec, error)
}

// FitResult is a finished fit.
type FitResult struct {
	Start, Best       []float64 // the first paths' values
	StartF, BestF     float64
	StartPairs, Pairs []Pair
	// Values are every path's value at Best, in Consts' order.
	Paths  []string
	Values []float64
}

// ratioClamp bounds a pair's ratio in the objective: a wrong sign or a
// zero counts as 1/ratioClamp, and no pair weighs more than ln(10)^2 (a
// simplification: one broken pair should not drown the others).
const ratioClamp = 10

// fitObjective is the mean over the pairs of ln(emulated/published)^2
// (the range's middle for a range), each ratio clamped to
// [1/ratioClamp, ratioClamp].
func fitObjective(ps []Pair) float64 {
	if len(ps) == 0 {
		return 0
	}
	var s float64
	for _, p := range ps {
		r := p.Ratio()
		if !(r > 1.0/ratioClamp) { // NaN, <= 0 too
			r = 1.0 / ratioClamp
		}
		r = min(r, ratioClamp)
		s += math.Log(r) * math.Log(r)
	}
	return s / float64(len(ps))
}

// studies are the calibration studies with a row of the family, in
// experiments.md's order.
func (f *Fit) studies() []*Study {
	all := f.all
	if all == nil {
		all = studies
	}
	var out []*Study
	for _, st := range all {
		if st.Set == "calibration" && st.Custom == nil && slices.ContainsFunc(f.Family.Rows, func(r FitRow) bool { return r.Study == st.Name }) {
			out = append(out, st)
		}
	}
	return out
}

// values are every path's value when the consts' first paths take pt.
func (f *Fit) values(pt []float64, start [][]float64) (paths []string, vals []float64) {
	for i, c := range f.Consts {
		paths = append(paths, c.Paths...)
		vals = append(vals, tiedValues(c, start[i], pt[i])...)
	}
	return paths, vals
}

// runner is a Runner for one candidate: the family's rows only, their
// runs' machines edited by the candidate's values.
func (f *Fit) runner(paths []string, vals []float64) *Runner {
	eng := Engine{Driver: f.Driver, Stop: f.Stop,
		Values: &SpecValues{Topos: f.Family.Presets, Paths: paths, Values: vals}}
	return &Runner{Engine: eng, Seed: f.Seed, Quick: f.Quick, Out: io.Discard, Jobs: 1, exec: f.exec, pre: map[string]*future{},
		Only: func(st *Study, row *Row) bool { return slices.Contains(f.Family.Rows, FitRow{st.Name, row.Label}) }}
}

// evalBatch runs the candidates' rows, Jobs runs at once, and returns
// each one's pairs in order.
func (f *Fit) evalBatch(pts [][]float64, start [][]float64) ([][]Pair, error) {
	var runners []*Runner
	var runs []ahead
	for _, pt := range pts {
		r := f.runner(f.values(pt, start))
		runners = append(runners, r)
		for _, st := range f.studies() {
			for _, p := range r.plan(st) {
				runs = append(runs, ahead{r, p})
			}
		}
	}
	defer runAhead(runs, f.Jobs, f.Stop, true)()
	var out [][]Pair
	for _, r := range runners {
		var ps []Pair
		for _, st := range f.studies() {
			sum, err := r.Reproduce(st)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.Name, err)
			}
			ps = append(ps, sum.Pairs...)
		}
		out = append(out, ps)
	}
	return out, nil
}

// Run runs the fit and prints its evaluations, the best set's pairs and
// the spec lines to paste.
func (f *Fit) Run() (*FitResult, error) {
	w := f.Out
	var start [][]float64
	var grids [][]float64
	var pt0 []float64
	for _, c := range f.Consts {
		var s []float64
		for _, topo := range f.Family.Presets {
			v, err := startValues(topo, c)
			if err != nil {
				return nil, err
			}
			if s != nil && !slices.Equal(s, v) {
				return nil, fmt.Errorf("%s: the family's presets disagree (%s: %v, %s: %v): one candidate edits them all", c.Name(), f.Family.Presets[0], s, topo, v)
			}
			s = v
		}
		start = append(start, s)
		grids = append(grids, c.Grid)
		pt0 = append(pt0, s[0])
	}
	scale := "default"
	if f.Quick {
		scale = "quick"
	}
	fmt.Fprintf(w, "emu fit: family %s (%s), -scale %s, seed %d, at most %d rounds\n", f.Family.Name, strings.Join(f.Family.Presets, ", "), scale, f.Seed, f.Rounds)
	fmt.Fprintf(w, "rows: %s\n", f.rowList())
	fmt.Fprintf(w, "objective: mean over the rows' (row, metric) pairs of ln(emulated/published)^2 (ratio clamped to 1/%d..%d)\n", ratioClamp, ratioClamp)
	fmt.Fprintf(w, "varies, in order:\n")
	for i, c := range f.Consts {
		tied := ""
		if len(c.Paths) > 1 {
			tied = fmt.Sprintf(" (tied: %s keep their ratio to the first)", strings.Join(c.Paths[1:], ", "))
		}
		fmt.Fprintf(w, "  %s from %s over %s%s: %s\n", c.Name(), fmtVal(pt0[i]), fmtGrid(c.Grid), tied, c.Why)
	}
	pairs := map[string][]Pair{}
	n := 0
	eval := func(pts [][]float64) ([]float64, error) {
		t0 := time.Now()
		ps, err := f.evalBatch(pts, start)
		if err != nil {
			return nil, err
		}
		sec := time.Since(t0).Seconds() / float64(len(pts))
		var out []float64
		for i, pt := range pts {
			n++
			obj := fitObjective(ps[i])
			pairs[fmt.Sprint(pt)] = ps[i]
			out = append(out, obj)
			fmt.Fprintf(w, "eval %d: %s: objective %.4f, %d/%d within x1.5\n", n, f.pointString(pt), obj, countWithin(ps[i]), len(ps[i]))
			if f.Progress != nil {
				fmt.Fprintf(f.Progress, "emu fit: eval %d: %.1f s host (a batch of %d, -j %d)\n", n, sec, len(pts), f.Jobs)
			}
		}
		return out, nil
	}
	best, bestF, err := descend(grids, pt0, f.Rounds, eval)
	if err != nil {
		return nil, err
	}
	res := &FitResult{Start: pt0, Best: best, StartF: fitObjective(pairs[fmt.Sprint(pt0)]), BestF: bestF,
		StartPairs: pairs[fmt.Sprint(pt0)], Pairs: pairs[fmt.Sprint(best)]}
	res.Paths, res.Values = f.values(best, start)
	fmt.Fprintf(w, "\nbest: %s: objective %.4f -> %.4f, %d/%d -> %d/%d within x1.5\n", f.pointString(best), res.StartF, res.BestF,
		countWithin(res.StartPairs), len(res.StartPairs), countWithin(res.Pairs), len(res.Pairs))
	writePairs(w, res.Pairs)
	f.warn(res, grids)
	fmt.Fprintf(w, "\nspec lines (%s):\n", strings.Join(f.Family.Presets, ", "))
	for i, p := range res.Paths {
		fmt.Fprintf(w, "  %s\n", f.specLine(p, res.Values[i], res, scale))
	}
	return res, nil
}

// warn names a constant fitted to its grid's edge and event-rate pairs
// made worse: a fit to land only after a look (mechanism before price).
func (f *Fit) warn(res *FitResult, grids [][]float64) {
	for i, c := range f.Consts {
		g := grids[i]
		if res.Best[i] != res.Start[i] && (res.Best[i] == g[0] || res.Best[i] == g[len(g)-1]) {
			fmt.Fprintf(f.Out, "warning: %s = %s is at its grid's edge: widen the grid before landing it\n", c.Name(), fmtVal(res.Best[i]))
		}
	}
	events := func(ps []Pair) []Pair {
		var out []Pair
		for _, p := range ps {
			if isEventRate(p.Metric) {
				out = append(out, p)
			}
		}
		return out
	}
	b, a := events(res.StartPairs), events(res.Pairs)
	if len(b) > 0 {
		fmt.Fprintf(f.Out, "event-rate pairs (switches, migrations, wakeups): objective %.4f -> %.4f, %d/%d -> %d/%d within x1.5\n",
			fitObjective(b), fitObjective(a), countWithin(b), len(b), countWithin(a), len(a))
		if fitObjective(a) > fitObjective(b) {
			fmt.Fprintf(f.Out, "warning: the fit makes the event-rate pairs worse: a price that fixes a row whose event mix is wrong is a defect; do not land it\n")
		}
	}
}

// isEventRate: a metric counting scheduler events.
func isEventRate(metric string) bool {
	for _, s := range []string{"context switches/s", "migrations/s", "wakeups/s", "migrations per wakeup"} {
		if strings.HasPrefix(metric, s) {
			return true
		}
	}
	return false
}

// rowList names the rows, grouped by study.
func (f *Fit) rowList() string {
	var parts []string
	for _, st := range f.studies() {
		var rows []string
		for _, r := range f.Family.Rows {
			if r.Study == st.Name {
				rows = append(rows, r.Row)
			}
		}
		parts = append(parts, st.Name+" "+strings.Join(rows, ", "))
	}
	return strings.Join(parts, "; ")
}

func (f *Fit) pointString(pt []float64) string {
	var s []string
	for i, c := range f.Consts {
		s = append(s, c.Paths[0]+"="+fmtVal(pt[i]))
	}
	return strings.Join(s, " ")
}

// specLine is path's line to paste into the presets.
func (f *Fit) specLine(path string, v float64, res *FitResult, scale string) string {
	what := standsFor[path]
	if what == "" {
		what = "formerly " + f.formerSource(path)
	}
	key := path[strings.IndexByte(path, '.')+1:]
	return fmt.Sprintf("%s: {value: %s, source: \"[C] fitted by `emu fit -family %s -scale %s` to %s (objective %.4f -> %.4f, %d/%d within x1.5); %s\"}",
		key, fmtVal(v), f.Family.Name, scale, f.rowList(), res.StartF, res.BestF, countWithin(res.Pairs), len(res.Pairs), what)
}

// formerSource is path's source in the family's first preset.
func (f *Fit) formerSource(path string) string {
	spec, err := presetSpec(f.Family.Presets[0])
	if err != nil {
		return "?"
	}
	src, err := spec.Sourced(path)
	if err != nil || src == nil {
		return "?"
	}
	return src.Source
}

func presetSpec(topo string) (*hwmodel.Spec, error) {
	data, err := hwmodel.PresetSpec(topo)
	if err != nil {
		return nil, err
	}
	return hwmodel.DecodeSpec(strings.NewReader(string(data)))
}

func fmtVal(v float64) string { return fmt.Sprint(round9(v)) }

func fmtGrid(g []float64) string {
	var s []string
	for _, v := range g {
		s = append(s, fmtVal(v))
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// Fitted are the [C] constants of the family's presets, as
// "TOPO PATH" with their values.
func (f *Fit) Fitted() (names []string, values []float64, err error) {
	read := f.spec
	if read == nil {
		read = presetSpec
	}
	for _, topo := range f.Family.Presets {
		spec, err := read(topo)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range hwmodel.SourcedPaths() {
			if src, _ := spec.Sourced(p); src != nil && strings.HasPrefix(src.Source, "[C]") {
				names = append(names, topo+" "+p)
				values = append(values, src.Value)
			}
		}
	}
	return names, values, nil
}

// Check compares the family's presets' [C] constants with the fit's
// result: one line per constant that differs or that the fit does not
// vary (nil when every one matches).
func (f *Fit) Check(res *FitResult) ([]string, error) {
	names, values, err := f.Fitted()
	if err != nil {
		return nil, err
	}
	var bad []string
	for k, name := range names {
		_, p, _ := strings.Cut(name, " ")
		i := slices.Index(res.Paths, p)
		switch {
		case i < 0:
			bad = append(bad, fmt.Sprintf("%s = %s is [C] but this fit does not vary it", name, fmtVal(values[k])))
		case math.Abs(values[k]-res.Values[i]) > 1e-9*math.Abs(res.Values[i]):
			bad = append(bad, fmt.Sprintf("%s = %s, the fit gives %s", name, fmtVal(values[k]), fmtVal(res.Values[i])))
		}
	}
	return bad, nil
}
