package study

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Runner runs studies: the engine, the seeds, the scale, where the tables
// go, and a hook per run (NDJSON records, progress lines).
type Runner struct {
	Engine Engine
	Seed   uint64
	Seeds  int // runs per cell (0: the study's Seeds); the cell is their mean ± spread
	Quick  bool
	All    bool    // also the Extra rows
	L      float64 // > 0: virtual seconds of every duration-bound row
	// Steady runs the headline row at half length as well (the
	// steady-state line) for calibration studies.
	Steady bool
	Out    io.Writer
	// OnRun is called after every run (a cached one too, with cached
	// set), with the study, the row and the setting.
	OnRun func(st *Study, row, setting string, o *Outcome, cached bool)
	// Perf is the perf binary host-pipe runs; Fit calibrates the host
	// preset first.
	Perf string
	Fit  bool
	// Settle is how long, at most, host-pipe waits for the machine to
	// quiet down before its probes and before each real benchmark
	// (contention.Settle; 0: it does not wait).
	Settle time.Duration
	// fitFallback: a fit the probes refuse as noisy leaves host-pipe
	// uncalibrated, saying so, rather than failing (the rollup's fit).
	fitFallback bool
	// MaxSpread is host-pipe's widest IQR/median of a probe or of the
	// real runs (0: contention.DefaultMaxSpread).
	MaxSpread float64
	// Jobs is how many of a study's runs execute at once (<= 1: one
	// after another). The runs are independent and each is
	// deterministic, so the tables, the NDJSON records and the order of
	// the OnRun calls are the same whatever Jobs is; only the host time
	// differs (see prefetch).
	Jobs int
	// Rollup: a study with Study.Rollup ends with the calibration count
	// (rollup.go). Off, it runs its own rows only.
	Rollup bool
	// Only, when set, keeps the rows it accepts and drops the others (emu
	// fit: the rows of one preset family).
	Only func(st *Study, row *Row) bool

	// sums are the summaries of the studies this runner reproduced.
	sums  map[string]*Summary
	cache map[string]*Outcome
	// exec executes one run (nil: Execute); tests stub it.
	exec func(Run, uint64, Engine) (*Outcome, error)
	// pre holds the runs prefetch started, by cache key; do takes them
	// in its own order.
	pre map[string]*future
}

// future is a run prefetch started: done closes once o and err are set.
type future struct {
	done chan struct{}
	o    *Outcome
	err  error
}

// key is the cache key of a run and seed under this runner's engine.
func (r *Runner) key(run Run, seed uint64) string {
	return run.key(seed) + "|" + r.Engine.Calib + "|" + r.Engine.Values.String()
}

func (r *Runner) execute(run Run, seed uint64, eng Engine) (*Outcome, error) {
	if r.exec != nil {
		return r.exec(run, seed, eng)
	}
	return Execute(run, seed, eng)
}

// length is the row's length at this scale, halved when half is set.
func (r *Runner) length(l Length, half bool) string {
	v := l.Default
	if r.Quick {
		v = l.Quick
	}
	if r.L > 0 && l.Seconds {
		v = r.L
	}
	if half && l.Until {
		// The window half as long: its end half way from its start.
		w := r.window(l)
		v = w + (v-w)/2
	} else if half {
		v /= 2
	}
	return l.format(v)
}

// window is the row's measurement window's start at this scale (s
// virtual; 0: the whole run).
func (r *Runner) window(l Length) float64 {
	if r.Quick {
		return l.QuickWindow
	}
	if r.L > 0 && l.Until && r.L <= l.Window {
		// -l ends the run before the window's start: the window keeps
		// its place in the run, the same fraction of it.
		return r.L * l.Window / l.Default
	}
	return l.Window
}

// seeds is the number of runs per cell of st: Seeds, or the study's own
// when Seeds is 0.
func (r *Runner) seeds(st *Study) int {
	if r.Seeds > 0 {
		return r.Seeds
	}
	return max(st.Seeds, 1)
}

// do runs one cell over the seeds, reusing runs already made (the same
// run and seed give the same result: the emulator is deterministic).
func (r *Runner) do(st *Study, row *Row, set Setting, run Run) ([]*Outcome, error) {
	if r.cache == nil {
		r.cache = map[string]*Outcome{}
	}
	var out []*Outcome
	for k := range r.seeds(st) {
		seed := r.Seed + uint64(k)
		key := r.key(run, seed)
		o, cached := r.cache[key]
		if !cached {
			var err error
			if f, ok := r.pre[key]; ok {
				<-f.done
				delete(r.pre, key)
				o, err = f.o, f.err
			} else {
				o, err = r.execute(run, seed, r.Engine)
			}
			if err != nil {
				return nil, err
			}
			if o.Interrupted {
				return nil, ErrInterrupted
			}
			if !o.Complete {
				return nil, fmt.Errorf("%s (seed %d) did not finish within its bound", run.CommandLine(), seed)
			}
			if o.Failure != nil {
				return nil, o.Failure
			}
			r.cache[key] = o
		}
		if r.OnRun != nil {
			r.OnRun(st, row.Label, set.Label, o, cached)
		}
		out = append(out, o)
	}
	return out, nil
}

