package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

const plotUsage = `usage: emu plot FILE.ndjson|DIR ... -x AXIS -y METRIC [-by AXIS] [-o FILE.png|.svg]
       emu plot -cdf [-hist NAME] FILE.ndjson|DIR ... [-by AXIS] [-o FILE.png|.svg]

Plots NDJSON records (emu run -o, emu reproduce -o, emu sweep) with
gonum/plot. The first form draws METRIC over a sweep axis, one line per
value of -by, each point the mean over the records (seeds) there. The
second draws latency CDFs (log x axis) from the runs' histogram buckets
(schbench's wakeup and request latencies, hopper's runnable waits), the
records of each -by value merged; a value of 0 is counted but not drawn.

AXIS: topo, features, workload, seed, cpus, or a workload flag (nr, g, l,
t, m, ...); values that are numbers (a trailing % allowed) make a numeric
axis, others a category axis in the order met. METRIC: a workload metric
(netperf.throughput_per_client or throughput_per_client), one of lkp's
(netperf.Throughput_tps, hackbench.throughput), a counter
(rate.wakeups_per_sec, sched.NeedPreemptCount) or profile.SYMBOL.

examples:
  emu plot udprr.ndjson -x nr -y netperf.throughput_per_client -by features -o udprr.png
  emu plot -cdf -hist wakeup lb.ndjson -by features -o wakeup-cdf.svg`

// series is one line of a plot: what the golden tests compare.
type series struct {
	Label string    `json:"label"`
	X     []float64 `json:"x"`
	Y     []float64 `json:"y"`
	// N is the number of records behind each point (sweep plots).
	N []int `json:"n,omitempty"`
}

// plotData is what a plot draws.
type plotData struct {
	Title, XLabel, YLabel string
	// XNames label a category axis (X then holds 0, 1, ...).
	XNames []string `json:",omitempty"`
	LogX   bool
	Series []series
}

// numeric reads an axis value as a number ("75%" is 75).
func numeric(v string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	return f, err == nil
}

// sweepSeries is METRIC y over axis x, one series per value of by.
func sweepSeries(recs []*record, x, y, by string) (*plotData, error) {
	type key struct{ by, x string }
	sums := map[key][]float64{}
	var byOrder, xOrder []string
	seenBy, seenX := map[string]bool{}, map[string]bool{}
	allNumeric := true
	for _, r := range recs {
		v, ok := r.value(y)
		if !ok {
			continue
		}
		xv := r.axis(x)
		if xv == "" {
			return nil, usagef("-x: %s is not an axis of the records (%s: topo, features, workload, seed, cpus, or a workload flag they set: %s)",
				x, r.Config.Workload, strings.Join(paramNames(r), ", "))
		}
		bv := ""
		if by != "" {
			bv = r.axis(by)
		}
		if !seenBy[bv] {
			seenBy[bv] = true
			byOrder = append(byOrder, bv)
		}
		if !seenX[xv] {
			seenX[xv] = true
			xOrder = append(xOrder, xv)
			if _, ok := numeric(xv); !ok {
				allNumeric = false
			}
		}
		sums[key{bv, xv}] = append(sums[key{bv, xv}], v)
	}
	if len(sums) == 0 {
		return nil, usagef("-y: no record has metric %q (a workload metric, lkp metric, counter or profile.SYMBOL)", y)
	}
	d := &plotData{Title: y + " by " + x, XLabel: x, YLabel: y}
	pos := map[string]float64{}
	if allNumeric {
		sort.SliceStable(xOrder, func(i, j int) bool {
			a, _ := numeric(xOrder[i])
			b, _ := numeric(xOrder[j])
			return a < b
		})
		for _, xv := range xOrder {
			pos[xv], _ = numeric(xv)
		}
	} else {
		for i, xv := range xOrder {
			pos[xv] = float64(i)
		}
		d.XNames = xOrder
	}
	for _, bv := range byOrder {
		s := series{Label: bv}
		if bv == "" {
			s.Label = y
		}
		for _, xv := range xOrder {
			vals, ok := sums[key{bv, xv}]
			if !ok {
				continue
			}
			var m float64
			for _, v := range vals {
				m += v
			}
			s.X = append(s.X, pos[xv])
			s.Y = append(s.Y, m/float64(len(vals)))
			s.N = append(s.N, len(vals))
		}
		d.Series = append(d.Series, s)
	}
	return d, nil
}

