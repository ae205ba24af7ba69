package study

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Pair is one (row, metric) of a calibration study beside its published
// figure: a single value (Lo == Hi) or a range ("costs ≈2-3%": -3..-2).
type Pair struct {
	Study, Row, Metric string
	Emulated           float64
	Lo, Hi             float64
	Format, Unit       string // the metric's verb and unit
}

// Within is the calibration test: the emulated value is within a factor
// of f of the published figure (of the range's ends), on the same side
// of zero.
func (p Pair) Within(f float64) bool {
	lo, hi := p.Lo, p.Hi
	if math.Abs(lo) > math.Abs(hi) {
		lo, hi = hi, lo
	}
	if lo == 0 || p.Emulated == 0 || math.Signbit(lo) != math.Signbit(p.Emulated) || math.Signbit(hi) != math.Signbit(p.Emulated) {
		return false
	}
	e := math.Abs(p.Emulated)
	return e >= math.Abs(lo)/f && e <= math.Abs(hi)*f
}

// Ratio is emulated over the published figure (the range's middle).
func (p Pair) Ratio() float64 { return p.Emulated / ((p.Lo + p.Hi) / 2) }

func (p Pair) format(v float64) string {
	f := p.Format
	if f == "" {
		f = "%.0f"
	}
	return fmt.Sprintf(f, v) + p.Unit
}

// calibFactor is the calibration test's factor.
const calibFactor = 1.5

