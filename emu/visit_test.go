package emu

import "testing"

// TestBarrierVisitsBusyCPUs: a barrier visits the CPUs that have something
// to settle (visit.go), not every CPU. Two tasks computing 20 µs and
// sleeping 30 µs on CPUs 0 and 1 of the 224-CPU spr-2s leave the other
// 222 CPUs tickless and idle: over 5 ms the barriers visit a few CPUs
// each on average (the two, a CPU an idle balance ran for, a wakeup's
// target), where a barrier of every CPU visits 224. The run is checked
// (newSim): every CPU not visited is verified unchanged at every barrier
// (checkUnvisited).
func TestBarrierVisitsBusyCPUs(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	for cpu := range 2 {
		mustTask(t, s, TaskSpec{Comm: "worker", CPU: cpu, Prog: Loop(Run(20_000), Sleep(30_000))})
	}
	s.Run(5 * ms)
	if s.Epochs == 0 {
		t.Fatal("no barrier ran")
	}
	per := float64(s.visits) / float64(s.Epochs)
	t.Logf("%d barriers, %.2f CPUs visited per barrier", s.Epochs, per)
	if per > 8 {
		t.Errorf("a barrier visited %.1f CPUs on average; want at most 8 of 224 (two busy CPUs)", per)
	}
}
