package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestWakeupOnCPU: core.c try_to_wake_up() (v6.6) queues a wakee that is
// still on_cpu (its CPU is still inside the __schedule() that put it to
// sleep) on that CPU's wake list, ttwu_queue_wakelist(p, task_cpu(p),
// wake_flags | WF_ON_CPU), without select_task_rq(). The wakee sleeps on
// CPU 1 (socket 0) and a waker on CPU 56 (socket 1) wakes it with
// WF_SYNC. Once CPU 1 has finished switching, wake_affine() picks the
// waker's CPU and select_idle_sibling() cannot return prev (it does not
// share the waker's LLC), so the wakee migrates to socket 1; while CPU 1
// is still paying the weave's stall of that switch (injected here as the
// debt a saturated tg->load_avg line leaves), the wakee stays on CPU 1.
func TestWakeupOnCPU(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stall   int64 // ns of stall left on CPU 1's switch at the barrier
		onCPU   int64 // OnCPUWakeups, want
		migrate int64 // wakee's nr_wakeups_migrate, want
	}{
		{"switched", 0, 0, 1},
		{"still on_cpu", 50_000, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, "spr-2s", "v6.6-eevdf")
			wakee := spawn(t, s, TaskSpec{Comm: "wakee", CPU: 1, Prog: Loop(Block(), Run(20_000))})
			waker := mustTask(t, s, TaskSpec{Comm: "waker", CPU: 56, Prog: Loop(Run(30_000), Wake(wakee).WithSync(), Block())})
			s.Run(20_000) // the wakee has blocked; CPU 1 is idle
			p := idleAfterSwitchingOut(t, s, 1, wakee)
			if tc.stall > 0 {
				// What the weave reports at a barrier when CPU 1's
				// dequeue waited on the line; publish it as that
				// barrier does (the driver skips the empty epochs up
				// to the wakeup).
				p.addDebt(SymUpdateCfsGroup, tc.stall)
				s.onCPU[1] = p.onCPUView()
			}
			s.Run(200_000)
			if got := s.RQ(56).Stats.OnCPUWakeups; got != tc.onCPU {
				t.Errorf("OnCPUWakeups = %d, want %d", got, tc.onCPU)
			}
			if got := wakee.Stats.NrWakeupsMig; got != tc.migrate {
				t.Errorf("wakee's migrating wakeups = %d, want %d (it ran on CPU %d)", got, tc.migrate, wakee.cpu)
			}
			if wakee.Stats.NrWakeups != 1 || waker.Stats.NrWakeups != 0 {
				t.Errorf("wakeups: wakee %d, waker %d; want 1, 0", wakee.Stats.NrWakeups, waker.Stats.NrWakeups)
			}
		})
	}
}

// TestIdleCPUWhileSwitchingOut: core.c idle_cpu() (v6.6), which
// select_idle_sibling() asks of prev through available_idle_cpu(), is
// false while rq->curr is not the idle task: a CPU still inside the
// __schedule() that switches a sleeping task out, waiting on the weave's
// tg->load_avg line for its dequeue, has not reached the idle task yet. B
// slept on CPU 1 long ago; A then ran there and has just blocked; a waker
// on CPU 2 (the same LLC) wakes B with WF_SYNC, so wake_affine() picks
// CPU 2, which is busy, and select_idle_sibling() takes prev only if it is
// idle. With CPU 1's switch of A finished, B goes back to CPU 1; with the
// stall of that switch still unpaid (injected as the debt a saturated line
// leaves, as TestWakeupOnCPU does), it scans on to another idle CPU.
func TestIdleCPUWhileSwitchingOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stall  int64 // ns of stall left on CPU 1's switch of A at the barrier
		onCPU1 bool  // B runs on CPU 1, want
	}{
		{"switched", 0, true},
		{"still switching", 50_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, "spr-2s", "v6.6-eevdf")
			b := spawn(t, s, TaskSpec{Comm: "B", CPU: 1, Prog: Loop(Block(), Run(20_000))})
			a := mustTask(t, s, TaskSpec{Comm: "A", CPU: 1, Prog: Loop(Run(10_000), Block())})
			mustTask(t, s, TaskSpec{Comm: "waker", CPU: 2, Prog: Loop(Run(30_000), Wake(b).WithSync(), Run(100_000))})
			s.Run(20_000) // A has blocked; CPU 1 is idle in its own clock
			p := idleAfterSwitchingOut(t, s, 1, a)
			if tc.stall > 0 {
				// What a barrier does when the weave reports it:
				// charge the debt, then publish CPU 1.
				p.addDebt(SymUpdateCfsGroup, tc.stall)
				s.onCPU[1] = p.onCPUView()
				s.publishCPU(1)
			}
			s.Run(40_000) // B woken at ~30 us, running
			if b.Stats.NrWakeups != 1 {
				t.Fatalf("B woken %d times, want 1", b.Stats.NrWakeups)
			}
			if got := b.cpu == 1; got != tc.onCPU1 {
				t.Errorf("B on CPU %d after its wakeup; want CPU 1: %v", b.cpu, tc.onCPU1)
			}
		})
	}
}

