package emu

import "testing"

// Counters sums RQStats over the CPUs and derives the rates from the
// tasks' counters and the virtual time run.
func TestSimCounters(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	a := NewSem("a", 0)
	b := NewSem("b", 0)
	spawn(t, s, TaskSpec{Comm: "ping", CPU: 0, Sems: []*Sem{a}, Prog: Loop(Run(ms/10), Signal(b), Wait(a))})
	spawn(t, s, TaskSpec{Comm: "pong", CPU: 5, Sems: []*Sem{b}, Prog: Loop(Wait(b), Run(ms/10), Signal(a))})
	s.Run(20 * ms)
	c := s.Counters()
	var switches, wakeups, mig int64
	for cpu := range s.Machine().CPUs {
		switches += s.RQ(cpu).Stats.NrSwitches
	}
	for _, p := range s.Tasks() {
		wakeups += p.Stats.NrWakeups
		mig += p.Stats.NrMigrations
	}
	if switches == 0 || wakeups == 0 {
		t.Fatalf("the ping-pong did not run: %d switches, %d wakeups", switches, wakeups)
	}
	sec := float64(s.Now()) / 1e9
	for k, want := range map[string]float64{
		"sched.NrSwitches":              float64(switches),
		"sched.nr_migrations":           float64(mig),
		"rate.wakeups_per_sec":          float64(wakeups) / sec,
		"rate.context_switches_per_sec": float64(switches) / sec,
		"run.virtual_sec":               sec,
		"run.epochs":                    float64(s.Epochs),
		"run.accesses":                  float64(s.Space().Stats().Accesses),
	} {
		if got, ok := c[k]; !ok || got != want {
			t.Errorf("Counters()[%q] = %v (present %v), want %v", k, got, ok, want)
		}
	}
}
