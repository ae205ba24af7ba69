package study

import (
	"math"
	"strings"
	"testing"
)

// TestIdleCountsTheIdleLoop: lkp-base's "idle" and perf stat's "CPUs
// utilized" take the whole idle loop, do_idle() and the idle driver's exit
// latency (intel_idle on Intel, acpi_idle_do_entry on AMD), not do_idle()
// alone (before stop 48: idle 3.0 and 96 CPUs here).
func TestIdleCountsTheIdleLoop(t *testing.T) {
	for _, tc := range []struct {
		self     map[string]float64
		idle, on float64
	}{
		{map[string]float64{"do_idle": 3, "intel_idle": 2, "pipe_write": 50}, 5, 95},
		{map[string]float64{"do_idle": 40, "acpi_idle_do_entry": 10}, 50, 50},
		{map[string]float64{"do_idle": 20, "cpu_do_idle": 5}, 25, 75},
		{map[string]float64{"update_cfs_group": 30}, 0, 100},
	} {
		o := &Outcome{CPUs: 100, Self: tc.self}
		if got := idleSelf.value(o); got != tc.idle {
			t.Errorf("%v: idle %v, want %v", tc.self, got, tc.idle)
		}
		if got := cpusUtilized.value(o); got != tc.on {
			t.Errorf("%v: CPUs utilized %v, want %v", tc.self, got, tc.on)
		}
	}
}

// TestNrRunningAsLKPSamplesIt: lkp's sched_debug.cpu.nr_running.avg is
// the mean of 60 s samples from the monitor's start, 1 s before the run
// (lib/job.sh wakeup_pre_test, programs/proc-vmstat/monitor,
// lib/matrix.rb create_stats_matrix): a 60 s stress-ng run is one idle
// sample and one of the run, hackbench's eight iterations at the emulated
// throughput as many 60 s as they last.
func TestNrRunningAsLKPSamplesIt(t *testing.T) {
	// A window of 1 s on 10 CPUs with nr_running summing to 40 over it: 4
	// per CPU in the run.
	counters := map[string]float64{"run.virtual_sec": 1, "sched.NrRunningNS": 40e9, "sched.RQCPUTime": 25e9, "sched.RunDelay": 10e9}
	hb := func(g int, tp float64) *Outcome {
		return &Outcome{CPUs: 10, Counters: counters, LKP: map[string]float64{"hackbench.throughput": tp},
			Run: Run{Workload: "hackbench", Args: lkpHackbench(128, g, "threads", true)}}
	}
	for _, tc := range []struct {
		name    string
		o       *Outcome
		runSec  float64
		in, all int
	}{
		{"stress-ng 60 s", &Outcome{CPUs: 10, Counters: counters, Run: Run{Workload: "stress-ng"}}, 60, 1, 2},
		// 64 groups, 60000 loops: 2560 tasks * 60000 * 100 >> 10 = 15e6
		// KiB an iteration; at 1e6 KiB/s, 8 x 15 s.
		{"hackbench 120 s", hb(64, 1e6), 120, 2, 3},
		{"hackbench 240 s", hb(64, 5e5), 240, 4, 5},
		{"hackbench 58 s", hb(64, 15e6*8/58), 58, 0, 1},
		{"no rate", hb(64, 0), 0, 0, 1},
	} {
		run := lkpRunSec(tc.o)
		if d := run - tc.runSec; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: run %v s, want %v", tc.name, run, tc.runSec)
		}
		in, all := lkpSamples(run)
		if in != tc.in || all != tc.all {
			t.Errorf("%s: %d of %d samples in the run, want %d of %d", tc.name, in, all, tc.in, tc.all)
		}
		if got := nrRunningSteady.value(tc.o); got != 4 {
			t.Errorf("%s: %v per CPU in the run, want 4", tc.name, got)
		}
		want := 4 * float64(tc.in) / float64(tc.all)
		if got := nrRunning.value(tc.o); got != want {
			t.Errorf("%s: sched_debug avg %v, want %v", tc.name, got, want)
		}
	}
}