// idleAfterSwitchingOut returns CPU cpu's runqueue, failing the test
// unless the CPU is idle, its last switch (of task p) done.
func idleAfterSwitchingOut(t *testing.T, s *Sim, cpu int, p *Task) *RQ {
	t.Helper()
	rq := s.RQ(cpu)
	if rq.curr != nil || rq.switchedOut != p {
		t.Fatalf("CPU %d: curr %v, switched out %v; want idle after switching out %v", cpu, rq.curr, rq.switchedOut, p)
	}
	return rq
}

// TestOnCPUAfterRunningAhead: a CPU whose clock ran past the barrier (the
// kernel work of its last event overran the epoch) has logged the
// accesses of its switch-out after the barrier, so the weave is behind on
// it, but none of them waits at a line: it is not stalled, only ahead.
// finish_task_switch() (core.c, v5.15 and v6.6: finish_task() ->
// smp_store_release(&prev->on_cpu, 0)) clears the sleeper's on_cpu at the
// end of its switch, on that CPU's own clock, and idle_cpu() holds from
// there. A ping-pong across two CPUs of one LLC (perf bench sched pipe's
// shape) wakes each task microseconds after its CPU went idle: not one of
// those wakeups may find it still on_cpu (WF_ON_CPU onto its wake list);
// under v5.15 they are direct (ttwu_queue_cond() inside the LLC), under
// v6.6 onto the idle CPU's wake list (TTWU_QUEUE_IDLE). Before, such a CPU
// was published as switching out until the weave caught up (math.MaxInt64)
// and every wakeup of the pipe took the WF_ON_CPU path.
func TestOnCPUAfterRunningAhead(t *testing.T) {
	for _, tc := range []struct {
		feat             string
		direct, wakelist bool
	}{
		{"v5.15-cfs", true, false},
		{"v6.6-eevdf", false, true},
	} {
		s := newSim(t, "xeon-e5-2x10", tc.feat)
		a, b := NewSem("a", 0), NewSem("b", 0)
		// write() and read() of a pipe and nothing else: the syscalls'
		// kernel work makes the events overrun the 1.25 us epochs. (On
		// 0f7457c, 1108 of 1247 wakeups under v5.15 took WF_ON_CPU.)
		write := func(s *Sem) Action { return Signal(s).With(hwmodel.OpSyscall, hwmodel.OpPipeWrite) }
		read := func(s *Sem) Action { return Wait(s).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpPipeRead) }
		spawn(t, s, TaskSpec{Comm: "ping", CPU: 7, Sems: []*Sem{a}, Prog: Loop(write(b), read(a))})
		spawn(t, s, TaskSpec{Comm: "pong", CPU: 8, Sems: []*Sem{b}, Prog: Loop(read(b), write(a))})
		// Counted from 50 us on: the first wakeup comes tens of ns after
		// the other task's first switch-out, with that CPU's stall
		// still unpaid, and truly finds it on_cpu.
		s.Run(50_000)
		for _, c := range []int{7, 8} {
			s.RQ(c).Stats = RQStats{}
		}
		s.Run(5 * ms)
		var st RQStats
		for _, c := range []int{7, 8} {
			r := s.RQ(c).Stats
			st.TTWUCount += r.TTWUCount
			st.OnCPUWakeups += r.OnCPUWakeups
			st.DirectWakeups += r.DirectWakeups
			st.WakelistWakeups += r.WakelistWakeups
			st.RacedWakeups += r.RacedWakeups
			st.RacedRunnable += r.RacedRunnable
		}
		if st.TTWUCount < 200 {
			t.Fatalf("%s: the ping-pong made %d wakeups", tc.feat, st.TTWUCount)
		}
		t.Logf("%s: %d wakeups: %d on_cpu, %d direct, %d wake list", tc.feat, st.TTWUCount, st.OnCPUWakeups, st.DirectWakeups, st.WakelistWakeups)
		// A signal that raced the sleep in one epoch (ttwuRaced) may
		// truly find the sleeper still switching out: only those may.
		t.Logf("%s: %d raced the sleep", tc.feat, st.RacedWakeups)
		if st.OnCPUWakeups > st.RacedWakeups {
			t.Errorf("%s: %d of %d wakeups found the sleeper still on_cpu (%d raced its sleep), microseconds after its CPU went idle", tc.feat, st.OnCPUWakeups, st.TTWUCount, st.RacedWakeups)
		}
		// ttwu_runnable() (a signal between the check and the dequeue:
		// hold.go) takes neither path.
		if tc.direct && st.DirectWakeups+st.RacedWakeups+st.RacedRunnable < st.TTWUCount || tc.wakelist && st.WakelistWakeups+st.RacedRunnable != st.TTWUCount {
			t.Errorf("%s: %d wakeups, %d direct, %d through the wake list; want all %s", tc.feat, st.TTWUCount, st.DirectWakeups, st.WakelistWakeups,
				map[bool]string{true: "direct", false: "through the wake list"}[tc.direct])
		}
	}
}