// cell is one (row, setting) over the seeds.
type cell struct {
	runs []*Outcome
}

func (c cell) stat(m Metric) (mean, spread float64) {
	var v []float64
	for _, o := range c.runs {
		v = append(v, m.value(o))
	}
	return MeanSpread(v)
}

// MeanSpread is the mean and the sample standard deviation in % of the
// mean (0 for a single value).
func MeanSpread(v []float64) (mean, spreadPct float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(max(len(v), 1))
	if len(v) < 2 || mean == 0 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, 100 * math.Sqrt(ss/float64(len(v)-1)) / math.Abs(mean)
}

// change is b relative to a: in % (or a ratio b/a).
func change(a, b float64, ratio bool) float64 {
	if ratio {
		return b / a
	}
	return 100 * (b - a) / a
}

func fmtChange(v float64, ratio bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	if ratio {
		return fmt.Sprintf("%.3fx", v)
	}
	return fmt.Sprintf("%+.1f%%", v)
}

// Reproduce runs a study and prints its table.
func (r *Runner) Reproduce(st *Study) (*Summary, error) {
	t0 := time.Now()
	var sum *Summary
	var err error
	if st.Custom != nil {
		sum, err = st.Custom(r, st)
	} else {
		wait := r.prefetch(r.plan(st))
		sum, err = r.grid(st)
		wait()
	}
	if sum != nil {
		sum.HostSec = time.Since(t0).Seconds()
		if r.sums == nil {
			r.sums = map[string]*Summary{}
		}
		r.sums[st.Name] = sum
	}
	if err == nil && st.Rollup && r.Rollup {
		err = r.rollup(st, sum)
	}
	return sum, err
}

// rows are the rows this runner runs.
func (r *Runner) rows(st *Study) []*Row {
	var rows []*Row
	for i := range st.Rows {
		if st.Rows[i].Needs != "" {
			continue // listed by grid, not run
		}
		if r.Only != nil && !r.Only(st, &st.Rows[i]) {
			continue
		}
		if !st.Rows[i].Extra || r.All {
			rows = append(rows, &st.Rows[i])
		}
	}
	return rows
}

// planned is one run (and seed) a study's grid will ask do for.
type planned struct {
	run  Run
	seed uint64
}

// plan lists the runs grid makes for st, in the order it makes them:
// every row under every setting (and on RefTopo), then the steady-state
// line's half-length runs. TestPlanIsGrid holds it to grid.
func (r *Runner) plan(st *Study) []planned {
	var p []planned
	add := func(run Run) {
		for k := range r.seeds(st) {
			p = append(p, planned{run, r.Seed + uint64(k)})
		}
	}
	rows := r.rows(st)
	for _, row := range rows {
		for _, s := range st.Settings {
			add(st.runOf(row, s, r.length(row.Length, false), r.window(row.Length), ""))
		}
		if st.RefTopo != "" {
			for _, s := range st.Settings {
				add(st.runOf(row, s, r.length(row.Length, false), r.window(row.Length), st.RefTopo))
			}
		}
	}
	if h := st.Headline; h != nil && r.Steady && st.Set == "calibration" && slices.ContainsFunc(rows, func(row *Row) bool { return row.Label == h.Row }) {
		row := st.row(h.Row)
		for i, s := range st.Settings {
			if i == 0 || i == h.Setting {
				add(st.runOf(row, s, r.length(row.Length, true), r.window(row.Length), ""))
			}
		}
	}
	return p
}

// prefetch starts the planned runs that are neither cached nor already
// started on Jobs goroutines, in plan order, for do to collect; it does
// nothing when Jobs <= 1 or the engine reports progress (one callback
// per run). The returned wait stops the runs no one collected (a failed
// study: at their next barrier) and returns once every goroutine has
// ended.
func (r *Runner) prefetch(p []planned) (wait func()) {
	if r.Jobs <= 1 || r.Engine.Progress != nil {
		return func() {}
	}
	runs := make([]ahead, len(p))
	for i, x := range p {
		runs[i] = ahead{r, x}
	}
	done := runAhead(runs, r.Jobs, r.Engine.Stop, false)
	return func() {
		done()
		clear(r.pre)
	}
}