func paramNames(r *record) []string {
	var n []string
	for k := range r.Config.Params {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// cdfSeries is the CDF of histogram hist, the records of each by value
// merged: one point per bucket, (value, fraction of samples <= value).
func cdfSeries(recs []*record, hist, by string) (*plotData, error) {
	merged := map[string]map[uint64]uint64{}
	var order []string
	unit := ""
	var names []string
	seenName := map[string]bool{}
	for _, r := range recs {
		for _, h := range r.Histograms {
			if !seenName[h.Name] {
				seenName[h.Name] = true
				names = append(names, h.Name)
			}
			if hist == "" {
				hist = h.Name
			}
			if h.Name != hist {
				continue
			}
			unit = h.Unit
			bv := ""
			if by != "" {
				bv = r.axis(by)
			}
			m := merged[bv]
			if m == nil {
				m = map[uint64]uint64{}
				merged[bv] = m
				order = append(order, bv)
			}
			for _, b := range h.Buckets {
				m[b.Value] += b.Count
			}
		}
	}
	if len(merged) == 0 {
		if len(names) == 0 {
			return nil, usagef("-cdf: the records hold no histograms (schbench and hopper runs have them)")
		}
		return nil, usagef("-hist: no histogram %q in the records (they have: %s)", hist, strings.Join(names, ", "))
	}
	d := &plotData{Title: hist + " latency CDF", XLabel: hist + " (" + unit + ", log)", YLabel: "fraction of samples <=", LogX: true}
	for _, bv := range order {
		m := merged[bv]
		vals := make([]uint64, 0, len(m))
		var total uint64
		for v, c := range m {
			vals = append(vals, v)
			total += c
		}
		sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
		s := series{Label: bv}
		if bv == "" {
			s.Label = hist
		}
		var cum uint64
		for _, v := range vals {
			cum += m[v]
			if v == 0 {
				continue // no place on a log axis; counted in the fraction
			}
			s.X = append(s.X, float64(v))
			s.Y = append(s.Y, float64(cum)/float64(total))
		}
		d.Series = append(d.Series, s)
	}
	return d, nil
}

// render draws d into file (.png, .svg, .pdf, by the extension).
func render(d *plotData, file string) error {
	p := plot.New()
	p.Title.Text = d.Title
	p.X.Label.Text = d.XLabel
	p.Y.Label.Text = d.YLabel
	p.Add(plotter.NewGrid())
	if d.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	var vs []any
	for _, s := range d.Series {
		xys := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xys[i].X, xys[i].Y = s.X[i], s.Y[i]
		}
		if len(xys) == 0 {
			continue
		}
		vs = append(vs, s.Label, xys)
	}
	if err := plotutil.AddLinePoints(p, vs...); err != nil {
		return err
	}
	if len(d.XNames) > 0 {
		p.NominalX(d.XNames...)
	}
	if !d.LogX {
		p.Y.Min = math.Min(p.Y.Min, 0)
		p.Y.Max *= 1.05
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, file)
}

func runPlot(args []string, stdout, stderr io.Writer) error {
	var x, y, by, out, hist string
	var cdf bool
	fs := newFlags("plot", plotUsage, stderr)
	fs.StringVar(&x, "x", "", "the axis: topo, features, seed, cpus, or a workload flag (nr, g, ...)")
	fs.StringVar(&y, "y", "", "the metric (netperf.throughput_per_client, hackbench.throughput, rate.wakeups_per_sec, profile.SYMBOL)")
	fs.StringVar(&by, "by", "", "one line per value of this axis (features, topo, ...)")
	fs.StringVar(&out, "o", "plot.png", "output FILE: .png, .svg or .pdf")
	fs.BoolVar(&cdf, "cdf", false, "latency CDFs from the records' histograms")
	fs.StringVar(&hist, "hist", "", "-cdf: the histogram (wakeup, request, runnable_wait); default the first")
	// FILEs may come before the flags: parse, take the files, repeat.
	var files []string
	rest := args
	for {
		if err := parse(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) == 0 {
		fs.Usage()
		return usagef("plot: need at least one FILE.ndjson or DIR")
	}
	switch ext := strings.ToLower(filepath.Ext(out)); ext {
	case ".png", ".svg", ".pdf":
	default:
		return usagef("-o: %q: the extension picks the format (allowed: .png, .svg, .pdf)", out)
	}
	if !cdf && (x == "" || y == "") {
		return usagef("plot: -x and -y are needed (or -cdf)")
	}
	if err := checkOutputs([][2]string{{"-o", out}}); err != nil {
		return err
	}
	recs, err := readRecords(files)
	if err != nil {
		return err
	}
	var d *plotData
	if cdf {
		d, err = cdfSeries(recs, hist, by)
	} else {
		d, err = sweepSeries(recs, x, y, by)
	}
	if err != nil {
		return err
	}
	if err := render(d, out); err != nil {
		return err
	}
	n := 0
	for _, s := range d.Series {
		n += len(s.X)
	}
	fmt.Fprintf(stdout, "emu plot: %s: %d series, %d points from %d records\n", out, len(d.Series), n, len(recs))
	return nil
}
