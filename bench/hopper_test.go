package bench

import (
	"errors"
	"testing"
)

func TestHopperGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "hopper", "-n", "4", "-d", "200", "-top", "5")
	golden(t, "hopper/hikey-8.golden", []byte(out))
}

// The migrate-starvation study's settings, scaled down. Under the legacy
// CFS the longest waits are the first ones: a new task is placed
// START_DEBIT (a whole period for the first one) right of min_vruntime,
// and the hoppers arriving near min_vruntime keep going first, for
// 100 ms and more. EEVDF places a new task half a slice out and bounds
// every carried lag, so its worst wait stays near the queue length times
// the burst. PLACE_MIGRATE places each queued migration (a hop is
// move_queued_task()) at the front or back of the destination instead of
// carrying the relative vruntime, which bounds the legacy waits too.
func TestHopperMigratePlacement(t *testing.T) {
	args := []string{"-n", "10", "-d", "150"}
	res, _ := runW(t, "hikey-8", "v5.15-cfs", 1, "hopper", args...)
	lm := res.Workload.Metrics(res.Sim).Values
	legacy := lm["max_wait_ms"]
	placeMigrate := metric(t, "hikey-8", "v5.15-cfs,+PLACE_MIGRATE", "hopper", args...)
	eevdf := metric(t, "hikey-8", "v6.6-eevdf", "hopper", args...)
	t.Logf("max runnable wait: v5.15-cfs %.3f ms (after a hop %.3f ms), +PLACE_MIGRATE %.3f ms, v6.6-eevdf %.3f ms",
		legacy, lm["max_wait_after_hop_ms"], placeMigrate, eevdf)
	if legacy <= 2*eevdf {
		t.Errorf("max wait under legacy CFS migration %.3f ms, want well above EEVDF's %.3f ms", legacy, eevdf)
	}
	if placeMigrate*2 >= legacy {
		t.Errorf("max wait with +PLACE_MIGRATE %.3f ms, want well below legacy CFS's %.3f ms", placeMigrate, legacy)
	}
}

func TestHopperBadInput(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-n", "0"}, "-n"},
		{[]string{"-b", "0"}, "-b"},
		{[]string{"-d", "-1"}, "-d"},
		{[]string{"-mode", "sideways"}, "-mode"},
	} {
		_, err := build(m, "hopper", tc.args...)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != tc.flag {
			t.Errorf("%v: err = %v, want a FlagError on %s", tc.args, err, tc.flag)
		}
	}
}

// The run-delay callback runs on every CPU's goroutine: the parallel
// driver must give the serial driver's bytes.
func TestHopperDeterminism(t *testing.T) {
	driversAgree(t, "hikey-8", "v5.15-cfs", 3, 4, "hopper", "-n", "3", "-d", "100", "-mode", "next")
}
