package study

import "testing"

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
