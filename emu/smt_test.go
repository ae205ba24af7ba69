package emu

import "testing"

// TestSMTSharing: on spr-2s a thread computes at latency_ns.smt_yield of
// its speed while its SMT sibling is busy: two hogs on sibling threads
// (CPUs 0 and 112 share core 0) each finish Run(1 ms) later than two on
// separate cores, by 1/yield.
func TestSMTSharing(t *testing.T) {
	finish := func(a, b int) int64 {
		s := newSim(t, "spr-2s", "v6.6-eevdf")
		var done int64
		for _, cpu := range []int{a, b} {
			n := 0
			mustTask(t, s, TaskSpec{Comm: "hog", CPU: cpu, Prog: ProgramFunc(func(tk *Task) Action {
				n++
				if n == 1 {
					return Run(ms)
				}
				done = max(done, s.cpus[tk.cpu].now)
				return Exit()
			})})
		}
		s.Run(10 * ms)
		return done
	}
	alone, shared := finish(0, 1), finish(0, 112)
	y := machine(t, "spr-2s").Lat.SMTYield
	ratio := float64(shared) / float64(alone)
	t.Logf("Run(1 ms) on separate cores ends at %d ns, on SMT siblings at %d ns (x%.3f; yield %.2f)", alone, shared, ratio, y)
	if want := 1 / y; ratio < 0.97*want || ratio > 1.03*want {
		t.Errorf("SMT siblings slow a hog by x%.3f, want 1/yield = x%.3f", ratio, want)
	}
}
