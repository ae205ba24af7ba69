package bench

import (
	"fmt"
	"testing"
)

// TestSeedsVary: a seed varies what varies between runs on a real machine
// (which idle core of an LLC each task lands on, the order and phase in
// which the tool's tasks start), so the same command over seeds 1-3 gives
// a spread, and the same seed gives the same bytes.
func TestSeedsVary(t *testing.T) {
	for _, tc := range []struct {
		topo string
		args []string
	}{
		{"hikey-8", []string{"hackbench", "-g", "2", "-l", "50"}},
		{"spr-2s", []string{"netperf", "-t", "UDP_RR", "-nr", "8", "-l", "0.003"}},
		{"hikey-8", []string{"schbench", "-m", "2", "-t", "4", "-r", "2"}},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			var outs []string
			values := map[string]bool{}
			for seed := uint64(1); seed <= 3; seed++ {
				res, out := runW(t, tc.topo, "v6.6-eevdf", seed, tc.args[0], tc.args[1:]...)
				mt := res.Workload.Metrics(res.Sim)
				// Every metric, not the primary alone: schbench's
				// p99 is a histogram bucket, which seeds 1-3 can
				// share (the other percentiles and rates differ).
				values[fmt.Sprint(mt.Values)] = true
				outs = append(outs, out)
			}
			if len(values) == 1 {
				t.Errorf("%v: seeds 1-3 all give the metrics %v", tc.args, values)
			}
			if _, again := runW(t, tc.topo, "v6.6-eevdf", 1, tc.args[0], tc.args[1:]...); again != outs[0] {
				t.Errorf("%v: seed 1 twice gives different output", tc.args)
			}
		})
	}
}
