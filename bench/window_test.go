package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// windowRun runs a workload on topo with a measurement window from from
// ns (serial or parallel driver).
func windowRun(t *testing.T, topo, driver string, from int64, name string, args ...string) (*Result, error) {
	t.Helper()
	return execWith(t, topo, driver, RunConfig{Window: &Window{From: from}}, name, args...)
}

// TestWindowHackbench: hackbench's window starts at the first chunk
// boundary at or after From and ends at the last one before the first
// exit (the trace's first sched_process_exit), and its numbers are the
// differences of the snapshots: switches, the profile's time (every
// CPU's time in the window, idle included) and lkp's throughput from the
// messages written in it.
func TestWindowHackbench(t *testing.T) {
	args := []string{"-g", "4", "-f", "10", "-l", "200", "-s", "100"}
	res, err := windowRun(t, "hikey-8", "serial", 1_500_000, "hackbench", args...)
	if err != nil {
		t.Fatal(err)
	}
	win := res.Window
	if win.Start.At != 2*Chunk {
		t.Errorf("window starts at %d ns, want the first boundary after 1.5 ms, %d", win.Start.At, 2*Chunk)
	}
	if win.End.At%Chunk != 0 || win.End.At <= win.Start.At {
		t.Fatalf("window ends at %d ns, not a chunk boundary after its start %d", win.End.At, win.Start.At)
	}
	first := int64(math.MaxInt64)
	for _, task := range res.Sim.Tasks() {
		if e := task.ExitedAt(); e >= 0 {
			first = min(first, e)
		}
	}
	// The chunk that has the exit closes the window; an exit whose
	// CPU's kernel work ran past a boundary (the action started before
	// it) is in the chunk before, so the end may be one chunk and that
	// overrun before the exit: the child's exit_mmap() (100 us on
	// hikey-8) and up to 50 us of the rest of the action.
	overrun := 50_000 + res.Sim.Machine().Cost(hwmodel.OpExitMMAP)
	if win.End.At > first || first-win.End.At > Chunk+overrun {
		t.Errorf("window ends at %d ns, the first exit is at %d: want the last boundary before it", win.End.At, first)
	}
	c := win.Counters()
	if got, want := c["sched.NrSwitches"], win.End.Counters["sched.NrSwitches"]-win.Start.Counters["sched.NrSwitches"]; got != want || got <= 0 {
		t.Errorf("window switches %v, want %v > 0", got, want)
	}
	if total := res.Sim.Counters()["sched.NrSwitches"]; c["sched.NrSwitches"] >= total {
		t.Errorf("window switches %v not below the run's %v", c["sched.NrSwitches"], total)
	}
	if got, want := c["rate.context_switches_per_sec"], c["sched.NrSwitches"]/win.Sec(); got != want {
		t.Errorf("window switch rate %v, want %v", got, want)
	}
	// Every CPU's time in the window is in the window's profile, within
	// the part of an action that crosses a boundary (a few us per CPU).
	var ns int64
	for _, p := range win.Profile(-1) {
		ns += p.NS
	}
	cpus := int64(len(res.Sim.Machine().CPUs))
	if want := cpus * (win.End.At - win.Start.At); math.Abs(float64(ns-want)) > 0.02*float64(want) {
		t.Errorf("window profile holds %d ns, want the CPUs' %d ns within 2%%", ns, want)
	}
	// lkp's throughput at the window's message rate: the whole run's
	// formula (tasks x loops x datasize >> 10 over Time) with the window's
	// messages over its time.
	msgs := win.End.Units[0] - win.Start.Units[0]
	if msgs <= 0 {
		t.Fatalf("no messages written in the window: %v", msgs)
	}
	want := msgs / win.Sec() * 2 * 100 / (10 * 1024)
	lkp := WindowLKPStats("hackbench", LKPStats("hackbench", report(t, res)), win, res.Workload)
	if got := lkp["hackbench.throughput"]; math.Abs(got-want) > 1e-9*want {
		t.Errorf("window hackbench.throughput %v, want %v", got, want)
	}
	for _, k := range []string{"hackbench.throughput_best", "hackbench.throughput_worst"} {
		if lkp[k] != want {
			t.Errorf("window %s %v, want the window's rate %v (one iteration at one rate)", k, lkp[k], want)
		}
	}
}

