package emu

import (
	"fmt"
	"strings"
	"testing"
)

// spreadRun starts 10 CPU hogs on CPU 0 of a HiKey (8 CPUs in two 4-CPU
// clusters) and reports when every CPU first had work, the final
// distribution and the migrations.
func spreadRun(t *testing.T, feat string) (allBusy int64, dist []int, migrations int64, minRun int64) {
	s := newSim(t, "hikey-8", feat)
	for i := 0; i < 10; i++ {
		spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
	}
	allBusy = -1
	for step := int64(1); step <= 1000; step++ {
		s.Run(step * ms)
		busy := 0
		for _, rq := range s.cpus {
			if rq.nrRunning > 0 {
				busy++
			}
		}
		if busy == len(s.cpus) && allBusy < 0 {
			allBusy = s.now
		}
	}
	minRun = -1
	for _, p := range s.tasks {
		migrations += p.Stats.NrMigrations
		if minRun < 0 || p.SumExecRuntime() < minRun {
			minRun = p.SumExecRuntime()
		}
	}
	for _, rq := range s.cpus {
		dist = append(dist, rq.nrRunning)
	}
	return allBusy, dist, migrations, minRun
}

// TestLoadBalanceSpread: 10 runnable tasks on 8 CPUs, all starting on one
// CPU, spread to every CPU within 25 balance intervals of the package
// domain (8 ms idle on this machine; the ILB kicked from the busy CPU's
// tick does it, then periodic and newidle balancing), and no task starves.
// The pre-fix behaviour (NO_LB_SPREAD_LLC: utilization-based imbalance
// inside the LLC) is reproducible: deterministic, and different.
func TestLoadBalanceSpread(t *testing.T) {
	var report strings.Builder
	results := map[string]string{}
	for _, feat := range []string{"v6.6-eevdf", "v6.6-eevdf,-LB_SPREAD_LLC", "v5.15-cfs", "v5.15-cfs,-LB_SPREAD_LLC"} {
		busy, dist, migr, minRun := spreadRun(t, feat)
		line := fmt.Sprintf("%-26s every CPU busy at %4d ms, final nr_running %v, %d migrations, least-served task ran %d ms\n",
			feat, busy/ms, dist, migr, minRun/ms)
		report.WriteString(line)
		results[feat] = line
		if again, _, _, _ := spreadRun(t, feat); again != busy {
			t.Errorf("%s: not reproducible: all busy at %d then %d", feat, busy, again)
		}
		if busy < 0 || busy > 25*8*ms {
			t.Errorf("%s: CPUs still idle after %d ms (want every CPU busy within 200 ms)", feat, busy/ms)
		}
		for cpu, n := range dist {
			if n == 0 || n > 2 {
				t.Errorf("%s: CPU %d ends with %d tasks", feat, cpu, n)
			}
		}
		// 10 tasks on 8 CPUs for 1 s: a fair share is 800 ms; none may
		// starve.
		if minRun < 300*ms {
			t.Errorf("%s: a task ran only %d ms in 1 s", feat, minRun/ms)
		}
	}
	t.Log("\n" + report.String())
	if results["v6.6-eevdf"] == results["v6.6-eevdf,-LB_SPREAD_LLC"] {
		t.Error("LB_SPREAD_LLC makes no difference")
	}
	golden(t, "balance/spread.golden", []byte(report.String()))
}
