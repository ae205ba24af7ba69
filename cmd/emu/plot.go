package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const plotUsage = `usage: emu plot FILE.ndjson|DIR ... -x AXIS -y METRIC [-by AXIS] [-o FILE.png|.svg]
       emu plot -cdf [-hist NAME] FILE.ndjson|DIR ... [-by AXIS] [-o FILE.png|.svg]

Plots NDJSON records (emu run -o, emu reproduce -o, emu sweep) with
gonum/plot. The first form draws METRIC over a sweep axis, one line per
value of -by, each point the mean over the records (seeds) there, with
error bars of their standard deviation where there are several. The
title names the machines and workloads, the axes their units. The
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
	// N is the number of records behind each point (sweep plots); Err
	// their population standard deviation, drawn as error bars where N
	// > 1 (a sweep with -seeds N).
	N   []int     `json:"n,omitempty"`
	Err []float64 `json:"err,omitempty"`
}

// plotData is what a plot draws.
type plotData struct {
	Title, XLabel, YLabel string
	// XNames label a category axis (X then holds 0, 1, ...).
	XNames []string `json:",omitempty"`
	// XSuffix follows each X tick label ("%": nr given in percent).
	XSuffix string `json:",omitempty"`
	LogX    bool
	Series  []series
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
	w, t := recordsWorkload(recs)
	d := &plotData{
		Title:  plotTitle(recs, y+" by "+x),
		XLabel: withUnit(x, axisUnit(w, x, xOrder[0])),
		YLabel: withUnit(y, metricUnit(w, t, y)),
	}
	if strings.HasSuffix(xOrder[0], "%") {
		d.XSuffix = "%"
	}
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
	seeds := 0
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
			m, sd := meanSD(vals)
			s.X = append(s.X, pos[xv])
			s.Y = append(s.Y, m)
			s.N = append(s.N, len(vals))
			s.Err = append(s.Err, sd)
			seeds = max(seeds, len(vals))
		}
		d.Series = append(d.Series, s)
	}
	if seeds > 1 {
		d.Title += fmt.Sprintf("\nmean ± standard deviation of the runs at each point (up to %d)", seeds)
	} else {
		for i := range d.Series {
			d.Series[i].Err = nil
		}
	}
	return d, nil
}

// meanSD is the mean and population standard deviation of vals.
func meanSD(vals []float64) (float64, float64) {
	var m, ss float64
	for _, v := range vals {
		m += v
	}
	m /= float64(len(vals))
	for _, v := range vals {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(vals)))
}

// recordsWorkload is the records' workload and netperf test ("" where
// they differ).
func recordsWorkload(recs []*record) (w, t string) {
	for i, r := range recs {
		rt := r.Config.Params["t"]
		if r.Config.Workload == "netperf" && rt == "" {
			rt = "UDP_RR" // netperf's default -t
		}
		if i == 0 {
			w, t = r.Config.Workload, rt
		}
		if r.Config.Workload != w {
			w = ""
		}
		if rt != t {
			t = ""
		}
	}
	return w, t
}

// plotTitle names the machines and workloads of the records, then what
// is drawn: "netperf UDP_RR on hikey-8: ...".
func plotTitle(recs []*record, what string) string {
	var topos, loads []string
	seen := map[string]bool{}
	for _, r := range recs {
		if !seen["t:"+r.Config.Topo] {
			seen["t:"+r.Config.Topo] = true
			topos = append(topos, r.Config.Topo)
		}
		l := r.Config.Workload
		if r.Config.Workload == "netperf" && r.Config.Params["t"] != "" {
			l += " " + r.Config.Params["t"]
		}
		if !seen["w:"+l] {
			seen["w:"+l] = true
			loads = append(loads, l)
		}
	}
	return strings.Join(loads, ", ") + " on " + strings.Join(topos, ", ") + ": " + what
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
	if unit == "usec" {
		unit = "µs"
	}
	d := &plotData{
		Title:  plotTitle(recs, hist+" latency CDF"),
		XLabel: hist + " latency (" + unit + ", log scale)",
		YLabel: "fraction of samples ≤ x",
		LogX:   true,
	}
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
