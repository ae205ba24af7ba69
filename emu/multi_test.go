package emu

import (
	"testing"
)

// crossPingPong builds pairs that wake each other across CPUs a and b.
func crossPingPong(tb testing.TB, s *Sim, a, b int, work int64, g *TaskGroup) (*Task, *Task) {
	return pingPongPair(tb, s, a, b, work, g, spawn)
}

// pingPongPair is ping on CPU a and pong on CPU b, each computing work ns,
// waking the other and blocking; mk creates each task (mustTask pins it).
func pingPongPair(tb testing.TB, s *Sim, a, b int, work int64, g *TaskGroup,
	mk func(testing.TB, *Sim, TaskSpec) *Task) (*Task, *Task) {
	var pa *Task
	step := 0
	pb := mk(tb, s, TaskSpec{Comm: "pong", CPU: b, Group: g, Prog: ProgramFunc(func(t *Task) Action {
		step++
		switch step % 3 {
		case 1:
			return Block()
		case 2:
			return Run(work)
		}
		return Wake(pa)
	})})
	pa = mk(tb, s, TaskSpec{Comm: "ping", CPU: a, Group: g, Prog: Loop(Run(work), Wake(pb), Block())})
	return pa, pb
}

func TestMultiCPUPingPong(t *testing.T) {
	for _, topo := range []string{"hikey-8", "spr-2s", "epyc-9654-2s"} {
		s := newSim(t, topo, "v6.6-eevdf")
		n := s.m.NumCPUs()
		pa, pb := crossPingPong(t, s, 0, n/2+1, 5_000, nil)
		crossPingPong(t, s, 1, 2, 5_000, nil)
		dur := 20 * ms
		if testing.Short() || raceEnabled {
			dur = 3 * ms
		}
		s.Run(dur)
		var st RQStats
		for _, rq := range s.cpus {
			st.TTWUCount += rq.Stats.TTWUCount
			st.WakelistWakeups += rq.Stats.WakelistWakeups
			st.DirectWakeups += rq.Stats.DirectWakeups
			st.IPIsSent += rq.Stats.IPIsSent
			st.NrSwitches += rq.Stats.NrSwitches
		}
		t.Logf("%s: ping on CPU %d ran %d ns, pong on CPU %d ran %d; wakeups %d (wakelist %d, direct %d), IPIs %d, switches %d, epochs %d",
			topo, pa.cpu, pa.SumExecRuntime(), pb.cpu, pb.SumExecRuntime(), st.TTWUCount, st.WakelistWakeups, st.DirectWakeups, st.IPIsSent, st.NrSwitches, s.Epochs)
		if st.TTWUCount < dur/ms*5 {
			t.Errorf("%s: only %d wakeups", topo, st.TTWUCount)
		}
	}
}
