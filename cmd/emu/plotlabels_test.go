package main

import (
	"strings"
	"testing"
)

// TestPlotTickLabels: short labels (no "50000.00"), one k/M scale per
// axis, "%" on a percentage axis, and a log axis labeling each value
// once.
func TestPlotTickLabels(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		suffix   string
		want     []string
	}{
		{0, 60000, "", []string{"0", "30k", "60k"}},
		{25, 100, "%", []string{"25%", "50%", "75%", "100%"}},
		{0, 1, "", []string{"0", "0.5", "1"}},
		{0, 3e7, "", []string{"0", "10M", "20M", "30M"}},
		{0, 6e6, "", []string{"0", "3M", "6M"}},
		{0, 1.5e6, "", []string{"0", "0.5M", "1M", "1.5M"}},
	} {
		var got []string
		for _, tk := range (linTicks{suffix: c.suffix}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("ticks %g..%g: %q, want %q", c.min, c.max, got, c.want)
		}
	}
	for _, c := range []struct {
		min, max float64
		want     string
	}{
		{1, 10000, "1 10 100 1000 10k"},
		{10, 100, "10 20 50 100"},
	} {
		seen := map[float64]bool{}
		var got []string
		for _, tk := range (logTicks{}).Ticks(c.min, c.max) {
			if seen[tk.Value] {
				t.Errorf("log ticks %g..%g: %g twice", c.min, c.max, tk.Value)
			}
			seen[tk.Value] = true
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("log ticks %g..%g: %q, want %q", c.min, c.max, got, c.want)
		}
	}
}

// TestPlotUnits: the axis labels carry units.
func TestPlotUnits(t *testing.T) {
	for _, c := range []struct{ w, test, name, want string }{
		{"netperf", "UDP_RR", "netperf.throughput_per_client", "transactions/s"},
		{"netperf", "TCP_STREAM", "throughput", "10^6 bits/s"},
		{"netperf", "UDP_RR", "netperf.Throughput_tps", "transactions/s"},
		{"hackbench", "", "hackbench.throughput", "KiB/s"},
		{"hackbench", "", "time_sec", "s"},
		{"schbench", "", "wakeup_p99_usec", "µs"},
		{"hopper", "", "max_wait_ms", "ms"},
		{"netperf", "UDP_RR", "rate.wakeups_per_sec", "wakeups/s"},
		{"pipe", "", "ops_per_sec", "ops/s"},
		{"netperf", "UDP_RR", "profile.update_cfs_group", "% of cycles"},
		{"sysbench", "", "tps", "transactions/s"},
	} {
		if got := metricUnit(c.w, c.test, c.name); got != c.want {
			t.Errorf("metricUnit(%s, %s): %q, want %q", c.w, c.name, got, c.want)
		}
	}
	for _, c := range []struct{ w, name, sample, want string }{
		{"netperf", "nr", "25%", "clients, % of CPUs"},
		{"netperf", "nr", "4", "clients"},
		{"netperf", "l", "0.005", "s, virtual"},
		{"hackbench", "g", "8", "groups"},
		{"hackbench", "base_slice_ns", "750000", "ns"},
		{"pipe", "seed", "1", ""},
	} {
		if got := axisUnit(c.w, c.name, c.sample); got != c.want {
			t.Errorf("axisUnit(%s, %s): %q, want %q", c.w, c.name, got, c.want)
		}
	}
}