// ahead is a planned run of a runner, started before its study asks.
type ahead struct {
	r *Runner
	planned
}

// runAhead starts, n at once, each run its runner has neither cached nor
// started, as a future in the runner's pre that do takes; wait waits for
// them. With share, each run gets its part of the host's CPUs
// (GOMAXPROCS over the runs at once), as reproduce -j gives them, rather
// than its Engine's Workers.
func runAhead(runs []ahead, n int, stop <-chan struct{}, share bool) (wait func()) {
	type job struct {
		ahead
		f *future
	}
	var jobs []job
	for _, a := range runs {
		if a.r.pre == nil {
			a.r.pre = map[string]*future{}
		}
		key := a.r.key(a.run, a.seed)
		if _, ok := a.r.cache[key]; ok {
			continue
		}
		if _, ok := a.r.pre[key]; ok {
			continue
		}
		f := &future{done: make(chan struct{})}
		a.r.pre[key] = f
		jobs = append(jobs, job{a, f})
	}
	n = max(n, 1)
	return InOrder(n, len(jobs), stop, func(i int, halt <-chan struct{}) {
		j := jobs[i]
		if Halted(halt) { // given up: do not start it
			j.f.err = ErrInterrupted
		} else {
			eng := j.r.Engine
			eng.Stop = halt
			if share {
				eng.Workers = max(1, runtime.GOMAXPROCS(0)/min(n, len(jobs)))
			}
			j.f.o, j.f.err = j.r.execute(j.run, j.seed, eng)
		}
		close(j.f.done)
	})
}

