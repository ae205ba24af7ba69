package bench

import (
	"errors"
	"testing"
)

func TestSchbenchGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "schbench", "-m", "2", "-t", "4", "-r", "2")
	golden(t, "schbench/hikey-8.golden", []byte(out))
}

// The pre-2023 loop (-c) with an interval report at second 2 and the
// default worker count (-t 0: 8 CPUs / 2 message threads).
func TestSchbenchClassicGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v5.15-cfs", 1, "schbench", "-m", "2", "-s", "10000", "-c", "100000", "-r", "3", "-i", "2")
	golden(t, "schbench/hikey-8-classic.golden", []byte(out))
}

// calc_percentiles(): each percentile's bucket value, and the samples
// between it and the previous percentile.
func TestSchbenchPercentiles(t *testing.T) {
	h := NewHist()
	for v := uint64(1); v <= 100; v++ {
		h.Add(v)
	}
	vals, counts := schPercentiles(h, schPlist)
	wantV := []uint64{20, 50, 90, 99, 100}
	wantC := []uint64{20, 30, 40, 9, 1}
	for i := range schPlist {
		if vals[i] != wantV[i] || counts[i] != wantC[i] {
			t.Errorf("p%v = %d (%d samples), want %d (%d samples)", schPlist[i], vals[i], counts[i], wantV[i], wantC[i])
		}
	}
	// All samples in one bucket: the later percentiles get 0 samples,
	// as in the README's pipe-mode output.
	h = NewHist()
	for range 10 {
		h.Add(7)
	}
	vals, counts = schPercentiles(h, schPlist)
	if vals[4] != 7 || counts[0] != 10 || counts[1] != 0 {
		t.Errorf("one bucket: vals %v counts %v, want all 7 and counts 10,0,0,0,0", vals, counts)
	}
}

// More workers than CPUs: a woken worker waits behind running ones, so
// the wakeup p99 grows by orders of magnitude.
func TestSchbenchOverload(t *testing.T) {
	// -m 2 -t 3: 8 tasks on 8 CPUs, one each; -t 16: 34 tasks.
	fit := metric(t, "hikey-8", "v6.6-eevdf", "schbench", "-m", "2", "-t", "3", "-r", "1")
	over := metric(t, "hikey-8", "v6.6-eevdf", "schbench", "-m", "2", "-t", "16", "-r", "1")
	t.Logf("wakeup p99: -t 3 %.0f usec, -t 16 %.0f usec", fit, over)
	if over < 10*fit {
		t.Errorf("wakeup p99 with 32 workers on 8 CPUs %.0f usec, want >> %.0f with 6", over, fit)
	}
}

// The pre-2023 worker's usec_spin() spins until -c usec of wall time have
// passed (gettimeofday() in a loop), so two workers sharing a CPU each
// finish a spin in -c usec, as a worker alone does: 16 workers with
// 100 ms spins on hikey-8's 8 CPUs still do about one request per 110 ms
// each (the spin, then the message thread's 10 ms sleep), not half as
// many, as spins of CPU time would give.
func TestSchbenchClassicSpinIsWallTime(t *testing.T) {
	res, _ := runW(t, "hikey-8", "v5.15-cfs", 1, "schbench", "-m", "1", "-t", "16", "-s", "10000", "-c", "100000", "-r", "2")
	rps := res.Workload.Metrics(res.Sim).Values["average_rps"]
	// A worker loops at most every 100 ms + 10 ms (plus the sleep's
	// jitter, below 2.5 ms): 16 workers, about 145 requests per second.
	const lo, hi = 120, 150
	t.Logf("16 workers, 100 ms spins, 8 CPUs: %.1f requests/s", rps)
	if rps < lo || rps > hi {
		t.Errorf("average rps %.1f, want %d..%d (wall-time spins; CPU-time spins would give about half)", rps, lo, hi)
	}
}

func TestSchbenchBadInput(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-m", "9"}, "-m"}, // more message threads than CPUs
		{[]string{"-m", "0"}, "-m"},
		{[]string{"-r", "-1"}, "-r"},
		{[]string{"-r", "0"}, "-r"},
		{[]string{"-t", "-2"}, "-t"},
		{[]string{"-m", "8", "-t", "200"}, "-t"}, // 1608 tasks on 8 CPUs
		{[]string{"-R", "1000"}, "-R"},
		{[]string{"-p", "4096"}, "-p"},
		{[]string{"-s", "-5"}, "-s"},
	} {
		_, err := build(m, "schbench", tc.args...)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != tc.flag {
			t.Errorf("%v: err = %v, want a FlagError on %s", tc.args, err, tc.flag)
		}
	}
}

// The serial and parallel drivers give the same bytes.
func TestSchbenchDeterminism(t *testing.T) {
	driversAgree(t, "hikey-8", "v6.6-eevdf", 7, 4, "schbench", "-m", "2", "-t", "6", "-r", "1", "-n", "2")
}

// TestSchbenchBucketsBounded: a worker holds only the seconds not yet
// folded into the run's totals, however long the run (issue 40, item 10:
// every second's histograms were kept for the report).
func TestSchbenchBucketsBounded(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, r := range []string{"5", "40"} {
		w, err := build(m, "schbench", "-m", "1", "-t", "2", "-r", r)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Execute(w, RunConfig{Machine: m, Seed: 1, Driver: "serial"})
		if err != nil || !res.Complete {
			t.Fatalf("-r %s: %v", r, err)
		}
		for i, st := range w.(*schbench).wk {
			if n := len(st.loops); n > 3 {
				t.Errorf("-r %s: worker %d holds %d seconds of buckets after the run, want at most 3", r, i, n)
			}
		}
	}
}