// TestRusageNotes: experiments.md's per-run switches of the tool's tasks
// beside its context switches/s (hb-icl-process-pipe: 5.40e8 per run of 8
// iterations at 1052797 KiB/s, 114 s, against 9.03 M/s), the model's
// counterparts from a window, and the notes are not rollup pairs.
func TestRusageNotes(t *testing.T) {
	ns := rusageNotes("r", 64, 60000, 1052797, 9.03e6, 4.41e8, 0.99e8)
	if len(ns) != 2 || ns[0].Pub != "derived: 0.0439 (rusage 5.4e+08 per run over its messages)" ||
		ns[1].Pub != "derived: >= 4.29 M (perf 9.03 M - rusage over >= 114 s)" {
		t.Fatalf("notes %+v", ns)
	}
	for _, n := range ns {
		if _, ok := pubValue(n.Pub); ok {
			t.Errorf("%q reads as a published figure (a pair)", n.Pub)
		}
	}
	// A 0.5 s window of 64 groups at 1e6 KiB/s (102.4 M messages/s): 2 M
	// switches of the tasks, 3 M in all.
	o := &Outcome{VolSwitches: 1.5e6, InvolSwitches: 0.5e6, LKP: map[string]float64{"hackbench.throughput": 1e6},
		Counters: map[string]float64{"run.virtual_sec": 0.5, "sched.NrSwitches": 3e6},
		Run:      Run{Workload: "hackbench", Args: lkpHackbench(128, 64, "process", true)}}
	if got, want := tasksPerMsg.value(o), 4e6/102.4e6; got < want*0.999 || got > want*1.001 {
		t.Errorf("tasks' switches per message %v, want %v", got, want)
	}
	if got := othersSwitches.value(o); got != 2 {
		t.Errorf("other switches %v M/s, want 2", got)
	}
}