func (r *Runner) grid(st *Study) (*Summary, error) {
	w := r.Out
	rows := r.rows(st)
	fmt.Fprintf(w, "%s: %s\n", st.Name, st.Doc)
	var lens []string
	seenLen := map[string]bool{}
	for _, row := range rows {
		l := r.length(row.Length, false) + " " + row.Length.Unit
		if win := r.window(row.Length); row.Length.Until {
			l += fmt.Sprintf(" (-window-to: the run's end), measured from %s (-window-from)", time.Duration(win*1e9))
		} else if win > 0 {
			l += fmt.Sprintf(", measured from %s to the first exit (-window-from)", time.Duration(win*1e9))
		}
		if !seenLen[l] {
			seenLen[l] = true
			lens = append(lens, l)
		}
	}
	scale := "default scale"
	if r.Quick {
		scale = "-quick scale"
	}
	fmt.Fprintf(w, "length (%s): %s; %d seed(s) from %d\n", scale, strings.Join(lens, ", "), r.seeds(st), r.Seed)
	if st.Published != "" {
		fmt.Fprintf(w, "published: %s\n", st.Published)
	} else {
		fmt.Fprintf(w, "published: not given (validation set): emulated only\n")
	}
	if st.Source != "" {
		fmt.Fprintf(w, "source: %s\n", st.Source)
	}
	fmt.Fprintf(w, "runs (the first setting; the others change -features):\n")
	for _, row := range rows {
		fmt.Fprintf(w, "  %-11s %s\n", row.Label, st.runOf(row, st.Settings[0], r.length(row.Length, false), r.window(row.Length), "").CommandLine())
	}
	fmt.Fprintf(w, "settings:")
	for _, s := range st.Settings {
		fmt.Fprintf(w, " [%s] %s;", s.Label, s.Features)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)

	cells := map[string][]cell{} // row label -> per setting
	ref := map[string][]cell{}
	// stopped prints, for an interrupted study, the table of the rows
	// that finished before the interrupt, then returns err.
	stopped := func(done []*Row, err error) (*Summary, error) {
		if !errors.Is(err, ErrInterrupted) {
			return nil, err
		}
		if len(done) > 0 {
			r.printTable(st, done, cells, ref)
		}
		fmt.Fprintf(w, "\ninterrupted: %d of the %d rows finished before the stop; the table covers those\n", len(done), len(rows))
		return nil, err
	}
	for i, row := range rows {
		for _, s := range st.Settings {
			runs, err := r.do(st, row, s, st.runOf(row, s, r.length(row.Length, false), r.window(row.Length), ""))
			if err != nil {
				return stopped(rows[:i], err)
			}
			cells[row.Label] = append(cells[row.Label], cell{runs})
		}
		if st.RefTopo != "" {
			for _, s := range st.Settings {
				runs, err := r.do(st, row, s, st.runOf(row, s, r.length(row.Length, false), r.window(row.Length), st.RefTopo))
				if err != nil {
					return stopped(rows[:i], err)
				}
				ref[row.Label] = append(ref[row.Label], cell{runs})
			}
		}
	}
	r.printTable(st, rows, cells, ref)
	r.printNeeds(st)
	if len(st.Notes) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
		fmt.Fprintf(w, "\n")
		last := ""
		for _, n := range st.Notes {
			cs, ok := cells[n.Row]
			if !ok {
				continue
			}
			if h := n.Row + "/" + st.Settings[n.Setting].Label; h != last {
				last = h
				fmt.Fprintf(tw, "%s, %s (emulated; published):\t\t\n", n.Row, st.Settings[n.Setting].Label)
			}
			mean, spread := cs[n.Setting].stat(n.Metric)
			pub := n.Pub
			if pub == "" {
				pub = "not given"
			}
			fmt.Fprintf(tw, "  %s\t%s%s %s\t(%s)\n", n.Metric.Name, n.Metric.format(mean), n.Metric.Unit, fmtSpread(spread), pub)
		}
		tw.Flush()
	}
	if st.TopProfile != "" {
		if cs, ok := cells[st.TopProfile]; ok {
			o := cs[0].runs[0]
			fmt.Fprintf(w, "\ntop of the %s profile at %s, seed %d (%% of non-idle cycles):\n", st.Settings[0].Label, st.TopProfile, o.Seed)
			type kv struct {
				k string
				v float64
			}
			var top []kv
			for k, v := range o.Shares {
				top = append(top, kv{k, v})
			}
			sort.Slice(top, func(i, j int) bool { return top[i].v > top[j].v || top[i].v == top[j].v && top[i].k < top[j].k })
			for i, p := range top {
				if i == 12 {
					break
				}
				fmt.Fprintf(w, "  %6.2f%%  %s\n", p.v, p.k)
			}
		}
	}
	sum := &Summary{Study: st.Name}
	if st.Set == "calibration" {
		sum.Pairs = r.pairs(st, rows, cells)
	}
	if h := st.Headline; h != nil {
		if cs, ok := cells[h.Row]; ok {
			row := st.row(h.Row)
			sum.Headline, sum.Emulated = r.headline(st, row, cs)
			sum.Pub = h.Pub
			if r.Steady && st.Set == "calibration" {
				var half []cell
				for i, s := range st.Settings {
					if i != 0 && i != h.Setting {
						half = append(half, cell{})
						continue
					}
					runs, err := r.do(st, row, s, st.runOf(row, s, r.length(row.Length, true), r.window(row.Length), ""))
					if err != nil {
						return nil, err
					}
					half = append(half, cell{runs})
				}
				full, halfV := r.headlineValue(st, row, cs), r.headlineValue(st, row, half)
				_, hv := r.headline(st, row, half)
				rel := 100 * math.Abs(halfV-full) / math.Max(math.Abs(full), 1e-12)
				sum.Steady = fmt.Sprintf("%s (rel. diff %.1f%%)", hv, rel)
				pts := ""
				if h.Setting != 0 && !st.Ratio {
					pts = fmt.Sprintf(", %.1f points", math.Abs(halfV-full))
				}
				fmt.Fprintf(w, "\nsteady state: %s: %s at %s %s, %s at half length; relative difference %.1f%%%s (%s)\n",
					sum.Headline, sum.Emulated, r.length(row.Length, false), row.Length.Unit, hv, rel, pts, steadyVerdict(rel))
			}
		}
	}
	fmt.Fprintln(w)
	return sum, nil
}

func steadyVerdict(rel float64) string {
	if rel <= 10 {
		return "within 10%: long enough"
	}
	return "over 10%: not steady at this length; use a longer run"
}

// headlineValue is the headline's number over the cells of its row.
func (r *Runner) headlineValue(st *Study, row *Row, cs []cell) float64 {
	h := st.Headline
	m := st.rowMetrics(row)[h.Metric]
	base, _ := cs[0].stat(m)
	if h.Setting == 0 {
		return base
	}
	other, _ := cs[h.Setting].stat(m)
	return change(base, other, st.Ratio)
}

// headline names the headline and formats its value.
func (r *Runner) headline(st *Study, row *Row, cs []cell) (what, val string) {
	h := st.Headline
	m := st.rowMetrics(row)[h.Metric]
	v := r.headlineValue(st, row, cs)
	if h.Setting == 0 {
		return fmt.Sprintf("%s %s, %s", row.Label, m.Name, st.Settings[0].Label), m.format(v) + m.Unit
	}
	what = fmt.Sprintf("%s %s, %s vs %s", row.Label, m.Name, st.Settings[h.Setting].Label, st.Settings[0].Label)
	return what, fmtChange(v, st.Ratio)
}

