package emu

import "testing"

// TestLaterWakerSeesClaimedIdle: two wakers of one cluster of hikey-8 wake
// two tasks whose previous CPU 6 is idle, 300 ns apart in one epoch. In
// the kernel (core.c v6.6 __ttwu_queue_wakelist() sets rq->ttwu_pending;
// idle_cpu() is 0 while it is set) the second waker's
// select_idle_sibling() (fair.c) no longer sees CPU 6 idle and scans on to
// the idle CPU 7: both tasks run at once. Before the barrier moved the
// later wakeup, both were queued on CPU 6 and one waited for the other's
// 50 us run.
func TestLaterWakerSeesClaimedIdle(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	wokeAt := [2]int64{-1, -1}
	delay := [2]int64{-1, -1}
	cpu := [2]int{-1, -1}
	var wakees [2]*Task
	for i := range wakees {
		n := 0
		wakees[i] = spawn(t, s, TaskSpec{Comm: "wakee", CPU: 6, Prog: ProgramFunc(func(tk *Task) Action {
			switch n++; n {
			case 1:
				return Run(100_000)
			case 2:
				return Block()
			case 3:
				delay[i], cpu[i] = tk.Now()-wokeAt[i], tk.CPU()
				return Run(50_000)
			}
			return Exit()
		})})
	}
	for i, c := range []int{4, 5} {
		n := 0
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: c, CPUs: []int{c}, Prog: ProgramFunc(func(tk *Task) Action {
			switch n++; n {
			case 1:
				return Run(2_000_000 - 1500 + int64(300*i))
			case 2:
				wokeAt[i] = tk.Now()
				return Wake(wakees[i])
			}
			return Block()
		})})
	}
	s.Run(5 * ms)
	t.Logf("woken at %v, ran %v ns later on CPUs %v", wokeAt, delay, cpu)
	for i := range delay {
		if delay[i] < 0 {
			t.Fatalf("wakee %d never ran after its wakeup (woken at %d)", i, wokeAt[i])
		}
		if delay[i] > 20_000 {
			t.Errorf("wakee %d waited %d ns on CPU %d; want both to run at once, on two idle CPUs", i, delay[i], cpu[i])
		}
	}
	if cpu[0] == cpu[1] {
		t.Errorf("both wakees ran on CPU %d", cpu[0])
	}
}