// report is a finished run's report.
func report(t *testing.T, res *Result) string {
	t.Helper()
	var b strings.Builder
	if err := res.Workload.Report(&b, res.Sim); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWindowDriversAgree: the window's numbers are the same bytes under
// both drivers (its boundaries are the chunks', the same on every run).
func TestWindowDriversAgree(t *testing.T) {
	loops := "120" // 40 ms of virtual time
	if raceEnabled {
		loops = "80" // 27 ms: the first exit still comes well after 1 ms
	}
	var got [2]string
	for i, d := range []string{"serial", "parallel"} {
		res, err := windowRun(t, "xeon-e5-2x10", d, 1_000_000, "hackbench", "-g", "8", "-l", loops)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = fmt.Sprint(res.Window.Counters(), res.Window.Profile(-1), res.Window.Profile(1))
	}
	if got[0] != got[1] {
		t.Errorf("serial and parallel windows differ:\n%s\n%s", got[0], got[1])
	}
}

// TestWindowNone: a window that would start after the first exit, or
// after a duration-bound run's end, is an error that says so.
func TestWindowNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"hackbench", []string{"-g", "2", "-l", "20"}},
		{"netperf", []string{"-t", "UDP_RR", "-nr", "4", "-l", "0.003"}},
	} {
		_, err := windowRun(t, "spr-1s", "serial", 50_000_000, tc.name, tc.args...)
		if err == nil || !strings.Contains(err.Error(), "no measurement window") {
			t.Errorf("%s %v: err %v, want no measurement window", tc.name, tc.args, err)
		}
	}
}

// TestWindowDurationBound: a run whose tasks do not exit (netperf -l)
// measures from From to its end.
func TestWindowDurationBound(t *testing.T) {
	res, err := windowRun(t, "spr-1s", "serial", 1_000_000, "netperf", "-t", "UDP_RR", "-nr", "4", "-l", "0.005")
	if err != nil {
		t.Fatal(err)
	}
	if res.Window.Start.At != Chunk || res.Window.End.At != res.Sim.Now() {
		t.Errorf("window %d-%d ns, want %d to the run's end %d", res.Window.Start.At, res.Window.End.At, Chunk, res.Sim.Now())
	}
	if r := res.Window.Counters()["rate.wakeups_per_sec"]; !(r > 0) {
		t.Errorf("window wakeup rate %v", r)
	}
}

// TestWindowHalves: a window with a set end (To) keeps the first chunk
// boundary at or after its midpoint (Mid), and its halves split it
// there: their switches and messages add up to the window's, and each
// half's rate is its own counts over its own time. A window that ends at
// the first exit has no Mid (its end is not known in advance).
func TestWindowHalves(t *testing.T) {
	const from, to = 1_500_000, 6_000_000
	res, err := execWith(t, "hikey-8", "serial", RunConfig{Window: &Window{From: from, To: to}}, "hackbench",
		"-g", "4", "-f", "10", "-l", "100000", "-s", "100")
	if err != nil {
		t.Fatal(err)
	}
	win := res.Window
	if win.Mid == nil {
		t.Fatal("a window with -window-to has no Mid")
	}
	if mid := int64(from + (to-from)/2); win.Mid.At < mid || win.Mid.At >= mid+Chunk || win.Mid.At%Chunk != 0 {
		t.Errorf("Mid at %d ns, want the first chunk boundary at or after %d", win.Mid.At, mid)
	}
	a, b, ok := win.Halves()
	if !ok {
		t.Fatal("Halves: not ok with a Mid inside the window")
	}
	ca, cb, c := a.Counters(), b.Counters(), win.Counters()
	for _, k := range []string{"sched.NrSwitches", "sched.nr_voluntary_switches", "sched.nr_involuntary_switches"} {
		if ca[k]+cb[k] != c[k] || ca[k] <= 0 || cb[k] <= 0 {
			t.Errorf("%s: halves %v + %v, window %v", k, ca[k], cb[k], c[k])
		}
	}
	if a.End.Units[0]+b.End.Units[0]-a.Start.Units[0]-b.Start.Units[0] != win.End.Units[0]-win.Start.Units[0] {
		t.Errorf("messages: the halves do not add up to the window's")
	}
	if got, want := cb["rate.context_switches_per_sec"], cb["sched.NrSwitches"]/b.Sec(); got != want {
		t.Errorf("second half's switch rate %v, want %v", got, want)
	}

	res, err = windowRun(t, "hikey-8", "serial", 1_500_000, "hackbench", "-g", "4", "-f", "10", "-l", "200", "-s", "100")
	if err != nil {
		t.Fatal(err)
	}
	if res.Window.Mid != nil {
		t.Errorf("a window to the first exit has Mid at %d ns", res.Window.Mid.At)
	}
	if _, _, ok := res.Window.Halves(); ok {
		t.Error("Halves ok without a Mid")
	}
}

