package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every workload lkp has a parser for carries lkp's metrics in -json and
// NDJSON (no "lkp": null), and NDJSON keeps the report merge re-reads.
func TestRunJSONCarriesLKP(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		key  string
	}{
		{[]string{"-workload", "schbench", "-m", "1", "-t", "2", "-r", "1"}, "schbench.wakeup_latency_99%_us"},
		{[]string{"-workload", "pipe", "-l", "200"}, "perf-bench-sched-pipe.ops_per_sec"},
		{[]string{"-workload", "messaging", "-g", "1", "-l", "20"}, "perf-bench-sched-messaging.total_time_sec"},
		{[]string{"-workload", "sysbench", "--threads", "2", "--time", "0.005"}, "oltp.transactions/s"},
	} {
		nd := filepath.Join(dir, "r.ndjson")
		os.Remove(nd)
		args := append([]string{"run", "-topo", "hikey-8", "-progress=false", "-json", "-o", nd}, c.args...)
		code, out, errs := runEmu(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		var js struct {
			LKP map[string]float64 `json:"lkp"`
		}
		if err := json.Unmarshal([]byte(out), &js); err != nil {
			t.Fatal(err)
		}
		if _, ok := js.LKP[c.key]; !ok {
			t.Errorf("%v: -json's lkp has no %s: %v", c.args, c.key, js.LKP)
		}
		recs, err := readRecords([]string{nd})
		if err != nil || len(recs) != 1 {
			t.Fatalf("%v: %v, %d records", c.args, err, len(recs))
		}
		if _, ok := recs[0].LKP[c.key]; !ok || recs[0].Report == "" {
			t.Errorf("%v: NDJSON lkp %v (want %s), report %q", c.args, recs[0].LKP, c.key, recs[0].Report)
		}
	}
}

// A wrong LKP_SRC makes compare and merge exit 2 with one error that
// names it and what it must be, before any run.
func TestLKPSrcWrong(t *testing.T) {
	nd := filepath.Join(t.TempDir(), "r.ndjson")
	if code, _, errs := runEmu("run", "-topo", "hikey-8", "-progress=false", "-o", nd, "-workload", "pipe", "-l", "100"); code != 0 {
		t.Fatal(errs)
	}
	empty := t.TempDir()
	for _, c := range []struct {
		src  string
		args []string
		want string
	}{
		{"/nonexistent/lkp-tests", []string{"compare", "-topo", "hikey-8", "-patch", "v6.6-eevdf,-RUN_TO_PARITY", "-seeds", "1", "-workload", "pipe", "-l", "100"},
			"LKP_SRC=/nonexistent/lkp-tests: not a directory (it must be an lkp-tests checkout"},
		{empty, []string{"merge", nd}, "LKP_SRC=" + empty + ": no programs/perf-bench-sched-pipe/parse, lkp's parser of pipe"},
	} {
		t.Setenv("LKP_SRC", c.src)
		code, out, errs := runEmu(c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "LKP_SRC=") != 1 || out != "" {
			t.Errorf("%v with LKP_SRC=%s: exit %d, stdout %q, stderr %q; want 2 and %q", c.args[0], c.src, code, out, errs, c.want)
		}
	}
}

// With LKP_SRC, compare's and merge's lkp rows come from lkp's own
// parsers, and they print the same table as the ports (the same
// metrics, values and keys).
func TestLKPSrcCompareMerge(t *testing.T) {
	src := os.Getenv("LKP_SRC")
	if src == "" {
		t.Skip("LKP_SRC not set (an lkp-tests checkout; .ci/run fetches one)")
	}
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("ruby not installed")
	}
	dir := t.TempDir()
	for _, w := range [][]string{
		{"-workload", "netperf", "-t", "UDP_STREAM", "-nr", "2", "-l", "0.003"},
		{"-workload", "schbench", "-m", "1", "-t", "2", "-r", "1"},
	} {
		args := append([]string{"compare", "-topo", "hikey-8", "-progress=false", "-patch", "v6.6-eevdf,-RUN_TO_PARITY", "-seeds", "2"}, w...)
		t.Setenv("LKP_SRC", src)
		code, lkp, errs := runEmu(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", w, code, errs)
		}
		t.Setenv("LKP_SRC", "")
		_, ports, _ := runEmu(args...)
		if lkp != ports {
			t.Errorf("%v: compare with lkp's parsers:\n%s\nwith the ports:\n%s", w, lkp, ports)
		}
		if !strings.Contains(lkp, "  "+w[1]+".") {
			t.Errorf("%v: no %s. rows:\n%s", w, w[1], lkp)
		}
		// merge: records whose lkp rows are wrong are read again.
		nd := filepath.Join(dir, w[1]+".ndjson")
		for _, feat := range []string{"v6.6-eevdf", "v6.6-eevdf,-RUN_TO_PARITY"} {
			if code, _, errs := runEmu(append([]string{"run", "-topo", "hikey-8", "-progress=false", "-features", feat, "-o", nd}, w...)...); code != 0 {
				t.Fatal(errs)
			}
		}
		_, want, _ := runEmu("merge", nd)
		recs, err := readRecords([]string{nd})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(nd)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.LKP = map[string]float64{w[1] + ".bogus": 1}
			b, _ := json.Marshal(r)
			f.Write(append(b, '\n'))
		}
		f.Close()
		t.Setenv("LKP_SRC", src)
		code, got, errs := runEmu("merge", nd)
		if code != 0 || got != want {
			t.Errorf("%v: merge with lkp's parsers (exit %d, %s):\n%s\nwant (the ports' rows):\n%s", w, code, errs, got, want)
		}
		// A record without its report keeps its lkp rows, with a warning.
		f, err = os.Create(nd)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			r.Report = ""
			b, _ := json.Marshal(r)
			f.Write(append(b, '\n'))
		}
		f.Close()
		code, got, errs = runEmu("merge", nd)
		if code != 0 || !strings.Contains(got, w[1]+".bogus") || !strings.Contains(errs, "emu merge: warning: 2 of the 2 records carry no report") {
			t.Errorf("%v: merge of records without reports: exit %d, %s\n%s", w, code, errs, got)
		}
	}
}
