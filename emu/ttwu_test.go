package emu

import "testing"

// wakeOnce: on topo, a waker on CPU from wakes n sleeping tasks pinned to
// CPU to (which runs a hog, so it is busy and not polling), one after the
// other within a few µs, then the test reports the waker's counters.
func wakeOnce(t *testing.T, topo, feat string, from, to, n int) RQStats {
	t.Helper()
	s := newSim(t, topo, feat)
	// The wakees first, so that each runs and sleeps before the hog
	// takes the CPU for its slice: created after it, they first ran when
	// its slice ended, about when the waker wakes them, and the wakeups
	// raced their sleeps.
	var wakees []*Task
	for i := 0; i < n; i++ {
		wakees = append(wakees, mustTask(t, s, TaskSpec{Comm: "wakee", CPU: to, Prog: Loop(Block(), Run(50_000))}))
	}
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: to, Prog: Hog()})
	var acts []Action
	acts = append(acts, Run(2*ms))
	for _, w := range wakees {
		acts = append(acts, Wake(w))
	}
	acts = append(acts, Block())
	mustTask(t, s, TaskSpec{Comm: "waker", CPU: from, Prog: Loop(acts...)})
	// 2 ms of compute takes longer on an SMT sibling of the busy target.
	s.Run(5 * ms)
	st := s.RQ(from).Stats
	for _, w := range wakees {
		if w.Stats.NrWakeups != 1 {
			t.Errorf("%s %d->%d: wakee %v woken %d times", topo, from, to, w, w.Stats.NrWakeups)
		}
	}
	st.IPIsReceived = s.RQ(to).Stats.IPIsReceived
	// Count wake-list IPIs only: NOHZ idle-balance kicks are IPIs too.
	st.IPIsSent -= st.ILBKicks
	return st
}

// TestWakeupPaths: ttwu_queue_cond() routes a remote wakeup through the
// target's wake list and an IPI across LLCs, takes the target's rq lock
// inside one, and TTWU_QUEUE_L2 sends everything outside the waker's L2
// through the wake list (kernel-mechanisms.md 6.2, 6.4).
func TestWakeupPaths(t *testing.T) {
	for _, tc := range []struct {
		topo, feat      string
		from, to        int
		wakelist, ipis  int64
		direct, remLock int64
	}{
		{"spr-2s", "v6.6-eevdf", 0, 56, 1, 1, 0, 0},                       // cross-socket = cross-LLC
		{"spr-2s", "v6.6-eevdf", 0, 1, 0, 0, 1, 1},                        // same LLC, busy target
		{"epyc-9654-2s", "v6.6-eevdf", 0, 8, 1, 1, 0, 0},                  // cross-CCX
		{"epyc-9654-2s", "v6.6-eevdf", 0, 1, 0, 0, 1, 1},                  // same CCX, other core
		{"epyc-9654-2s", "v6.6-eevdf,+TTWU_QUEUE_L2", 0, 1, 1, 1, 0, 0},   // outside the waker's L2
		{"epyc-9654-2s", "v6.6-eevdf,+TTWU_QUEUE_L2", 0, 192, 0, 0, 1, 1}, // SMT sibling shares the L2
		{"spr-2s", "v6.6-eevdf,-TTWU_QUEUE", 0, 56, 0, 0, 1, 1},           // no wake lists at all
	} {
		st := wakeOnce(t, tc.topo, tc.feat, tc.from, tc.to, 1)
		got := []int64{st.WakelistWakeups, st.IPIsSent, st.DirectWakeups, st.RemoteLockAcq}
		want := []int64{tc.wakelist, tc.ipis, tc.direct, tc.remLock}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s %s CPU %d -> %d: wakelist/IPIs/direct/remote-lock = %v, want %v",
					tc.topo, tc.feat, tc.from, tc.to, got, want)
				break
			}
		}
	}
}

// TestIPIBatching: wakeups queued on a busy CPU's wake list before it
// drains share one IPI (__smp_call_single_queue() sends one only when the
// list was empty); one queued after the drain's llist_del_all() opens a new
// batch. The waker's wakeups follow each other at its try_to_wake_up()
// cost, so four land within the IPI's delivery and share one; eight take
// longer than it, and the ones after the drain need a second.
func TestIPIBatching(t *testing.T) {
	for _, tc := range []struct{ n, ipis int64 }{{1, 1}, {4, 1}, {8, 2}} {
		st := wakeOnce(t, "spr-2s", "v6.6-eevdf", 0, 56, int(tc.n))
		if st.WakelistWakeups != tc.n || st.IPIsSent != tc.ipis {
			t.Errorf("%d wakeups: %d through the wake list, %d IPIs sent; want %d, %d",
				tc.n, st.WakelistWakeups, st.IPIsSent, tc.n, tc.ipis)
		}
	}
}

