package emu

import "testing"

// wakeOnce: on topo, a waker on CPU from wakes n sleeping tasks pinned to
// CPU to (which runs a hog, so it is busy and not polling), one after the
// other within a few µs, then the test reports the waker's counters.
func wakeOnce(t *testing.T, topo, feat string, from, to, n int) RQStats {
	t.Helper()
	s := newSim(t, topo, feat)
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: to, Prog: Hog()})
	var wakees []*Task
	for i := 0; i < n; i++ {
		wakees = append(wakees, mustTask(t, s, TaskSpec{Comm: "wakee", CPU: to, Prog: Loop(Block(), Run(50_000))}))
	}
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
// list was empty).
func TestIPIBatching(t *testing.T) {
	for _, n := range []int{1, 4, 8} {
		st := wakeOnce(t, "spr-2s", "v6.6-eevdf", 0, 56, n)
		if st.WakelistWakeups != int64(n) || st.IPIsSent != 1 || st.IPIsReceived != 1 {
			t.Errorf("%d wakeups: %d through the wake list, %d IPIs sent, %d received; want %d, 1, 1",
				n, st.WakelistWakeups, st.IPIsSent, st.IPIsReceived, n)
		}
	}
}

// rqLockScenario: on epyc-9654-2s, n wakers on CPUs 1..n (other cores of
// CPU 0's CCX, so each outside CPU 0's L2 and inside its LLC) wake one
// task each, pinned to CPU 0, every 20 µs; CPU 0 runs a hog, so it is
// busy and ttwu_queue_cond()'s idle-target offload never applies. It
// returns what the target's rq lock saw over 20 ms.
type rqLockOutcome struct {
	wakeups, direct, wakelist, remoteLock int64
	lockWaits                             int64   // Lock requests on CPU 0's lock line that found it held
	ttwuStallNS                           float64 // weave stall at try_to_wake_up (the wakers': CPU 0 wakes nobody)
	avgTransfers                          int64   // transfers of CPU 0's rq->cfs.avg line
	targetTTWUNS                          int64   // CPU 0's own time in try_to_wake_up
}

func rqLockScenario(t *testing.T, feat string, n int) rqLockOutcome {
	t.Helper()
	s := newSim(t, "epyc-9654-2s", feat)
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
	var wakees []*Task
	for i := 1; i <= n; i++ {
		if s.cpusShareL2(0, i) || !s.cpusShareCache(0, i) {
			t.Fatalf("CPU %d: want another L2 of CPU 0's LLC", i)
		}
		w := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 0, Prog: Loop(Block(), Run(1000))})
		wakees = append(wakees, w)
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: i, Prog: Loop(Sleep(20_000), Wake(w))})
	}
	s.Run(20 * ms)
	var o rqLockOutcome
	for _, w := range wakees {
		o.wakeups += w.Stats.NrWakeups
	}
	for i := 1; i <= n; i++ {
		st := s.RQ(i).Stats
		o.direct += st.DirectWakeups
		o.wakelist += st.WakelistWakeups
		o.remoteLock += st.RemoteLockAcq
	}
	sst := s.space.Stats()
	tgt := s.RQ(0)
	o.lockWaits = sst.Lines[tgt.lock.Line()].LockWaits
	o.ttwuStallNS = sst.Sites[s.sites[SymTryToWakeUp]].StallNS
	o.avgTransfers = sst.Lines[tgt.avgLine].TotalTransfers()
	o.targetTTWUNS = tgt.profile[SymTryToWakeUp]
	return o
}

