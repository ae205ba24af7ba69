package main

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// metricUnit is the unit of a metric of records of workload w (the
// netperf test t picks transactions or bits); "" where none is known.
func metricUnit(w, t, name string) string {
	if _, ok := strings.CutPrefix(name, "profile."); ok {
		return "% of cycles"
	}
	base := strings.TrimPrefix(name, w+".")
	switch base {
	case "throughput", "throughput_per_client":
		switch {
		case w == "netperf" && strings.HasSuffix(t, "_RR"):
			return "transactions/s"
		case w == "netperf" && strings.HasSuffix(t, "_STREAM"):
			return "10^6 bits/s"
		case w == "hackbench":
			return "KiB/s"
		}
	case "Throughput_tps", "Throughput_total_tps", "tps":
		return "transactions/s"
	case "Throughput_Mbps", "Throughput_total_Mbps":
		return "10^6 bits/s"
	case "qps":
		return "queries/s"
	}
	base = base[strings.LastIndexByte(base, '.')+1:]
	for _, u := range []struct{ suffix, unit string }{
		{"_usec", "µs"}, {"_us", "µs"}, {"_ms", "ms"}, {"_ns", "ns"}, {"_sec", "s"}, {"_pct", "%"},
	} {
		if strings.HasSuffix(base, u.suffix) && !strings.HasSuffix(base, "_per"+u.suffix) {
			return u.unit
		}
	}
	if what, ok := strings.CutSuffix(base, "_per_sec"); ok {
		return strings.ReplaceAll(what, "_", " ") + "/s"
	}
	return ""
}

// axisUnit is the unit of a sweep axis (a workload flag, a tunable, cpus)
// of workload w; sample is one of its values ("25%": nr in percent).
func axisUnit(w, name, sample string) string {
	switch {
	case name == "nr" && strings.HasSuffix(sample, "%"):
		return "clients, % of CPUs"
	case name == "nr" || name == "threads" && w == "sysbench":
		return "clients"
	case name == "cpus":
		return "CPUs"
	case strings.HasSuffix(name, "_ns"):
		return "ns"
	}
	units := map[string]map[string]string{
		"hackbench": {"g": "groups", "groups": "groups", "f": "fds", "fds": "fds", "l": "loops", "loops": "loops", "s": "bytes", "datasize": "bytes"},
		"messaging": {"g": "groups", "l": "loops"},
		"pipe":      {"l": "loops"},
		"netperf":   {"l": "s, virtual"},
		"sysbench":  {"time": "s, virtual"},
		"stress-ng": {"t": "s, virtual"},
		"schbench":  {"m": "message threads", "t": "workers per message thread", "r": "s, virtual", "s": "µs", "n": "operations"},
		"hopper":    {"n": "threads per CPU", "b": "µs", "d": "ms, virtual"},
	}
	return units[w][strings.TrimLeft(name, "-")]
}

// withUnit is "label (unit)", or label alone.
func withUnit(label, unit string) string {
	if unit == "" {
		return label
	}
	return label + " (" + unit + ")"
}

// tickScale is the k/M/G step for an axis whose largest value is max
// (50000 is "50k", 6000000 "6M"; below 10^4 no suffix).
func tickScale(max float64) (float64, string) {
	for _, s := range []struct {
		min, scale float64
		suffix     string
	}{{1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}} {
		if math.Abs(max) >= s.min {
			return s.scale, s.suffix
		}
	}
	return 1, ""
}

// numLabel prints v/scale short: 6 significant digits at most, no
// trailing zeros (no "50000.00").
func numLabel(v, scale float64, suffix string) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v/scale, 'g', 6, 64), 64)
	if v == 0 {
		return "0" // not "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + suffix
}

// linTicks are gonum's default tick positions with numLabel labels, one
// k/M/G scale for the axis, and a suffix ("%" on a percentage axis).
type linTicks struct{ suffix string }

func (t linTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	scale, unit := tickScale(math.Max(math.Abs(min), math.Abs(max)))
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = numLabel(ts[i].Value, scale, unit) + t.suffix
		}
	}
	return ts
}

// logTicks label each power of ten once (1, 2 and 5 times it too when
// the range spans one decade), with unlabeled minor ticks between:
// gonum's LogTicks gives each decade two ticks, one labeled.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if min <= 0 || max <= min {
		return nil
	}
	lo, hi := math.Floor(math.Log10(min)), math.Ceil(math.Log10(max))
	decades := 0
	for e := lo; e <= hi; e++ {
		if v := math.Pow(10, e); v >= min && v <= max {
			decades++
		}
	}
	var ts []plot.Tick
	for e := lo; e <= hi; e++ {
		d := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := d * float64(m)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || decades < 3 && (m == 2 || m == 5) {
				sc, u := tickScale(v)
				t.Label = numLabel(v, sc, u)
			}
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Value < ts[j].Value })
	return ts
}
