package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hbSlice is a hackbench load whose senders run long enough between
// blocks (20 kB messages through pipes) for the base slice to decide who
// runs: the acceptance load of -sched base_slice_ns.
var hbSlice = []string{"-driver", "serial", "-topo", "hikey-8", "-workload", "hackbench", "-g", "1", "-l", "20", "-s", "20000", "--pipe", "-json"}

type runJSON struct {
	Config struct {
		Features string            `json:"features"`
		Sched    map[string]uint64 `json:"sched"`
	} `json:"config"`
	Result struct {
		Values map[string]float64 `json:"values"`
	} `json:"result"`
}

func runJSONOf(t *testing.T, args ...string) runJSON {
	t.Helper()
	code, out, errs := runEmu(append([]string{"run", "-progress=false"}, args...)...)
	if code != 0 {
		t.Fatalf("emu run %q: exit %d: %s", args, code, errs)
	}
	var r runJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSchedBaseSliceChangesHackbench: -sched base_slice_ns=1000000 (the
// v6.6 default on 8+ CPUs is 3 ms) changes hackbench's time (2.8 ms
// stopped changing this small run once the pipe mutex's hold shrank:
// no slice ran out between 2.8 and 3 ms), the -json
// config carries the knob, and the same setting given as the feature
// set's ;sched: part runs the same kernel.
func TestSchedBaseSliceChangesHackbench(t *testing.T) {
	skipUnderRace(t)
	def := runJSONOf(t, hbSlice...)
	tuned := runJSONOf(t, append(hbSlice, "-sched", "base_slice_ns=1000000")...)
	inSpec := runJSONOf(t, append(hbSlice, "-features", "v6.6-eevdf;sched:base_slice_ns=1000000")...)
	if def.Config.Sched["base_slice_ns"] != 3_000_000 || tuned.Config.Sched["base_slice_ns"] != 1_000_000 {
		t.Errorf("config.sched.base_slice_ns: %d by default, %d with -sched; want 3000000 and 1000000",
			def.Config.Sched["base_slice_ns"], tuned.Config.Sched["base_slice_ns"])
	}
	if _, ok := def.Config.Sched["latency_ns"]; ok {
		t.Errorf("config.sched lists latency_ns for an EEVDF kernel: %v", def.Config.Sched)
	}
	a, b := def.Result.Values["time_sec"], tuned.Result.Values["time_sec"]
	if a == 0 || a == b {
		t.Errorf("hackbench time %v s with the default slice, %v s with 1 ms: want a change", a, b)
	}
	if tuned.Config.Features != "v6.6-eevdf;sched:base_slice_ns=1000000" || inSpec.Config.Features != tuned.Config.Features ||
		inSpec.Result.Values["time_sec"] != b {
		t.Errorf("-sched gives %q (%v s), ;sched: gives %q (%v s); want the same canonical kernel and result",
			tuned.Config.Features, b, inSpec.Config.Features, inSpec.Result.Values["time_sec"])
	}
}

// TestSchedBadInput: every bad -sched or ;sched: input exits 2 before
// anything runs, with one message naming the flag and the allowed names
// or range.
func TestSchedBadInput(t *testing.T) {
	tiny := []string{"-topo", "hikey-8", "-workload", "hackbench", "-g", "1", "-l", "1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"run", "-sched", "slice=5"}, tiny...),
			`-sched: unknown tunable "slice" (allowed: base_slice_ns, latency_ns, min_granularity_ns, wakeup_granularity_ns, tunable_scaling, migration_cost_ns, nr_migrate, tg_load_avg_ratelimit_ns, sched_schedstats, sched_util_clamp_min, sched_util_clamp_max)`},
		{append([]string{"run", "-sched", "base_slice_ns"}, tiny...), `-sched: "base_slice_ns" is not NAME=VALUE (allowed names: base_slice_ns,`},
		{append([]string{"run", "-sched", "base_slice_ns=5"}, tiny...), "-sched: base_slice_ns=5: out of range (allowed: 100000 to 1000000000)"},
		{append([]string{"run", "-sched", "nr_migrate=lots"}, tiny...), "-sched: nr_migrate=lots: not a decimal integer (allowed: 0 to 4294967295)"},
		{append([]string{"run", "-sched", "latency_ns=12000000"}, tiny...), "-sched: latency_ns is a CFS kernel's knob, and this feature set's kernel is EEVDF"},
		{append([]string{"run", "-features", "v5.15-cfs", "-sched", "base_slice_ns=2800000"}, tiny...), "-sched: base_slice_ns is an EEVDF kernel's knob"},
		{append([]string{"run", "-sched", "sched_util_clamp_max=512"}, tiny...), "-sched: sched_util_clamp_min=1024 is above sched_util_clamp_max=512"},
		{append([]string{"run", "-features", "v6.6-eevdf;sched:tunable_scaling=3"}, tiny...), "-features: tunable_scaling=3: out of range (allowed: 0 to 2)"},
		{append([]string{"run", "-features", "v6.6-eevdf;base_slice_ns=1"}, tiny...), `-features: "base_slice_ns=1" after ';' is not sched:NAME=VALUE`},
		{append([]string{"compare", "-seeds", "1", "-patch", "v6.6-eevdf;sched:bogus=1"}, tiny...), `-patch: unknown tunable "bogus"`},
		{append([]string{"compare", "-seeds", "1", "-base", "v5.15-cfs", "-patch", "v6.6-eevdf", "-sched", "base_slice_ns=2800000"}, tiny...), "-sched: base_slice_ns is an EEVDF kernel's knob"},
		{append([]string{"sweep", "-count", "-sched", "base_slice_ns=1000000,7"}, tiny...), "-sched: base_slice_ns=7: out of range"},
		{append([]string{"sweep", "-count", "-sched", "base_slice_ns"}, tiny...), `-sched: "base_slice_ns" is not NAME=V1,V2,...`},
		{append([]string{"sweep", "-count", "-sched", "nr_migrate=1", "-sched", "nr_migrate=2"}, tiny...), "-sched: nr_migrate given twice"},
		{append([]string{"sweep", "-count", "-features", "v5.15-cfs|v6.6-eevdf", "-sched", "latency_ns=1000000"}, tiny...), "-sched: latency_ns is a CFS kernel's knob"},
		{[]string{"features", "v6.6-eevdf;sched:nr_migrate=-1"}, "features: nr_migrate=-1: not a decimal integer"},
	} {
		code, out, errs := runEmu(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "emu:") != 1 || out != "" {
			t.Errorf("emu %q: exit %d, stdout %q, stderr %q; want exit 2 and one message containing %q", tc.args, code, out, errs, tc.want)
		}
	}
}

// TestSchedSweepAxes: each -sched flag is an axis crossed with the
// feature sets, each point's kernel canonical, and its command line runs
// that kernel.
func TestSchedSweepAxes(t *testing.T) {
	args := strings.Fields("-topo hikey-8 -features v6.6-eevdf,+TG_LOAD_RATELIMIT -sched base_slice_ns=1000000,3000000 " +
		"-sched tg_load_avg_ratelimit_ns=500000|2000000 -workload hackbench -g 1 -l 5")
	sw, o, err := parseSweep(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := sw.jobs()
	var got []string
	for _, j := range jobs {
		got = append(got, j.run.Features)
	}
	want := []string{
		"v6.6-eevdf;sched:base_slice_ns=1000000,tg_load_avg_ratelimit_ns=500000",
		"v6.6-eevdf;sched:base_slice_ns=1000000,tg_load_avg_ratelimit_ns=2000000",
		"v6.6-eevdf;sched:base_slice_ns=3000000,tg_load_avg_ratelimit_ns=500000",
		"v6.6-eevdf;sched:base_slice_ns=3000000,tg_load_avg_ratelimit_ns=2000000",
		"v6.6-eevdf,+TG_LOAD_RATELIMIT;sched:base_slice_ns=1000000,tg_load_avg_ratelimit_ns=500000",
		"v6.6-eevdf,+TG_LOAD_RATELIMIT;sched:base_slice_ns=1000000,tg_load_avg_ratelimit_ns=2000000",
		"v6.6-eevdf,+TG_LOAD_RATELIMIT;sched:base_slice_ns=3000000,tg_load_avg_ratelimit_ns=500000",
		"v6.6-eevdf,+TG_LOAD_RATELIMIT;sched:base_slice_ns=3000000,tg_load_avg_ratelimit_ns=2000000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sweep kernels:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cmd := o.command(jobs[1]); !strings.Contains(cmd, "-features 'v6.6-eevdf;sched:base_slice_ns=1000000,tg_load_avg_ratelimit_ns=2000000'") {
		t.Errorf("point 1's command line %q does not carry its kernel quoted", cmd)
	}
}

// TestSchedRecords: an NDJSON record carries the kernel's canonical spec
// and the tunables in force, which merge groups by and plot reads as an
// axis.
func TestSchedRecords(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.ndjson")
	for _, slice := range []string{"1000000", "3000000"} {
		code, _, errs := runEmu("sweep", "-o", out, "-topo", "hikey-8", "-sched", "base_slice_ns="+slice, "-workload", "hackbench", "-g", "1", "-l", "5")
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s", code, errs)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decodeRecords(bytes.NewReader(b), out)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, slice := range []string{"1000000", "3000000"} {
		r := recs[i]
		if r.Config.Features != "v6.6-eevdf;sched:base_slice_ns="+slice || r.axis("base_slice_ns") != slice || r.axis("nr_migrate") != "32" {
			t.Errorf("record %d: features %q, base_slice_ns axis %q, nr_migrate %q", i, r.Config.Features, r.axis("base_slice_ns"), r.axis("nr_migrate"))
		}
	}
	code, table, errs := runEmu("merge", out)
	if code != 0 || !strings.Contains(table, "v6.6-eevdf;sched:base_slice_ns=1000000") || !strings.Contains(table, "v6.6-eevdf;sched:base_slice_ns=3000000") {
		t.Errorf("merge: exit %d (%s), table lacks the two kernels:\n%s", code, errs, table)
	}
}

// TestSchedCompare: compare's -sched applies to both sides and each
// side's ;sched: part wins over it; the table names each side's kernel.
func TestSchedCompare(t *testing.T) {
	code, out, errs := runEmu("compare", "-progress=false", "-seeds", "1", "-sched", "nr_migrate=8",
		"-base", "v6.6-eevdf", "-patch", "v6.6-eevdf;sched:base_slice_ns=2800000,nr_migrate=16",
		"-topo", "hikey-8", "-workload", "hackbench", "-g", "1", "-l", "5")
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "\n  v6.6-eevdf;sched:nr_migrate=8\n  v6.6-eevdf;sched:base_slice_ns=2800000,nr_migrate=16\n") {
		t.Errorf("compare's features block does not name both kernels:\n%s", out)
	}
}

// TestFeaturesListsTunables: emu features prints every knob with its
// default per profile ("-" where the profile's kernel lacks it), and a
// feature set's tunables in force.
func TestFeaturesListsTunables(t *testing.T) {
	code, out, errs := runEmu("features")
	if code != 0 {
		t.Fatalf("features: exit %d: %s", code, errs)
	}
	rows := map[string][]string{}
	var header []string
	for _, l := range strings.Split(out[strings.Index(out, "\ntunables (-sched"):], "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && strings.HasPrefix(f[0], "v5.15-cfs") {
			header = f
		}
		if len(f) == len(header)+1 && header != nil {
			rows[f[0]] = f[1:]
		}
	}
	col := func(p string) int { return slices.Index(header, p) }
	for knob, want := range map[string][2]string{ // v5.15-cfs, v6.6-eevdf
		"base_slice_ns":            {"-", "3000000"},
		"latency_ns":               {"24000000", "-"},
		"min_granularity_ns":       {"3000000", "-"},
		"wakeup_granularity_ns":    {"4000000", "-"},
		"tunable_scaling":          {"1", "1"},
		"migration_cost_ns":        {"500000", "500000"},
		"nr_migrate":               {"32", "32"},
		"tg_load_avg_ratelimit_ns": {"1000000", "1000000"},
		"sched_schedstats":         {"1", "1"},
		"sched_util_clamp_min":     {"1024", "1024"},
		"sched_util_clamp_max":     {"1024", "1024"},
	} {
		r := rows[knob]
		if r == nil || col("v5.15-cfs") < 0 || col("v6.6-eevdf") < 0 || r[col("v5.15-cfs")] != want[0] || r[col("v6.6-eevdf")] != want[1] {
			t.Errorf("emu features: %s row %v (header %v), want %s under v5.15-cfs and %s under v6.6-eevdf", knob, r, header, want[0], want[1])
		}
	}
	code, out, _ = runEmu("features", "v6.6-eevdf;sched:base_slice_ns=2800000,sched_schedstats=0")
	if code != 0 || !strings.Contains(out, "sched (8+ CPUs): base_slice_ns=2800000 tunable_scaling=1 ") || !strings.Contains(out, " sched_schedstats=0 ") {
		t.Errorf("emu features with tunables: exit %d:\n%s", code, out)
	}
}