// TestWindowDrift: a run read over a window with a set end carries each
// rate's change from the window's first half to its second (Drift), the
// same numbers the halves' own counters give, and lkp-base's drift notes
// read them; a window to the first exit has no halves and no Drift.
func TestWindowDrift(t *testing.T) {
	run := Run{Topo: "hikey-8", Features: "v6.6-eevdf", Workload: "hackbench",
		Args: []string{"-g", "4", "-f", "10", "-l", "100000", "-s", "100"}, WindowFrom: 0.0015, WindowTo: 0.006}
	o, err := Execute(run, 1, Engine{Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rate.context_switches_per_sec", "rate.migrations_per_sec", "rate.wakeups_per_sec", "hackbench.throughput"} {
		if _, ok := o.Drift[k]; !ok {
			t.Errorf("no drift of %s: %v", k, o.Drift)
		}
	}
	// The rows read lkp's throughput over the window, not the
	// workload's whole-run metric of the same name.
	win, whole := o.LKP["hackbench.throughput"], o.Metrics.Values["throughput"]
	if win == whole || win <= 0 {
		t.Errorf("window throughput %v, whole run's %v: want two rates", win, whole)
	}
	for _, m := range []Metric{hbThroughput} {
		if got := m.value(o); got != win {
			t.Errorf("%s (key %q) reads %v, want the window's %v", m.Name, m.Key, got, win)
		}
	}
	ns := driftNotes("hackbench.throughput", "r")
	if len(ns) != 3 {
		t.Fatalf("%d drift notes, want 3", len(ns))
	}
	if got, want := ns[0].Metric.value(o), o.Drift["rate.context_switches_per_sec"]; got != want {
		t.Errorf("the switches note reads %v, want the drift %v", got, want)
	}
	if got, want := ns[2].Metric.value(o), o.Drift["hackbench.throughput"]; got != want {
		t.Errorf("the rate note reads %v, want the drift %v", got, want)
	}
	for _, n := range ns {
		if _, ok := pubValue(n.Pub); ok {
			t.Errorf("%q reads as a published figure (a pair)", n.Pub)
		}
	}
	run.WindowTo, run.Args = 0, []string{"-g", "4", "-f", "10", "-l", "200", "-s", "100"}
	if o, err = Execute(run, 1, Engine{Driver: "serial"}); err != nil {
		t.Fatal(err)
	}
	if o.Drift != nil {
		t.Errorf("a window to the first exit has a drift: %v", o.Drift)
	}
	// stress-ng's rate drifts by stressor (bench.Windowed's units).
	run = Run{Topo: "hikey-8", Features: "v6.6-eevdf", Workload: "stress-ng",
		Args: []string{"--nanosleep", "4", "--switch", "2", "-t", "0.008", "--metrics-brief"}, WindowFrom: 0.002, WindowTo: 0.008}
	if o, err = Execute(run, 1, Engine{Driver: "serial"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stress-ng.nanosleep.ops_per_sec", "stress-ng.switch.ops_per_sec"} {
		if _, ok := o.Drift[k]; !ok {
			t.Errorf("no drift of %s: %v", k, o.Drift)
		}
		got, _ := o.Value(k)
		if whole := o.Metrics.Values[strings.TrimPrefix(k, "stress-ng.")]; got != o.LKP[k] || got == whole {
			t.Errorf("%s reads %v, want the window's %v (the whole run's is %v)", k, got, o.LKP[k], whole)
		}
	}
}

// TestNodeIdleSplitsIdle: the idle notes' per-node idle shares
// (Outcome.NodeIdle) split the machine-wide idle share by NUMA node: on
// xeon-e5-2x10 (two nodes of 20 CPUs) their mean is lkp-base's idle, with
// a window and without, each within [0, 100]; a one-node machine has none.
// A lone pipe pair leaves most of both nodes idle.
func TestNodeIdleSplitsIdle(t *testing.T) {
	for _, run := range []Run{
		{Topo: "xeon-e5-2x10", Features: "v6.6-eevdf", Workload: "pipe", Args: []string{"-l", "2000"}},
		{Topo: "xeon-e5-2x10", Features: "v6.6-eevdf", Workload: "hackbench",
			Args: []string{"-g", "2", "-f", "5", "-l", "100000", "-s", "100"}, WindowFrom: 0.001, WindowTo: 0.003},
	} {
		o, err := Execute(run, 1, Engine{Driver: "serial"})
		if err != nil {
			t.Fatal(err)
		}
		if len(o.NodeIdle) != 2 {
			t.Fatalf("%s: NodeIdle %v, want two nodes", run.Workload, o.NodeIdle)
		}
		for n, v := range o.NodeIdle {
			if v < 0 || v > 100 {
				t.Errorf("%s: node %d idle %v%%", run.Workload, n, v)
			}
			if got := nodeIdleShare(n).value(o); got != v {
				t.Errorf("%s: node %d's note reads %v, want %v", run.Workload, n, got, v)
			}
		}
		mean, all := (o.NodeIdle[0]+o.NodeIdle[1])/2, idleShare(o)
		if math.Abs(mean-all) > 1e-3 { // Self is perf's rounded percent
			t.Errorf("%s: nodes' idle %v, mean %v, want the machine's %v", run.Workload, o.NodeIdle, mean, all)
		}
		if run.Workload == "pipe" && all < 80 {
			t.Errorf("pipe pair on 40 CPUs: idle %v%%, want most of the machine", all)
		}
	}
	o, err := Execute(Run{Topo: "hikey-8", Features: "v6.6-eevdf", Workload: "pipe", Args: []string{"-l", "200"}}, 1, Engine{Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	if o.NodeIdle != nil {
		t.Errorf("one-node hikey-8: NodeIdle %v, want nil", o.NodeIdle)
	}
	for _, n := range nodeIdleNotes("r") {
		if _, ok := pubValue(n.Pub); ok {
			t.Errorf("%q reads as a published figure (a pair)", n.Pub)
		}
	}
}