func fmtSpread(p float64) string {
	if p < 0.05 {
		return ""
	}
	return fmt.Sprintf("±%.1f%%", p)
}

// printTable prints one line per row and metric: each setting's value,
// the change of the others from the first, the published values and
// change where given, and the ratio of emulated to published.
func (r *Runner) printTable(st *Study, rows []*Row, cells, ref map[string][]cell) {
	tw := tabwriter.NewWriter(r.Out, 0, 0, 2, ' ', tabwriter.AlignRight)
	hasPub := false
	for _, row := range rows {
		if len(row.Pub) > 0 || row.PubChange != "" {
			hasPub = true
		}
		for _, m := range st.rowMetrics(row) {
			if m.Pub != 0 {
				hasPub = true
			}
		}
	}
	hdr := []string{"row", "metric"}
	for _, s := range st.Settings {
		hdr = append(hdr, s.Label)
	}
	what := "change"
	if st.Ratio {
		what = "ratio"
	}
	for _, s := range st.Settings[1:] {
		hdr = append(hdr, what+" "+s.Label)
	}
	if st.RefTopo != "" {
		for _, s := range st.Settings[1:] {
			hdr = append(hdr, st.RefTopo+" "+what+" "+s.Label)
		}
		hdr = append(hdr, "gain here/"+st.RefTopo)
	}
	if hasPub {
		hdr = append(hdr, "|")
		for _, s := range st.Settings {
			hdr = append(hdr, "pub "+s.Label)
		}
		hdr = append(hdr, "pub "+what, "emu/pub")
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, row := range rows {
		cs := cells[row.Label]
		for mi, m := range st.rowMetrics(row) {
			line := []string{row.Label, m.Name + m.Unit}
			if mi > 0 {
				line[0] = ""
			}
			means := make([]float64, len(cs))
			for i, c := range cs {
				mean, spread := c.stat(m)
				means[i] = mean
				line = append(line, m.format(mean)+fmtSpread(spread))
			}
			for i := 1; i < len(cs); i++ {
				line = append(line, fmtChange(change(means[0], means[i], st.Ratio), st.Ratio))
			}
			if st.RefTopo != "" {
				rc := ref[row.Label]
				rbase, _ := rc[0].stat(m)
				var last, lastRef float64
				for i := 1; i < len(rc); i++ {
					rv, _ := rc[i].stat(m)
					lastRef = change(rbase, rv, st.Ratio)
					last = change(means[0], means[i], st.Ratio)
					line = append(line, fmtChange(lastRef, st.Ratio))
				}
				line = append(line, fmt.Sprintf("%.2f", last/lastRef))
			}
			if hasPub {
				line = append(line, "|")
				var pubs []string
				var ratios []string
				if mi == 0 && len(row.Pub) > 0 {
					for i, p := range row.Pub {
						if p == 0 {
							pubs = append(pubs, "n/a")
							continue
						}
						pubs = append(pubs, m.format(p))
						if i < len(means) {
							ratios = append(ratios, fmt.Sprintf("%.2f", means[i]/p))
						}
					}
				} else if m.Pub != 0 {
					pubs = append(pubs, m.format(m.Pub))
					ratios = append(ratios, fmt.Sprintf("%.2f", means[0]/m.Pub))
				}
				for len(pubs) < len(st.Settings) {
					pubs = append(pubs, "")
				}
				line = append(line, pubs...)
				pc := ""
				switch {
				case mi == 0 && row.PubChange != "":
					pc = row.PubChange
				case mi == 0 && len(row.Pub) > 1 && row.Pub[0] > 0 && row.Pub[len(row.Pub)-1] > 0:
					pc = fmtChange(change(row.Pub[0], row.Pub[len(row.Pub)-1], st.Ratio), st.Ratio)
				}
				line = append(line, pc, strings.Join(ratios, " "))
			}
			fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
		}
	}
	tw.Flush()
}

// WriteSummary prints the summary of `reproduce all`.
func WriteSummary(w io.Writer, sums []*Summary, total time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "summary:")
	fmt.Fprintln(tw, "study\theadline\temulated\tpublished\tat half length\thost s\t")
	for _, s := range sums {
		pub := s.Pub
		if pub == "" {
			pub = "not given"
		}
		steady := s.Steady
		if steady == "" {
			steady = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f\t\n", s.Study, s.Headline, s.Emulated, pub, steady, s.HostSec)
	}
	tw.Flush()
	fmt.Fprintf(w, "total: %.1f s host\n", total.Seconds())
}
