package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

// execWith runs a workload on topo under cfg's window and intervals.
func execWith(t *testing.T, topo, driver string, cfg RunConfig, name string, args ...string) (*Result, error) {
	t.Helper()
	m := machine(t, topo)
	w, err := build(m, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := emu.ParseFeatures("v6.6-eevdf")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Machine, cfg.Features, cfg.Seed, cfg.Driver = m, f, 1, driver
	return Execute(w, cfg)
}

// TestWindowTo: a window with an end stops the run there, loops or not
// (perf stat -a -- sleep N over a longer run): the run is complete at
// its window's end, the window is [From, To], and hackbench's report
// says it stopped early.
func TestWindowTo(t *testing.T) {
	res, err := execWith(t, "hikey-8", "serial", RunConfig{Window: &Window{From: 2 * Chunk, To: 9 * Chunk}},
		"hackbench", "-g", "2", "-f", "10", "-l", "100000")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || !res.WindowEnded || res.Interrupted {
		t.Errorf("complete %v, window ended %v, interrupted %v: want a run complete at its window's end", res.Complete, res.WindowEnded, res.Interrupted)
	}
	if res.Sim.Now() != 9*Chunk || res.Window.Start.At != 2*Chunk || res.Window.End.At != 9*Chunk {
		t.Errorf("run ended at %d ns, window %d-%d: want both at 9 ms, from 2 ms", res.Sim.Now(), res.Window.Start.At, res.Window.End.At)
	}
	if res.Sim.Live() == 0 {
		t.Fatal("every task exited: the loops were meant to outlast the window")
	}
	var rep strings.Builder
	if err := res.Workload.Report(&rep, res.Sim); err != nil || !strings.Contains(rep.String(), "stopped early") {
		t.Errorf("report %q (%v): want hackbench's stopped-early line", rep.String(), err)
	}
	if th := res.Window.LKP(res.Workload)["throughput"]; !(th > 0) {
		t.Errorf("window throughput %v", th)
	}
}

// TestWindowToErrors: an end not after the start, or one a run does not
// reach (it ends first), is an error naming -window-to.
func TestWindowToErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		win      Window
		workload []string
	}{
		{"end before start", Window{From: 5 * Chunk, To: 3 * Chunk}, []string{"hackbench", "-g", "2", "-l", "20"}},
		{"end after the run", Window{From: Chunk, To: 50 * Chunk}, []string{"netperf", "-t", "UDP_RR", "-nr", "4", "-l", "0.003"}},
	} {
		_, err := execWith(t, "spr-1s", "serial", RunConfig{Window: &tc.win}, tc.workload[0], tc.workload[1:]...)
		if err == nil || !strings.Contains(err.Error(), "-window-to") {
			t.Errorf("%s: err %v, want one naming -window-to", tc.name, err)
		}
	}
}

// TestIntervals: intervals tile the run from 0 at their period, each
// the difference of two snapshots, so their sum is the run's count at
// the last boundary (an oracle: the run's own counters when it ends on
// one); the serial and parallel drivers print the same intervals.
func TestIntervals(t *testing.T) {
	var got [2]string
	for i, d := range []string{"serial", "parallel"} {
		var b strings.Builder
		var sum float64
		var at int64
		var last *Snapshot
		cfg := RunConfig{Window: &Window{To: 12 * Chunk}, Interval: 3 * Chunk, OnInterval: func(prev, cur *Snapshot) {
			if prev.At != at || cur.At != at+3*Chunk {
				t.Errorf("%s: interval %d-%d, want %d-%d", d, prev.At, cur.At, at, at+3*Chunk)
			}
			at = cur.At
			sum += cur.Counters["sched.NrSwitches"] - prev.Counters["sched.NrSwitches"]
			fmt.Fprintln(&b, cur.At, cur.Counters["sched.NrSwitches"], cur.Migrations, cur.Units)
			last = cur
		}}
		res, err := execWith(t, "xeon-e5-2x10", d, cfg, "hackbench", "-g", "4", "-l", "100000")
		if err != nil {
			t.Fatal(err)
		}
		if at != 12*Chunk || last == nil {
			t.Fatalf("%s: last interval ends at %d, want 12 ms", d, at)
		}
		if want := res.Sim.Counters()["sched.NrSwitches"]; sum != want || sum == 0 {
			t.Errorf("%s: intervals' switches sum to %v, the run's are %v", d, sum, want)
		}
		got[i] = b.String()
	}
	if got[0] != got[1] {
		t.Errorf("serial and parallel intervals differ:\n%s\n%s", got[0], got[1])
	}
	if _, err := execWith(t, "hikey-8", "serial", RunConfig{Interval: Chunk / 2, OnInterval: func(_, _ *Snapshot) {}}, "hackbench", "-g", "1", "-l", "10"); err == nil || !strings.Contains(err.Error(), "-interval") {
		t.Errorf("half-chunk interval: err %v, want one naming -interval", err)
	}
}

// TestWindowGroupLine: a window's tg->load_avg line statistics are its
// share of the run's (the two snapshots differenced): fewer accesses than
// the whole run's, and a busy time within the window's length (the line
// serves one transaction at a time), which the whole run's need not be.
func TestWindowGroupLine(t *testing.T) {
	res, err := execWith(t, "xeon-e5-2x10", "serial", RunConfig{Window: &Window{From: 3 * Chunk, To: 9 * Chunk}},
		"hackbench", "-g", "4", "-l", "100000", "-cgroup", "docker")
	if err != nil {
		t.Fatal(err)
	}
	const name = "tg(docker)->load_avg"
	l, ok := res.Window.Line(name)
	if !ok {
		t.Fatalf("no %s in the window's snapshots", name)
	}
	var whole int64
	for _, g := range res.Sim.GroupLines() {
		if g.Name == name {
			whole = g.Accesses
		}
	}
	if !(l.Accesses > 0 && l.Accesses < whole) {
		t.Errorf("window accesses %d, whole run %d: want 0 < window < whole", l.Accesses, whole)
	}
	if sec := res.Window.Sec(); !(l.BusyNS >= 0 && l.BusyNS <= sec*1e9) {
		t.Errorf("window busy %.0f ns over a %.0f ns window", l.BusyNS, sec*1e9)
	}
	if _, ok := res.Window.Line("tg(nosuch)->load_avg"); ok {
		t.Error("a line no group has was found")
	}
}
