package bench

import (
	"slices"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

// smallRuns are a short run of every workload on hikey-8, with the flags
// that keep it to a few ms of virtual time.
var smallRuns = map[string][]string{
	"hackbench": {"-g", "2", "-f", "4", "-l", "20"},
	"hopper":    {"-n", "3", "-d", "2"},
	"messaging": {"-g", "1", "-l", "20"},
	"netperf":   {"-t", "UDP_RR", "-nr", "4", "-l", "0.002"},
	"pipe":      {"-l", "500"},
	"rtapp":     {"-f", "testdata/rtapp/example.json", "-d", "0.005"},
	"schbench":  {"-m", "2", "-t", "2", "-r", "1"},
	"stress-ng": {"--switch", "4", "--sem", "2", "-t", "0.002"},
	"sysbench":  {"--threads", "4", "--time", "0.002"},
}

// TestEveryProfileEveryWorkload: every kernel profile runs every workload
// to completion with the conservation checks on at every barrier
// (RunConfig.Check: tasks in one place, nr_running, the queues' sums and
// trees, tg->load_avg physically and in the model); a broken invariant
// panics with the CPU, task and state.
func TestEveryProfileEveryWorkload(t *testing.T) {
	names := Names()
	for _, n := range names {
		if _, ok := smallRuns[n]; !ok {
			t.Errorf("workload %s has no small run here: add one", n)
		}
	}
	for _, prof := range emu.ProfileNames() {
		for _, n := range names {
			args, ok := smallRuns[n]
			if !ok {
				continue
			}
			t.Run(prof+"/"+n, func(t *testing.T) {
				runW(t, "hikey-8", prof, 1, n, slices.Clone(args)...)
			})
		}
	}
}
