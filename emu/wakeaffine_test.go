package emu

import "testing"

// TestWakeAffineSchedstats: fair.c wake_affine() (v6.6) counts
// p->stats.nr_wakeups_affine_attempts on every call and
// nr_wakeups_affine (with sd->ttwu_move_affine) when it picks this_cpu.
// A sync waker alone on CPU 0 (pinned) wakes a free task that last ran on CPU 1 of the
// same cluster: wake_affine_idle()'s `sync && nr_running == 1` picks CPU 0
// every time (select_idle_sibling() then keeps the wakee on its idle
// prev). With a hog beside the waker, nr_running is 2 and the idle prev
// wins inside wake_affine_idle(): attempts, no affine wakeups.
func TestWakeAffineSchedstats(t *testing.T) {
	for _, c := range []struct {
		name   string
		hog    bool
		affine bool
	}{{"waker alone: this_cpu", false, true}, {"waker beside a hog: prev", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			sem := NewSem("wakee", 0)
			wakee := spawn(t, s, TaskSpec{Comm: "wakee", CPU: 1, Prog: Loop(Wait(sem), Run(20_000)), Sems: []*Sem{sem}})
			mustTask(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(100_000), Signal(sem).WithSync(), Sleep(100_000))})
			if c.hog {
				mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
			}
			s.Run(20 * ms)
			st := wakee.Stats
			if st.NrWakeups < 10 {
				t.Fatalf("only %d wakeups", st.NrWakeups)
			}
			if st.NrWakeupsAffineAttempts != st.NrWakeups {
				t.Errorf("nr_wakeups_affine_attempts %d, nr_wakeups %d: want every wakeup (prev 1 != this 0)", st.NrWakeupsAffineAttempts, st.NrWakeups)
			}
			want := int64(0)
			if c.affine {
				want = st.NrWakeups
			}
			if st.NrWakeupsAffine != want {
				t.Errorf("nr_wakeups_affine %d, want %d of %d wakeups", st.NrWakeupsAffine, want, st.NrWakeups)
			}
			var move int64
			for _, ds := range s.domains[0] {
				move += ds.Stats.TTWUMoveAffine
			}
			if move != st.NrWakeupsAffine {
				t.Errorf("sd->ttwu_move_affine %d, nr_wakeups_affine %d: wake_affine() counts them together", move, st.NrWakeupsAffine)
			}
		})
	}
}
