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