// TestWakelistAddAfterDrain: a wakeup whose llist_add() comes after the
// pending drain's llist_del_all() is not in that batch. In the kernel the
// drain (sched_ttwu_pending(), core.c v6.6) empties the list first, so
// the later llist_add() finds it empty and __smp_call_single_queue()
// (smp.c v6.6) sends a new IPI; the wakee is enqueued by that second
// drain, never before its own wakeup. Here two wakeups onto a busy
// remote CPU's wake list reach the barrier together, the second added
// two IPI latencies after the first: the first's drain runs one IPI
// latency after it, and the second needs its own IPI and drain. Before,
// the second joined the first batch and was enqueued at its drain, an
// IPI latency before its waker woke it.
func TestWakelistAddAfterDrain(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	// The wakees first, so that they have run and slept before the hog
	// takes the CPU (wakeOnce); each notes when it runs after its wakeup.
	ran := map[*Task]int64{}
	wakee := func(comm string) *Task {
		n := 0
		var p *Task
		p = mustTask(t, s, TaskSpec{Comm: comm, CPU: 56, Prog: ProgramFunc(func(tk *Task) Action {
			switch n++; n {
			case 1:
				return Block()
			case 2:
				ran[p] = tk.Now()
				return Run(50_000)
			}
			return Block()
		})})
		return p
	}
	a, b := wakee("a"), wakee("b")
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 56, Prog: Hog()})
	s.Run(ms)
	for _, p := range []*Task{a, b} {
		if p.state != TaskSleeping {
			t.Fatalf("%v is %v at %d ns; want asleep", p, p.state, s.Now())
		}
	}
	t1 := s.Now()
	t2 := t1 + 2*s.ipiDelay
	// The barrier claims both wakeups (claimWake: the wake-list path, as
	// a cross-LLC waker on CPU 0 posts them).
	for _, w := range []struct {
		p  *Task
		at int64
	}{{a, t1}, {b, t2}} {
		s.claimWake(&remoteOp{kind: opWake, t: w.at, from: 0, task: w.p, target: 56, flags: wfTTWU, wakelist: true, recent: -1, sem: w.p.sem})
	}
	ipis := s.RQ(0).Stats.IPIsSent
	s.Run(20 * ms)
	if ipis != 2 {
		t.Errorf("the waker sent %d IPIs at the claims; want 2 (one per batch)", ipis)
	}
	if got := s.RQ(56).Stats.IPIsReceived; got < 2 {
		t.Errorf("CPU 56 received %d IPIs; want 2", got)
	}
	for _, w := range []struct {
		p  *Task
		at int64
	}{{a, t1}, {b, t2}} {
		if w.p.Stats.NrWakeups != 1 {
			t.Errorf("%v woken %d times; want 1", w.p, w.p.Stats.NrWakeups)
		}
		// Enqueued by its batch's drain, an IPI latency after its
		// llist_add() at the earliest, so it runs no sooner.
		r, ok := ran[w.p]
		if !ok {
			t.Errorf("%v did not run after its wakeup", w.p)
		} else if r < w.at+s.ipiDelay {
			t.Errorf("%v ran at %d ns, before its llist_add() at %d ns plus the IPI's %d ns", w.p, r, w.at, s.ipiDelay)
		}
	}
}

// TestWakelistLateDrainKeepsCut: a wakeup the barrier delivers after the
// target drained, but added before that drain's llist_del_all(), belongs
// to that batch: the target drains it late, with no IPI. One added after
// the cut finds the list empty and sends an IPI (smp.c v6.6
// __smp_call_single_queue()), even while that late drain is pending:
// the late drain does not move the cut (before, it took the later wakeup
// too, and no IPI was sent for it).
func TestWakelistLateDrainKeepsCut(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	var ws []*Task
	for _, c := range []string{"a", "b", "c"} {
		ws = append(ws, mustTask(t, s, TaskSpec{Comm: c, CPU: 56, Prog: Loop(Block(), Run(50_000))}))
	}
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 56, Prog: Hog()})
	s.Run(ms)
	claim := func(p *Task, at int64) {
		t.Helper()
		if p.state != TaskSleeping {
			t.Fatalf("%v is %v at %d ns; want asleep", p, p.state, s.Now())
		}
		s.claimWake(&remoteOp{kind: opWake, t: at, from: 0, task: p, target: 56, flags: wfTTWU, wakelist: true, recent: -1, sem: p.sem})
	}
	claim(ws[0], s.Now())
	s.Run(s.Now() + 5*s.ipiDelay)
	cut := s.RQ(56).wlLastDrain
	if cut == 0 || s.RQ(56).wlDrainAt != 0 {
		t.Fatalf("CPU 56 has not drained a's batch by %d ns (last drain %d)", s.Now(), cut)
	}
	claim(ws[1], cut-1) // added before the cut: a's batch, drained late
	claim(ws[2], cut+1) // after it: a new batch and IPI
	s.Run(s.Now() + 20*ms)
	if got := s.RQ(0).Stats.IPIsSent; got != 2 {
		t.Errorf("the waker sent %d IPIs; want 2 (a's batch, c's batch; b's late drain needs none)", got)
	}
	for _, p := range ws {
		if p.Stats.NrWakeups != 1 {
			t.Errorf("%v woken %d times; want 1", p, p.Stats.NrWakeups)
		}
	}
}
