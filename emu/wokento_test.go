package emu

import "testing"

// TestWakerSeesOwnWakeups: a waker waking two tasks in a row must not
// place both on the one idle CPU it found first. core.c: idle_cpu() (v6.6)
// is false once rq->ttwu_pending is set, and the waker set it itself with
// its first wakeup (__ttwu_queue_wakelist()), so select_idle_sibling()'s
// scan for the second wakee passes over that CPU. On hikey-8 a hog keeps
// the wakees' previous CPU 1 busy; CPUs 2 and 3 of the same cluster idle.
func TestWakerSeesOwnWakeups(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 1, Prog: Hog()})
	var w [2]*Task
	for i := range w {
		w[i] = spawn(t, s, TaskSpec{Comm: "wakee", CPU: 1, CPUs: []int{0, 1, 2, 3}, Prog: Loop(Block(), Run(2*ms))})
	}
	mustTask(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(20*ms), Wake(w[0]), Wake(w[1]), Block())})
	s.Run(21 * ms) // the wakees ran a slice each behind the hog and blocked on CPU 1
	if w[0].Stats.NrWakeups != 1 || w[1].Stats.NrWakeups != 1 {
		t.Fatalf("wakeups %d, %d; want 1 each", w[0].Stats.NrWakeups, w[1].Stats.NrWakeups)
	}
	if w[0].cpu == w[1].cpu {
		t.Errorf("both wakees placed on CPU %d (run delays %d and %d ns); want the second on the other idle CPU",
			w[0].cpu, w[0].Stats.RunDelay, w[1].Stats.RunDelay)
	}
	for i, p := range w {
		if p.cpu != 2 && p.cpu != 3 {
			t.Errorf("wakee %d on CPU %d, want an idle CPU of the cluster (2 or 3)", i, p.cpu)
		}
	}
}
