package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
)

func TestRunPipe(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "schedstat")
	trace := filepath.Join(dir, "run.trace")
	sd := filepath.Join(dir, "sched_debug")
	code, out, errs := runEmu("run", "-topo", "hikey-8", "-workload", "pipe", "-l", "500", "-profile",
		"-schedstat", sched, "-trace", trace, "-trace-window", "2ms", "-sched-debug", sd, "-progress=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# Executed 500 pipe operations between two processes", "usecs/op", "ops/sec",
		"# Children      Self  Shared Object", "[kernel.kallsyms]  [k] __schedule"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "virtual in") {
		t.Errorf("stderr lacks the run summary: %s", errs)
	}
	for _, f := range []struct{ name, want string }{
		{sched, "version 15\n"}, // v6.6-eevdf, the default: stats.c's SCHEDSTAT_VERSION 15
		{sd, "Sched Debug Version: v0.11, 6.6.0-rqemu #1\n"},
		{trace, "sched_switch: prev_comm="},
		{trace + ".counters.json", `"traceEvents"`},
	} {
		b, err := os.ReadFile(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), f.want) {
			t.Errorf("%s lacks %q", f.name, f.want)
		}
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errs := runEmu("run", "-topo", "hikey-8", "-workload", "pipe", "-l", "300", "-json", "-seed", "7", "-cgroup", "docker")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var doc struct {
		Config   map[string]any     `json:"config"`
		Host     map[string]any     `json:"host"`
		Complete bool               `json:"complete"`
		Result   map[string]any     `json:"result"`
		Counters map[string]float64 `json:"counters"`
		Report   string             `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Config["seed"] != 7.0 || doc.Config["topo"] != "hikey-8" || !doc.Complete || doc.Result["primary"] != "ops_per_sec" {
		t.Errorf("json config/result wrong: %v %v", doc.Config, doc.Result)
	}
	if doc.Counters["sched.SchedCount"] == 0 || doc.Counters["sched.TgLoadAvgWrites"] == 0 || doc.Host["go"] == nil {
		t.Errorf("json counters/host missing: %v", doc.Counters)
	}
	if !strings.Contains(doc.Report, "usecs/op") {
		t.Errorf("json report: %q", doc.Report)
	}
}

// Same seed and flags: the same bytes, from either driver.
func TestRunDeterministic(t *testing.T) {
	args := []string{"run", "-topo", "xeon-e5-2x10", "-workload", "pipe", "-l", "400", "-profile", "-progress=false"}
	_, a, _ := runEmu(append(args, "-driver", "serial")...)
	_, b, _ := runEmu(append(args, "-driver", "parallel")...)
	if a != b || a == "" {
		t.Errorf("serial and parallel runs differ:\n%s\n---\n%s", a, b)
	}
}

// TestRunLines: -lines ranks the shared lines; a hackbench in a cgroup on
// hikey-8 stalls most on its task group's tg->load_avg or a runqueue lock.
func TestRunLines(t *testing.T) {
	code, out, errs := runEmu("run", "-topo", "hikey-8", "-workload", "hackbench", "-g", "2", "-f", "4", "-l", "20",
		"-cgroup", "docker", "-lines", "3", "-progress=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	i := strings.Index(out, "# shared lines by stall: 3 of ")
	if i < 0 {
		t.Fatalf("output lacks the line table:\n%s", out)
	}
	rows := strings.Split(strings.TrimSpace(out[i:]), "\n")
	if len(rows) != 5 || !strings.Contains(rows[1], "stall%") || !strings.Contains(rows[1], "xfer l2") {
		t.Fatalf("line table: want a title, a header and 3 rows:\n%s", out[i:])
	}
	for _, r := range rows[2:] {
		if !strings.Contains(r, "(node 0)") {
			t.Errorf("row lacks its line's home: %q", r)
		}
	}
}

func TestRunBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-workload", "nosuch"}, `unknown workload "nosuch" (allowed: `},
		{[]string{"run", "-topo", "hikey-8", "-workload", "pipe", "-l", "-3"}, "-l: loops must be positive"},
		{[]string{"run", "-workload", "pipe", "-topo", "nosuch"}, "nosuch"},
		{[]string{"run", "-workload", "pipe", "-driver", "fast"}, `-driver: "fast" is not a driver (allowed: parallel, serial)`},
		{[]string{"run", "-workload", "pipe", "-features", "v6.6-eevdf,+NOPE"}, "-features"},
		{[]string{"run", "-workload", "pipe", "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"run", "-workload", "pipe", "extra"}, `unexpected argument "extra"`},
		{[]string{"run", "-workload", "pipe", "-profile-cpus", "0,99", "-topo", "hikey-8"}, "-profile-cpus"},
		{[]string{"run", "-workload", "pipe", "-lines", "-1", "-topo", "hikey-8"}, "-lines: -1 is out of range (allowed: 0 to"},
		{[]string{"compare", "-workload", "pipe"}, "-patch: required"},
		{[]string{"compare", "-workload", "pipe", "-patch", "v6.6-eevdf", "-seeds", "0"}, "-seeds"},
		{[]string{"reproduce", "nosuch"}, `unknown study "nosuch" (allowed: tgload-udprr, tgload-hackbench, tgload-profile, uclamp-pipe, host-pipe, lkp-base, tgload-postgres, tgload-icl, tgload-stressng, l2-ttwu-epyc, run-to-parity, lb-spread-llc, migrate-starvation, sis-util-spr1s, ttwu-idle-clxap, preempt-short-spr, preempt-short-icl, base-slice-icl, all)`},
		{[]string{"reproduce", "-l", "-1", "host-pipe"}, "-l: virtual seconds"},
		{[]string{"reproduce", "-j", "0", "host-pipe"}, "-j: runs at once must be in [1, 256], got 0"},
		{[]string{"compare", "-patch", "v6.6-eevdf", "-j", "300", "-workload", "pipe"}, "-j: runs at once must be in [1, 256], got 300"},
	} {
		code, _, errs := runEmu(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("emu %s: exit %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}

// interruptAtOnce makes the stop channel of every run in the test closed
// from the start, as if Ctrl-C came at once.
func interruptAtOnce(t *testing.T) {
	old := interrupts
	t.Cleanup(func() { interrupts = old })
	interrupts = func() (<-chan struct{}, func()) {
		ch := make(chan struct{})
		close(ch)
		return ch, func() {}
	}
}

// Ctrl-C stops the run at the next barrier: the partial result is printed
// and the exit status is non-zero.
func TestRunInterrupted(t *testing.T) {
	interruptAtOnce(t)
	code, out, errs := runEmu("run", "-topo", "hikey-8", "-workload", "pipe", "-l", "100000", "-progress=false")
	if code != 130 {
		t.Fatalf("exit %d, want 130: %s", code, errs)
	}
	if !strings.Contains(out, "usecs/op") || !strings.Contains(errs, "interrupted") {
		t.Errorf("partial result missing: %q / %q", out, errs)
	}
}

func TestCompareTable(t *testing.T) {
	code, out, errs := runEmu("compare", "-topo", "hikey-8", "-base", "v6.6-eevdf", "-patch", "v6.6-eevdf,+TG_LOAD_RATELIMIT",
		"-seeds", "2", "-workload", "pipe", "-l", "300", "-cgroup", "docker", "-progress=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"tbox_group/testcase/cgroup/l/seeds:\n  hikey-8/pipe/docker/300/2\n", "%stddev     %change         %stddev",
		"  rqemu.pipe.ops_per_sec\n", "  rqemu.rate.wakeups_per_sec\n", "  perf-profile.self.cycles-pp.update_cfs_group\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
}

// Runs executed at once (-j) give the same table, byte for byte, and the
// progress lines in the same order.
func TestCompareJobsSameBytes(t *testing.T) {
	var outs, runs [2]string
	for i, j := range []string{"1", "3"} {
		code, out, errs := runEmu("compare", "-topo", "hikey-8", "-base", "v6.6-eevdf", "-patch", "v6.6-eevdf,+TG_LOAD_RATELIMIT",
			"-seeds", "3", "-j", j, "-workload", "pipe", "-l", "300", "-cgroup", "docker")
		if code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, errs)
		}
		outs[i] = out
		runs[i] = regexp.MustCompile(`\([0-9.]+ s host\)`).ReplaceAllString(errs, "")
	}
	if outs[0] != outs[1] {
		t.Errorf("-j 3 printed\n%s\n-j 1\n%s", outs[1], outs[0])
	}
	if runs[0] != runs[1] || strings.Count(runs[0], "emu compare:") != 6 {
		t.Errorf("-j 3 reported\n%s\n-j 1 (6 runs)\n%s", runs[1], runs[0])
	}
}

// Ctrl-C under -j: every run stops, the partial table prints, exit 130.
func TestCompareJobsInterrupted(t *testing.T) {
	interruptAtOnce(t)
	code, out, errs := runEmu("compare", "-topo", "hikey-8", "-patch", "v6.6-eevdf,+TG_LOAD_RATELIMIT", "-seeds", "2", "-j", "2",
		"-workload", "pipe", "-l", "100000", "-progress=false")
	// Stopped before any run finished: the table says so.
	if code != 130 || !strings.Contains(out, "no complete pair of runs") || !strings.Contains(errs, "interrupted") {
		t.Errorf("exit %d (want 130), out %q, stderr %q", code, out, errs)
	}
}

// The real Ctrl-C path: SIGINT closes the stop channel.
func TestInterruptsSignal(t *testing.T) {
	raise(t, syscall.SIGINT)
}

// raise sends sig to this process and waits for interrupts' stop channel
// to close.
func raise(t *testing.T, sig syscall.Signal) {
	t.Helper()
	stop, unlisten := interrupts()
	defer unlisten()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stop:
	case <-time.After(10 * time.Second):
		t.Fatalf("%v did not close the stop channel", sig)
	}
}

// fileIn returns a function writing a file of the given name and body
// into dir, returning its path.
func fileIn(t *testing.T, dir string) func(name, body string) string {
	return func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// hikeyEdit returns spec(name, old, new): the hikey-8 preset's spec with
// old replaced by new, written to a file by file (the test fails if old
// is not in the spec).
func hikeyEdit(t *testing.T, file func(name, body string) string) func(name, old, new string) string {
	hikey, err := hwmodel.PresetSpec("hikey-8")
	if err != nil {
		t.Fatal(err)
	}
	return func(name, old, new string) string {
		s := strings.Replace(string(hikey), old, new, 1)
		if s == string(hikey) {
			t.Fatalf("%s: %q not in the hikey-8 spec", name, old)
		}
		return file(name, s)
	}
}

// Every command's -h prints its usage cleanly (exit 0, no fmt errors).
func TestHelpAll(t *testing.T) {
	for _, c := range commands {
		code, _, errs := runEmu(c.name, "-h")
		if code != 0 || strings.Contains(errs, "%!") || !strings.Contains(errs, "usage: emu "+c.name) {
			t.Errorf("emu %s -h: exit %d:\n%s", c.name, code, errs)
		}
	}
	// A workload's flags are listed after -workload NAME.
	_, _, errs := runEmu("run", "-workload", "schbench", "-h")
	if !strings.Contains(errs, "-m, --message-threads int") {
		t.Errorf("emu run -workload schbench -h lacks schbench's -m:\n%s", errs)
	}
}

func TestReproduceHostPipe(t *testing.T) {
	code, out, errs := runEmu("reproduce", "-perf", "/nonexistent/perf", "host-pipe")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"== perf bench sched pipe -l 20000 (usecs/op)", "real:     skipped (/nonexistent/perf not found)",
		"== perf bench sched messaging -l 20 (Total time [sec])", "emulated: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Runs executed at once (-j) print the same study, byte for byte, and
// report the runs on stderr in the same order.
func TestReproduceJobsSameBytes(t *testing.T) {
	var outs, runs [2]string
	for i, j := range []string{"1", "3"} {
		code, out, errs := runEmu("reproduce", "-l", "0.0002", "-driver", "serial", "-j", j, "tgload-udprr")
		if code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, errs)
		}
		outs[i] = out
		runs[i] = regexp.MustCompile(`: [0-9.]+ s host`).ReplaceAllString(errs, "")
	}
	if outs[0] != outs[1] {
		t.Errorf("-j 3 printed\n%s\n-j 1\n%s", outs[1], outs[0])
	}
	// Four rows of two settings, and the steady-state line's half-length pair.
	if runs[0] != runs[1] || strings.Count(runs[0], "emu reproduce:") != 10 {
		t.Errorf("-j 3 reported\n%s\n-j 1 (10 runs)\n%s", runs[1], runs[0])
	}
}

// The study's table, on a sliver of virtual time (the numbers are not
// checked here; the closing note of the issue quotes a full run).
func TestReproduceTgloadShape(t *testing.T) {
	code, out, errs := runEmu("reproduce", "-l", "0.0002", "-driver", "serial", "tgload-udprr")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"tps/client (netperf.Throughput_tps)", "100%", "75%", "9703", "28011", "+188.7%",
		"update_cfs_group", "update_load_avg", "wakeups/s", "(≈4.2 M)", "top of the base profile", "steady state: 100%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestRunWindow: -window-from reads -json's counters and lkp's
// throughput over the window and says so in config and on stderr; the
// report stays the whole run's.
func TestRunWindow(t *testing.T) {
	args := []string{"run", "-topo", "hikey-8", "-workload", "hackbench", "-g", "4", "-f", "10", "-l", "200", "-progress=false", "-json"}
	_, whole, _ := runEmu(args...)
	code, out, errs := runEmu(append(args, "-window-from", "1500us")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var w, a struct {
		Config   map[string]any     `json:"config"`
		Report   string             `json:"report"`
		Counters map[string]float64 `json:"counters"`
		LKP      map[string]float64 `json:"lkp"`
	}
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(whole), &a); err != nil {
		t.Fatal(err)
	}
	if w.Config["window_from_sec"] != 0.0015 || w.Counters["run.window_from_sec"] != 0.002 || !(w.Counters["run.window_to_sec"] > 0.002) {
		t.Errorf("window config %v, counters from %v to %v", w.Config["window_from_sec"], w.Counters["run.window_from_sec"], w.Counters["run.window_to_sec"])
	}
	if w.Report != a.Report {
		t.Errorf("the window changed the report:\n%s\nvs\n%s", w.Report, a.Report)
	}
	if !(w.Counters["sched.NrSwitches"] < a.Counters["sched.NrSwitches"]) || w.LKP["hackbench.throughput"] == a.LKP["hackbench.throughput"] {
		t.Errorf("window switches %v (whole %v), throughput %v (whole %v)", w.Counters["sched.NrSwitches"], a.Counters["sched.NrSwitches"],
			w.LKP["hackbench.throughput"], a.LKP["hackbench.throughput"])
	}
	if !strings.Contains(errs, "emu: window 0.002-") || !strings.Contains(errs, "hackbench.throughput") {
		t.Errorf("stderr lacks the window line: %s", errs)
	}
}

// TestRunWindowToInterval: -window-to ends a run that lkp's loops would
// make long at the window's end (exit 0, hackbench's stopped-early
// report, config.window_to_sec), and -interval prints perf stat -I's
// lines for each interval on stderr, then emu's line with the rates.
func TestRunWindowToInterval(t *testing.T) {
	code, out, errs := runEmu("run", "-topo", "hikey-8", "-workload", "hackbench", "-g", "4", "-f", "10", "-l", "100000", "-progress=false", "-json",
		"-window-from", "2ms", "-window-to", "8ms", "-interval", "2ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r struct {
		Config   map[string]any     `json:"config"`
		Report   string             `json:"report"`
		Complete bool               `json:"complete"`
		Counters map[string]float64 `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.Config["window_to_sec"] != 0.008 || r.Counters["run.window_to_sec"] != 0.008 || !strings.Contains(r.Report, "stopped early: 0.008 s ran") {
		t.Errorf("complete %v, config window_to_sec %v, window to %v, report %q", r.Complete, r.Config["window_to_sec"], r.Counters["run.window_to_sec"], r.Report)
	}
	if n := strings.Count(errs, "#           time             counts unit events"); n != 1 {
		t.Errorf("%d perf stat -I headers, want 1:\n%s", n, errs)
	}
	for _, at := range []string{"0.002000000", "0.004000000", "0.006000000", "0.008000000"} {
		for _, ev := range []string{"msec task-clock", "context-switches", "cpu-migrations"} {
			if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(at) + `\s+[\d,.]+\s+` + ev).MatchString(errs) {
				t.Errorf("no %s line at %s:\n%s", ev, at, errs)
			}
		}
	}
	if !regexp.MustCompile(`emu: interval 0\.006-0\.008 s: [\d.]+ nr_running per CPU, \d+ context switches/s \(\d+ the idle task's\), `).MatchString(errs) ||
		!strings.Contains(errs, "migrations per wakeup, hackbench.throughput ") ||
		!strings.Contains(errs, "emu: window 0.002-0.008 s (-window-from to -window-to)") {
		t.Errorf("stderr lacks emu's interval or window line:\n%s", errs)
	}
}
