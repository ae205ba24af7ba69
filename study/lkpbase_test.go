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
