package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updatePlot = flag.Bool("update-plot", false, "rewrite cmd/emu/testdata/plot-*.golden")

func TestSplitFeatures(t *testing.T) {
	for in, want := range map[string]string{
		"v6.6-eevdf":                          "v6.6-eevdf",
		"v6.6-eevdf,+TG_LOAD_RATELIMIT":       "v6.6-eevdf;v6.6-eevdf,+TG_LOAD_RATELIMIT",
		"v5.15-cfs,+PLACE_MIGRATE,v6.6-eevdf": "v5.15-cfs;v5.15-cfs,+PLACE_MIGRATE;v6.6-eevdf",
		"v6.6-eevdf,+A,-B":                    "v6.6-eevdf;v6.6-eevdf,+A;v6.6-eevdf,-B",
		"v6.6-eevdf|v6.6-eevdf,+TTWU_QUEUE_L2,+TG_LOAD_RATELIMIT": "v6.6-eevdf;v6.6-eevdf,+TTWU_QUEUE_L2,+TG_LOAD_RATELIMIT",
	} {
		if got := strings.Join(splitFeatures(in), ";"); got != want {
			t.Errorf("splitFeatures(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSweepExpansion: the grid's cross product in order (topo, features,
// the workload axes as given, seeds innermost), fixed flags kept, a
// comma inside netperf's -r not split, and each point's command line.
func TestSweepExpansion(t *testing.T) {
	args := strings.Fields("-topo spr-2s,icl-2s -features v6.6-eevdf,+TG_LOAD_RATELIMIT -seeds 2 -seed 5 -o out/ " +
		"-workload netperf -t UDP_RR -nr 25%,100% -r 1,1 -l 0.002 -cgroup docker")
	sw, o, err := parseSweep(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	jobs := sw.jobs()
	if len(jobs) != 2*2*2*2 {
		t.Fatalf("%d points, want 16", len(jobs))
	}
	var got []string
	for _, j := range jobs {
		got = append(got, strings.Join([]string{j.run.Topo, j.run.Features, strings.Join(j.run.Args, " "), string(rune('0' + j.seed))}, "|"))
	}
	want := []string{
		"spr-2s|v6.6-eevdf|-t=UDP_RR -nr=25% -r=1,1 -l=0.002 -cgroup=docker|5",
		"spr-2s|v6.6-eevdf|-t=UDP_RR -nr=25% -r=1,1 -l=0.002 -cgroup=docker|6",
		"spr-2s|v6.6-eevdf|-t=UDP_RR -nr=100% -r=1,1 -l=0.002 -cgroup=docker|5",
		"spr-2s|v6.6-eevdf|-t=UDP_RR -nr=100% -r=1,1 -l=0.002 -cgroup=docker|6",
		"spr-2s|v6.6-eevdf,+TG_LOAD_RATELIMIT|-t=UDP_RR -nr=25% -r=1,1 -l=0.002 -cgroup=docker|5",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("point %d = %q, want %q", i, got[i], w)
		}
	}
	if j := jobs[15]; j.run.Topo != "icl-2s" || j.seed != 6 || j.index != 15 {
		t.Errorf("last point %+v", j)
	}
	cmd := o.command(jobs[3])
	for _, w := range []string{"emu run -progress=false -topo spr-2s -features v6.6-eevdf -seed 6 -o out/run-0003.ndjson -workload netperf", "-nr=100%", "-r=1,1"} {
		if !strings.Contains(cmd, w) {
			t.Errorf("command %q lacks %q", cmd, w)
		}
	}
	if cmd := o.command(jobs[4]); !strings.Contains(cmd, "-features v6.6-eevdf,+TG_LOAD_RATELIMIT") {
		t.Errorf("command %q", cmd)
	}
	// "|" splits a value that holds commas.
	sw, _, err = parseSweep(strings.Fields("-workload netperf -r 1,1|64,64"), &bytes.Buffer{})
	if err != nil || len(sw.jobs()) != 2 || sw.jobs()[1].run.Args[0] != "-r=64,64" {
		t.Errorf("-r 1,1|64,64: %v %+v", err, sw)
	}
	// Bool flags take no value; an unknown flag or a bad value is bad input.
	sw, _, err = parseSweep(strings.Fields("-workload hackbench -g 1,2 --threads --pipe -l 10"), &bytes.Buffer{})
	if err != nil || len(sw.jobs()) != 2 || strings.Join(sw.jobs()[0].run.Args, " ") != "-g=1 -threads=true -pipe=true -l=10" {
		t.Errorf("hackbench grid: %v %+v", err, sw.jobs())
	}
	for _, bad := range []string{"-workload netperf -bogus 1", "-workload hackbench -g 1,x", "-print -count", "-seeds 0", "-workload netperf -nr"} {
		if _, _, err := parseSweep(strings.Fields(bad), &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", bad)
		} else if _, ok := err.(*usageError); !ok {
			t.Errorf("%q: %T %v, want a usage error", bad, err, err)
		}
	}
}

// TestSweepRunsAndMerges runs a 4-point grid here (2 at a time), then
// runs one point by -index, and merges them into compare tables.
func TestSweepRunsAndMerges(t *testing.T) {
	dir := t.TempDir()
	grid := "-topo hikey-8 -features v6.6-eevdf,+TG_LOAD_RATELIMIT -workload netperf -t UDP_RR -nr 2,4 -l 0.001 -cgroup docker"
	var stdout, stderr bytes.Buffer
	if code := run(append(strings.Fields("sweep -j 2 -o "+dir+"/"), strings.Fields(grid)...), &stdout, &stderr); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	if len(files) != 4 {
		t.Fatalf("%d files, want 4", len(files))
	}
	one := filepath.Join(dir, "one", "x.ndjson")
	if code := run(append(strings.Fields("sweep -index 3 -o "+one), strings.Fields(grid)...), &stdout, &stderr); code != 0 {
		t.Fatalf("sweep -index: exit %d: %s", code, stderr.String())
	}
	a, _ := os.ReadFile(files[3])
	b, _ := os.ReadFile(one)
	var ra, rb record
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil {
		t.Fatal("records do not parse")
	}
	if ra.Sweep == nil || ra.Sweep.Index != 3 || ra.Sweep.Of != 4 || ra.Config.Params["nr"] != "4" || ra.Config.Features != "v6.6-eevdf,+TG_LOAD_RATELIMIT" {
		t.Errorf("record 3: %+v %+v", ra.Sweep, ra.Config)
	}
	if ra.Result.Values["throughput"] != rb.Result.Values["throughput"] {
		t.Errorf("the same point twice: %v vs %v", ra.Result.Values, rb.Result.Values)
	}
	stdout.Reset()
	if code := run([]string{"merge", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if n := strings.Count(out, "tbox_group/testcase/"); n != 2 {
		t.Errorf("%d tables, want 2 (nr 2 and 4):\n%s", n, out)
	}
	for _, w := range []string{"hikey-8/netperf/", "v6.6-eevdf,+TG_LOAD_RATELIMIT", "netperf.Throughput_tps", "perf-profile.self.cycles-pp.update_cfs_group"} {
		if !strings.Contains(out, w) {
			t.Errorf("merge output lacks %q:\n%s", w, out)
		}
	}
}

// TestMergeGroups: records group by machine, workload and arguments; the
// sides pair by seed; -base picks the base.
func TestMergeGroups(t *testing.T) {
	recs, err := readRecords([]string{"testdata/sweep.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	groups := groupRecords(recs)
	if len(groups) != 4 {
		t.Fatalf("%d groups, want 4 (one per nr)", len(groups))
	}
	for _, g := range groups {
		if len(g.features) != 2 || len(g.bySide[g.features[0]]) != 2 {
			t.Errorf("group %v: features %v", g.args, g.features)
		}
	}
	var out bytes.Buffer
	writeMerge(&out, recs, "v6.6-eevdf,+TG_LOAD_RATELIMIT")
	text := out.String()
	if strings.Count(text, "tbox_group/") != 4 || !strings.Contains(text, "features: \n  v6.6-eevdf,+TG_LOAD_RATELIMIT\n  v6.6-eevdf\n") {
		t.Errorf("merge with -base:\n%s", text)
	}
	// The 100% group: base 50001/50002, patch 75001/75002 (+50.0%).
	if !strings.Contains(text, "seeds:\n  spr-2s/netperf/UDP_RR/100%/0.002/2") {
		t.Errorf("common axes:\n%s", text)
	}
	if _, err := decodeRecords(strings.NewReader("{\"config\":{}}\n"), "x"); err == nil {
		t.Error("a record without a workload decoded")
	}
	if _, err := decodeRecords(strings.NewReader("not json\n"), "x"); err == nil || !strings.Contains(err.Error(), "x:1:") {
		t.Errorf("bad line: %v", err)
	}
}

// TestPlotSeries golden-tests the data series of the two kinds of plot
// (not the pixels), and renders each once as PNG and SVG.
func TestPlotSeries(t *testing.T) {
	for _, c := range []struct {
		name string
		data func([]*record) (*plotData, error)
		file string
	}{
		{"sweep", func(r []*record) (*plotData, error) {
			return sweepSeries(r, "nr", "netperf.throughput_per_client", "features")
		}, "testdata/sweep.jsonl"},
		{"sweep-lkp-by-topo", func(r []*record) (*plotData, error) { return sweepSeries(r, "features", "netperf.Throughput_tps", "") }, "testdata/sweep.jsonl"},
		{"cdf", func(r []*record) (*plotData, error) { return cdfSeries(r, "wakeup", "features") }, "testdata/schbench.jsonl"},
	} {
		recs, err := readRecords([]string{c.file})
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.data(recs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := json.MarshalIndent(d, "", "  ")
		golden := filepath.Join("testdata", "plot-"+c.name+".golden")
		if *updatePlot {
			if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -run TestPlotSeries ./cmd/emu -update-plot writes it)", err)
		}
		if string(want) != string(got)+"\n" {
			t.Errorf("%s: series differ from %s:\n%s", c.name, golden, got)
		}
		for _, ext := range []string{".png", ".svg"} {
			f := filepath.Join(t.TempDir(), c.name+ext)
			if err := render(d, f); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
				t.Errorf("%s: %v %v", f, st, err)
			}
		}
	}
	recs, _ := readRecords([]string{"testdata/sweep.jsonl"})
	if _, err := sweepSeries(recs, "nope", "throughput", ""); err == nil {
		t.Error("-x nope: no error")
	}
	if _, err := sweepSeries(recs, "nr", "nope", ""); err == nil {
		t.Error("-y nope: no error")
	}
	if _, err := cdfSeries(recs, "", ""); err == nil {
		t.Error("-cdf on records without histograms: no error")
	}
}
