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
		{[]string{"-bdist", "normal"}, "-bdist"},
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

// The waits after a hop are counted apart from the first ones, from the
// fork. Under v5.15-cfs a hop is move_queued_task() (core.c:
// migration_cpu_stop() -> __migrate_task()): dequeue_entity() without
// DEQUEUE_SLEEP subtracts the source's min_vruntime and enqueue_entity()
// adds the destination's, so the offset v - min_vruntime is carried
// unbounded; the hoppers arrive within a burst of the destination's
// min_vruntime and keep going first, so the destination's min_vruntime
// (fair.c v5.15: update_min_vruntime()) barely moves and a task forked
// with START_DEBIT (wake_up_new_task(): place_entity(initial=1)) waits for
// the whole flow before its first run. PLACE_MIGRATE
// (place_entity_migrate()) and EEVDF's clamped lag do not hold
// min_vruntime back.
func TestHopperWaitsAfterHop(t *testing.T) {
	args := []string{"-n", "10", "-d", "150"}
	first := map[string]float64{}
	for _, feat := range []string{"v5.15-cfs", "v5.15-cfs,+PLACE_MIGRATE", "v6.6-eevdf"} {
		res, _ := runW(t, "hikey-8", feat, 1, "hopper", args...)
		w := res.Workload.(*hopper)
		r := w.summary()
		v := res.Workload.Metrics(res.Sim).Values
		t.Logf("%s: first wait max %.3f ms p99.9 %.3f; after a hop max %.3f ms p99.9 %.3f over %d hops (%d made); overall max %.3f",
			feat, v["max_first_wait_ms"], v["p999_first_wait_ms"], v["max_wait_after_hop_ms"], v["p999_wait_after_hop_ms"], r.hopWaits, r.hops, v["max_wait_ms"])
		// One wait per hop, less the hops still in flight at the end.
		if r.hopWaits > r.hops || r.hopWaits < r.hops-int64(len(w.tasks)) {
			t.Errorf("%s: %d waits after a hop for %d hops of %d tasks", feat, r.hopWaits, r.hops, len(w.tasks))
		}
		if m := max(v["max_first_wait_ms"], v["max_wait_after_hop_ms"]); m > v["max_wait_ms"] {
			t.Errorf("%s: first %.3f / after-hop %.3f ms above the overall max %.3f", feat, v["max_first_wait_ms"], v["max_wait_after_hop_ms"], v["max_wait_ms"])
		}
		if v["p999_wait_after_hop_ms"] > v["max_wait_after_hop_ms"] || v["p999_first_wait_ms"] > v["max_first_wait_ms"] {
			t.Errorf("%s: a p99.9 above its max: %v", feat, v)
		}
		first[feat] = v["max_first_wait_ms"]
	}
	if legacy := first["v5.15-cfs"]; legacy < 4*first["v5.15-cfs,+PLACE_MIGRATE"] || legacy < 4*first["v6.6-eevdf"] {
		t.Errorf("max first wait: v5.15-cfs %.3f ms, want well above +PLACE_MIGRATE's %.3f and EEVDF's %.3f",
			legacy, first["v5.15-cfs,+PLACE_MIGRATE"], first["v6.6-eevdf"])
	}
}

// The spread of a queue's vruntimes is taken in the kernel's order, by
// the sign of the difference: an EEVDF placement left of zero (V - lag
// early in a run) wraps the u64 and must not count as the largest.
func TestVruntimeBefore(t *testing.T) {
	const left = ^uint64(0) - 999 // -1000
	for _, tc := range []struct {
		a, b uint64
		want bool
	}{
		{1, 2, true}, {2, 1, false}, {5, 5, false},
		{left, 3, true}, {3, left, false},
	} {
		if got := vruntimeBefore(tc.a, tc.b); got != tc.want {
			t.Errorf("vruntimeBefore(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
