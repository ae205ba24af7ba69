package emu

import "testing"

// sleepWake runs tasks pinned to CPU 0 of hikey-8, each sleeping once with
// the given (ns, slack) from its start, and returns the time each next
// runs, measured from its sleep.
func sleepWake(t *testing.T, sleeps [][2]int64) []int64 {
	t.Helper()
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	woke := make([]int64, len(sleeps))
	for i, sl := range sleeps {
		var at int64 = -1
		prog := ProgramFunc(func(p *Task) Action {
			switch {
			case at < 0:
				at = p.Now()
				return SleepRange(sl[0], sl[1])
			case woke[i] == 0:
				woke[i] = p.Now() - at
			}
			return Block()
		})
		mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: prog})
	}
	s.RunUntil(2*ms, func() bool { return false })
	return woke
}

// __hrtimer_run_queues() runs a sleeper whose soft expiry has passed at
// its CPU's next timer interrupt: a 10 µs sleep with 50 µs of slack ends
// at the other sleeper's 35 µs hard expiry, not at its own 60 µs; alone,
// it ends at 60 µs, and nanosleep(0) at the slack.
func TestSleepRangeCoalesces(t *testing.T) {
	together := sleepWake(t, [][2]int64{{10 * us, 50 * us}, {30 * us, 5 * us}})
	alone := sleepWake(t, [][2]int64{{10 * us, 50 * us}})
	zero := sleepWake(t, [][2]int64{{0, 50 * us}})
	t.Logf("together %v, alone %v, nanosleep(0) %v ns", together, alone, zero)
	if together[0] < 30*us || together[0] > 45*us {
		t.Errorf("10 us + 50 us slack beside a 35 us hard expiry woke after %d ns, want 30-45 us", together[0])
	}
	if together[1] < 35*us || together[1] > 45*us {
		t.Errorf("30 us + 5 us slack woke after %d ns, want 35-45 us", together[1])
	}
	if alone[0] < 60*us || alone[0] > 70*us {
		t.Errorf("10 us + 50 us slack alone woke after %d ns, want 60-70 us", alone[0])
	}
	if zero[0] < 50*us || zero[0] > 60*us {
		t.Errorf("nanosleep(0) with 50 us slack woke after %d ns, want 50-60 us", zero[0])
	}
}