// TestWindowStressNG: stress-ng's window reads each stressor's bogo ops
// that ended in it (Units, one per stressor in the table's order), so
// lkp's STRESSOR.ops_per_sec is the window's rate, as the table prints
// it; the ops count is the report's (the window ends at the run's end),
// the halves add up, and both drivers read the same window.
func TestWindowStressNG(t *testing.T) {
	args := []string{"--nanosleep", "8", "--switch", "2", "-t", "0.02", "--metrics-brief"}
	cfg := RunConfig{Window: &Window{From: 4 * Chunk, To: 20 * Chunk}}
	var lkps [2]string
	for i, d := range []string{"serial", "parallel"} {
		res, err := execWith(t, "hikey-8", d, cfg, "stress-ng", args...)
		if err != nil {
			t.Fatal(err)
		}
		win := res.Window
		whole := LKPStats("stress-ng", report(t, res))
		lkp := WindowLKPStats("stress-ng", whole, win, res.Workload)
		lkps[i] = fmt.Sprint(lkp)
		if d == "parallel" {
			break
		}
		if len(win.End.Units) != 2 {
			t.Fatalf("units %v, want one per stressor", win.End.Units)
		}
		a, b, ok := win.Halves()
		if !ok {
			t.Fatal("no halves")
		}
		for k, name := range []string{"nanosleep", "switch"} {
			ops := win.End.Units[k] - win.Start.Units[k]
			if ops <= 0 {
				t.Fatalf("%s: no ops in the window", name)
			}
			if got, want := whole["stress-ng."+name+".ops"], win.End.Units[k]; got != want {
				t.Errorf("%s: the report's bogo ops %v, the window's end counts %v", name, got, want)
			}
			want, _ := strconv.ParseFloat(strconv.FormatFloat(ops/win.Sec(), 'f', 2, 64), 64)
			if got := lkp["stress-ng."+name+".ops_per_sec"]; got != want {
				t.Errorf("%s.ops_per_sec %v, want the window's %v", name, got, want)
			}
			if whole["stress-ng."+name+".ops_per_sec"] == want {
				t.Errorf("%s.ops_per_sec: the window's rate equals the whole run's %v (the start is in neither?)", name, want)
			}
			if a.End.Units[k]-a.Start.Units[k]+b.End.Units[k]-b.Start.Units[k] != ops {
				t.Errorf("%s: the halves' ops do not add up to the window's %v", name, ops)
			}
			if lkp["stress-ng."+name+".ops"] != whole["stress-ng."+name+".ops"] {
				t.Errorf("%s.ops: the window changed a count", name)
			}
		}
	}
	if lkps[0] != lkps[1] {
		t.Errorf("serial and parallel windows differ:\n%s\n%s", lkps[0], lkps[1])
	}
}