// TestRQLockDirectVsWakelist: the direct remote wakeup (core.c v6.6:
// ttwu_queue() -> rq_lock(), update_rq_clock(), ttwu_do_activate() ->
// activate_task() -> enqueue_task_fair()'s update_load_avg(),
// add_nr_running(), wakeup_preempt()) holds the target's rq lock for the
// enqueue and its stores to the target's lines, so wakers from n other
// L2s of one CCX queue on it: the lock wait per wakeup grows with n. The
// target itself takes no lock and does no ttwu work for a wakeup done
// to it. TTWU_QUEUE_L2 (Mathieu Desnoyers' RFC: ttwu_queue_cond() tests
// cpus_share_resources(), the L2) queues each of those wakeups on the
// target's wake list (__ttwu_queue_wakelist()): no waker takes the lock,
// whatever n. The lock requests CPU 0's lock still sees with the wake
// list are the newly idle wakers' load_balance() (sched_balance_rq(), v6.6:
// rq_lock_irqsave(busiest) around detach_tasks(), which finds both tasks
// pinned), taken on the waker's CPU as the kernel does: not one per
// wakeup.
func TestRQLockDirectVsWakelist(t *testing.T) {
	perWake := map[int]float64{}
	for _, n := range []int{1, 4, 7} {
		o := rqLockScenario(t, "v6.6-eevdf", n)
		t.Logf("direct, %d wakers: %+v", n, o)
		// A few signals find the wakee not yet asleep and wake it at
		// the barrier (applySignal): still a direct enqueue, with no
		// waker holding the lock.
		if o.direct == 0 || o.direct < o.wakeups*99/100 || o.wakelist != 0 {
			t.Fatalf("direct, %d wakers: %d wakeups, %d direct, %d via the wake list; want all direct", n, o.wakeups, o.direct, o.wakelist)
		}
		perWake[n] = o.ttwuStallNS / float64(o.direct)
		// The waker writes the target's rq->cfs.avg under the lock
		// (and the target takes the line back): a transfer each way.
		if o.avgTransfers < o.direct {
			t.Errorf("direct, %d wakers: rq->cfs.avg moved %d times for %d direct wakeups; the waker's enqueue writes it", n, o.avgTransfers, o.direct)
		}
		// CPU 0's only try_to_wake_up time is wake_up_new_task() of
		// the n+1 tasks forked there (its uncontended rq lock, tens of
		// ns each): it takes no lock for the wakers' wakeups.
		if limit := int64(n+1) * 100; o.targetTTWUNS > limit {
			t.Errorf("direct, %d wakers: the target spent %d ns in try_to_wake_up, want at most %d (its forks): the waker does the wakeup", n, o.targetTTWUNS, limit)
		}
		// One waker does not queue behind another; what it can meet
		// is CPU 0's own schedule() against its newidle balance: it
		// goes idle right after its wakeup, sees CPU 0 with two tasks
		// (its own enqueue: add_nr_running() set rd->overload) and
		// load_balance() takes CPU 0's lock to detach_tasks(), which
		// finds both pinned (LBF_ALL_PINNED). So some requests wait,
		// far fewer than one per wakeup (a target that took its own
		// lock for the wakeups waited on every one).
		if n == 1 && o.lockWaits > o.direct/4 {
			t.Errorf("direct, 1 waker: %d of %d lock requests found CPU 0's rq lock held; one waker meets only the owner's schedule() during its newidle balance's pull", o.lockWaits, o.direct)
		}
		if n == 7 && float64(o.lockWaits) < 0.5*float64(o.direct) {
			t.Errorf("direct, 7 wakers: %d of %d lock requests waited, want most", o.lockWaits, o.direct)
		}
	}
	if perWake[7] < 3*perWake[1] || perWake[4] <= perWake[1] {
		t.Errorf("direct: try_to_wake_up stall per wakeup %.1f / %.1f / %.1f ns with 1 / 4 / 7 wakers; want it to grow with the wakers queued on the lock",
			perWake[1], perWake[4], perWake[7])
	}
	for _, n := range []int{1, 4, 7} {
		o := rqLockScenario(t, "v6.6-eevdf,+TTWU_QUEUE_L2", n)
		t.Logf("wake list, %d wakers: %+v", n, o)
		// (The barrier's applySignal wakeups are not counted on a waker.)
		if o.wakelist < o.wakeups*99/100 || o.direct != 0 || o.remoteLock != 0 {
			t.Errorf("TTWU_QUEUE_L2, %d wakers: %d wakeups, %d via the wake list, %d direct, %d remote locks; want all queued", n, o.wakeups, o.wakelist, o.direct, o.remoteLock)
		}
		// The waits left are the balancers' (see above): far fewer
		// than one per wakeup, and the wakers' try_to_wake_up() stall
		// a small fraction of the direct path's.
		if o.lockWaits > o.wakeups/2 {
			t.Errorf("TTWU_QUEUE_L2, %d wakers: %d lock requests waited on CPU 0's rq lock for %d wakeups; want well under one per wakeup", n, o.lockWaits, o.wakeups)
		}
		if q := o.ttwuStallNS / float64(o.wakelist); q > perWake[n]/4 {
			t.Errorf("TTWU_QUEUE_L2, %d wakers: try_to_wake_up stall %.1f ns per wakeup against %.1f on the direct path; want under a quarter", n, q, perWake[n])
		}
	}
	// With more than one waker, some CPU other than CPU 0 takes its
	// lock: the newly idle wakers' load_balance() on their own CPUs.
	if o := rqLockScenario(t, "v6.6-eevdf,+TTWU_QUEUE_L2", 7); o.lockWaits == 0 {
		t.Errorf("TTWU_QUEUE_L2, 7 wakers: no lock request ever waited on CPU 0's rq lock; the wakers' newidle load_balance() takes it to detach_tasks()")
	}
}