var (
	// pubNumber is a published figure's leading number: "≈25%", "13.75%",
	// "≈4.2 M", "8.48%, tg's home node".
	pubNumber = regexp.MustCompile(`^\s*[≈~]?\s*([-+]?[0-9]+(?:\.[0-9]+)?)`)
	// pubRange is a change given as a range: "costs ≈2-3%".
	pubRange = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?)\s*[-–]\s*([0-9]+(?:\.[0-9]+)?)\s*%`)
)

// pubValue reads a published figure's leading number.
func pubValue(s string) (float64, bool) {
	m := pubNumber.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// pubChangeRange reads a published change given as text: "costs ≈2-3%"
// is -3..-2 (%), "gains 5-7%" 5..7.
func pubChangeRange(s string) (lo, hi float64, ok bool) {
	m := pubRange.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	a, _ := strconv.ParseFloat(m[1], 64)
	b, _ := strconv.ParseFloat(m[2], 64)
	if strings.Contains(s, "cost") {
		return -b, -a, true
	}
	return a, b, true
}

// pairs are the study's (row, metric) pairs with a published figure, as
// its table and notes show them: each published setting of a row's first
// metric, the change between the first and the last published setting
// (or a change given as text), a single-setting metric's Pub, and every
// note whose published figure starts with a number.
func (r *Runner) pairs(st *Study, rows []*Row, cells map[string][]cell) []Pair {
	var out []Pair
	for _, row := range rows {
		cs := cells[row.Label]
		for mi, m := range st.rowMetrics(row) {
			means := make([]float64, len(cs))
			for i, c := range cs {
				means[i], _ = c.stat(m)
			}
			add := func(metric string, e, lo, hi float64, format, unit string) {
				out = append(out, Pair{Study: st.Name, Row: row.Label, Metric: metric, Emulated: e, Lo: lo, Hi: hi, Format: format, Unit: unit})
			}
			if mi == 0 {
				for i, p := range row.Pub {
					if p != 0 && i < len(means) {
						add(m.Name+" ["+st.Settings[i].Label+"]", means[i], p, p, m.Format, m.Unit)
					}
				}
				last := len(row.Pub) - 1
				if last > 0 && last < len(means) && row.Pub[0] != 0 && row.Pub[last] != 0 && !st.Ratio && !row.Noise {
					pc := change(row.Pub[0], row.Pub[last], false)
					add(m.Name+" change ["+st.Settings[last].Label+"]", change(means[0], means[last], false), pc, pc, "%+.1f", "%")
				}
				if lo, hi, ok := pubChangeRange(row.PubChange); ok && len(means) > 1 {
					add(m.Name+" change ["+st.Settings[1].Label+"]", change(means[0], means[1], false), lo, hi, "%+.1f", "%")
				}
			}
			if m.Pub != 0 && len(means) > 0 {
				add(m.Name, means[0], m.Pub, m.Pub, m.Format, m.Unit)
			}
		}
	}
	for _, n := range st.Notes {
		cs, ok := cells[n.Row]
		v, okPub := pubValue(n.Pub)
		if !ok || !okPub || n.Setting >= len(cs) {
			continue
		}
		mean, _ := cs[n.Setting].stat(n.Metric)
		out = append(out, Pair{Study: st.Name, Row: n.Row, Metric: n.Metric.Name + " [" + st.Settings[n.Setting].Label + "]",
			Emulated: mean, Lo: v, Hi: v, Format: n.Metric.Format, Unit: n.Metric.Unit})
	}
	return out
}

// printNeeds lists the rows whose kernel needs a profile the model does
// not have yet, with their command lines and published figures.
func (r *Runner) printNeeds(st *Study) {
	first := true
	for i := range st.Rows {
		row := &st.Rows[i]
		if row.Needs == "" {
			continue
		}
		if first {
			fmt.Fprintf(r.Out, "\nrows not run:\n")
			first = false
		}
		var pub []string
		for _, m := range st.rowMetrics(row) {
			if m.Pub != 0 {
				pub = append(pub, m.Name+" "+m.format(m.Pub)+m.Unit)
			}
		}
		run := st.runOf(row, st.Settings[0], r.length(row.Length, false), r.window(row.Length), "")
		fmt.Fprintf(r.Out, "  %s: needs profile %s (published: %s)\n    %s\n", row.Label, row.Needs, strings.Join(pub, ", "), run.CommandLine())
	}
}

// rollup runs the calibration studies this runner has not run yet (each
// prints its table as reproduce does; a study run before is reused, not
// rerun), then prints every (row, metric) pair of them and of st beside
// its published figure, and last the count within calibFactor.
func (r *Runner) rollup(st *Study, own *Summary) error {
	var all []Pair
	for _, o := range studies {
		if o.Set != "calibration" {
			continue
		}
		sum := own
		if o != st {
			if s, ok := r.sums[o.Name]; ok {
				sum = s
			} else {
				s, err := r.reproduceForRollup(o)
				if err != nil {
					return fmt.Errorf("%s: %w", o.Name, err)
				}
				sum = s
			}
		}
		all = append(all, sum.Pairs...)
	}
	w := r.Out
	fmt.Fprintf(w, "calibration pairs: every (row, metric) of the calibration studies that the model runs, emulated beside published (within: x%.1f either way)\n", calibFactor)
	within := writePairs(w, all)
	fmt.Fprintf(w, "calibration rows within x1.5: %d/%d\n", within, len(all))
	return nil
}

// reproduceForRollup is Reproduce, except that at the default scale
// host-pipe fits the host preset first, as -fit does, unless a
// calibration was given: uncalibrated, the host preset is another
// machine's costs, and its pairs against the real kernel here say nothing
// of the model. A fit the probes refuse (a busy machine) leaves it
// uncalibrated, as the table says; the quick scale (CI) does not fit.
func (r *Runner) reproduceForRollup(o *Study) (*Summary, error) {
	if o.Name != "host-pipe" || r.Fit || r.Engine.Calib != "" || r.Quick {
		return r.Reproduce(o)
	}
	r.Fit, r.fitFallback = true, true
	defer func() { r.Fit, r.fitFallback = false, false }()
	return r.Reproduce(o)
}

// writePairs prints the pairs beside their published figures, one line
// each, and returns how many are within calibFactor (rollup, emu fit).
func writePairs(w io.Writer, all []Pair) (within int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "study\trow\tmetric\temulated\tpublished\temu/pub\twithin\t")
	for _, p := range all {
		pub := p.format(p.Lo)
		if p.Lo != p.Hi {
			pub = p.format(p.Lo) + ".." + p.format(p.Hi)
		}
		ok := "no"
		if p.Within(calibFactor) {
			ok = "yes"
			within++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t\n", p.Study, p.Row, p.Metric, p.format(p.Emulated), pub, p.Ratio(), ok)
	}
	tw.Flush()
	return within
}

// countWithin is how many pairs are within calibFactor.
func countWithin(all []Pair) (n int) {
	for _, p := range all {
		if p.Within(calibFactor) {
			n++
		}
	}
	return n
}
