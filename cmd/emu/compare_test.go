package main

import (
	"strings"
	"testing"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/hwmodel"
)

// The table is compare.rb's: its header block, and rows printed with
// show_perf_change()'s formats (%10.2f / %10d / %10.4g values, " ±%3d%%"
// population stddev above 2%, "%+10.1f%% " changes, "%+10.1f  " points
// for perf-profile), then "  name".
func TestCompareLayout(t *testing.T) {
	m, err := hwmodel.Load("hikey-8", hwmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := bench.Lookup("netperf")
	if err != nil {
		t.Fatal(err)
	}
	st := &setup{m: m, spec: spec, wargs: []string{"-nr=4", "-t=UDP_RR"}}
	mk := func(tps, other, prof float64) sample {
		return sample{
			metrics:  bench.Metrics{Primary: "throughput", Values: map[string]float64{"throughput": other}},
			lkp:      map[string]float64{"netperf.Throughput_total_tps": tps},
			counters: map[string]float64{"rate.migrations_per_sec": 123456789012},
			profile:  map[string]float64{"update_cfs_group": prof},
		}
	}
	res := [][]sample{{mk(100, 5000, 6.5), mk(110, 5000, 6.7)}, {mk(200, 0, 1.2), mk(200, 0, 1.2)}}
	var b strings.Builder
	writeCompare(&b, st, []string{"v6.6-eevdf", "v6.6-eevdf,+TG_LOAD_RATELIMIT"}, res)
	want := strings.Repeat("=", 89) + "\n" +
		"tbox_group/testcase/nr/t/seeds:\n  hikey-8/netperf/4/UDP_RR/2\n\n" +
		"features: \n  v6.6-eevdf\n  v6.6-eevdf,+TG_LOAD_RATELIMIT\n\n" +
		"      v6.6-eevdf v6.6-eevdf,+TG_LOAD_RATELIM \n" +
		"---------------- --------------------------- \n" +
		"         %stddev     %change         %stddev\n" +
		"             \\          |                \\  \n" +
		"    105.00 ±  4%     +90.5%     200.00        netperf.Throughput_total_tps\n" +
		"      5000          -100.0%       0.00        rqemu.netperf.throughput\n" +
		" 1.235e+11            +0.0%  1.235e+11        perf-stat.ps.cpu-migrations\n" +
		"      6.60            -5.4        1.20        perf-profile.self.cycles-pp.update_cfs_group\n\n"
	if got := b.String(); got != want {
		t.Errorf("compare table:\n%s\nwant:\n%s", got, want)
	}
}

// schbench's own -j (its JSON file) and compare's -j collided: compare
// -workload schbench panicked (exit 3). There, runs at once are -jobs.
func TestCompareSchbenchJobs(t *testing.T) {
	base := []string{"compare", "-topo", "hikey-8", "-progress=false", "-patch", "v6.6-eevdf,-RUN_TO_PARITY", "-seeds", "1", "-workload", "schbench", "-m", "1", "-t", "2", "-r", "1"}
	code, out, errs := runEmu(append(base, "-jobs", "2")...)
	if code != 0 || !strings.Contains(out, "schbench.wakeup_latency_99%_us") {
		t.Errorf("compare -workload schbench -jobs 2: exit %d, %s\n%s", code, errs, out)
	}
	code, _, errs = runEmu(append(base, "-j", "2")...)
	if code != 2 || !strings.Contains(errs, "-j: schbench's own -j (its JSON file) is not written by compare; runs at once are -jobs N here") {
		t.Errorf("compare -workload schbench -j 2: exit %d, %q", code, errs)
	}
}
