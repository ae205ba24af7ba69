package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

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
	// Up to the hard expiry's interrupt (35 us) plus the arming, the
	// interrupt and the wakeup's costs on hikey-8's 1.2 GHz A53s.
	if together[0] < 30*us || together[0] > 50*us {
		t.Errorf("10 us + 50 us slack beside a 35 us hard expiry woke after %d ns, want 30-50 us", together[0])
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

// __hrtimer_run_queues() (v6.6) walks the timers in hard-expiry order and
// stops at the first whose soft expiry is still ahead, even when a later
// one's has passed: at the 20 µs interrupt (a sleep without slack) the
// sleeper of soft 30 / hard 35 µs stops the walk, so the one of soft 5 /
// hard 80 µs, behind it, wakes at the 35 µs interrupt, not at 20.
func TestSleepRangeStopsAtFirstSoftAhead(t *testing.T) {
	woke := sleepWake(t, [][2]int64{{20 * us, 0}, {30 * us, 5 * us}, {5 * us, 75 * us}})
	t.Logf("woke after %v ns", woke)
	if woke[0] < 20*us || woke[0] > 28*us {
		t.Errorf("20 us without slack woke after %d ns, want 20-28 us", woke[0])
	}
	if woke[2] < 30*us || woke[2] > 45*us {
		t.Errorf("5 us + 75 us slack behind a soft 30 / hard 35 us timer woke after %d ns, want 30-45 us (the 35 us interrupt)", woke[2])
	}
}

// A timed sleep ends in hrtimer_wakeup() -> try_to_wake_up() from the
// hrtimer interrupt of the CPU the task slept on (its timer's base):
// wake_flags 0 (no WF_SYNC), and this_cpu is prev, so
// select_task_rq_fair() never calls wake_affine() (v6.6: "if (cpu !=
// prev_cpu) new_cpu = wake_affine(...)"); select_idle_sibling(p, prev,
// prev) keeps an idle prev and leaves a busy one for an idle CPU of the
// LLC.
func TestTimerWakeupFromInterrupt(t *testing.T) {
	for _, hog := range []bool{false, true} {
		s := newSim(t, "hikey-8", "v6.6-eevdf")
		p := spawn(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: Loop(SleepRange(10*us, 50*us), Run(5*us))})
		if hog {
			mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
		}
		s.Run(2 * ms)
		st := p.Stats
		if st.NrWakeups < 20 || st.NrWakeupsSync != 0 || st.NrWakeupsAffineAttempts != 0 {
			t.Errorf("hog %v: %d wakeups, %d sync, %d wake_affine() attempts; want 20 or more, none sync, no attempt", hog, st.NrWakeups, st.NrWakeupsSync, st.NrWakeupsAffineAttempts)
		}
		switch {
		case !hog && (st.NrWakeupsLoc != st.NrWakeups || st.NrMigrations != 0):
			t.Errorf("idle prev: %d local of %d wakeups, %d migrations; want all local, none", st.NrWakeupsLoc, st.NrWakeups, st.NrMigrations)
		case hog && (st.NrWakeupsMig == 0 || p.CPU() == 0):
			t.Errorf("busy prev: %d wakeups migrated, on CPU %d; want it moved off the hog's CPU 0", st.NrWakeupsMig, p.CPU())
		}
	}
}

// A sleep pays hrtimer_start_range_ns() when it arms its timer and its
// expiry the local timer interrupt's hrtimer_interrupt() once, however
// many sleepers that interrupt wakes (kernel/time/hrtimer.c v6.6): two
// sleepers pinned to one CPU, whose 10 µs + 50 µs slack sleep ends at the
// other's 35 µs hard expiry, arm two timers and take one interrupt.
func TestHrtimerCosts(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	for _, sl := range [][2]int64{{10 * us, 50 * us}, {30 * us, 5 * us}} {
		slept := false
		mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: ProgramFunc(func(p *Task) Action {
			if !slept {
				slept = true
				return SleepRange(sl[0], sl[1])
			}
			return Block()
		})})
	}
	s.RunUntil(2*ms, func() bool { return false })
	m := s.Machine()
	if got, want := s.SymbolNS("hrtimer_start_range_ns"), 2*m.Cost(hwmodel.OpHrtimerStart); got != want || want == 0 {
		t.Errorf("hrtimer_start_range_ns %d ns, want 2 arms x %d", got, m.Cost(hwmodel.OpHrtimerStart))
	}
	if got, want := s.SymbolNS("hrtimer_interrupt"), m.Cost(hwmodel.OpHrtimerIRQ); got != want || want == 0 {
		t.Errorf("hrtimer_interrupt %d ns, want one interrupt's %d", got, want)
	}
}
