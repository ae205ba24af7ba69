package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestUclampDirectWakeupByWaker: a direct remote wakeup's uclamp_rq_inc()
// is the waker's work, under the target's rq lock (core.c, v5.15 and
// v6.6: ttwu_queue() -> ttwu_do_activate() -> activate_task() ->
// enqueue_task(), which calls uclamp_rq_inc() before the class's enqueue).
// The waker pays OpUclamp for it, and its stores take the target's two
// rq->uclamp lines into its cache; the target's next dequeue
// (uclamp_rq_dec()) takes them back: one transfer each way per line. The
// mechanism of the uclamp-pipe study on the pre-v6.0 wakeup path, where a
// same-LLC wakeup onto an idle CPU is direct (TestTTWUQueueCondIdleTarget):
// kernel-mechanisms.md 5, "remote coherence traffic only when the enqueue
// is done by another CPU".
func TestUclampDirectWakeupByWaker(t *testing.T) {
	s := newSim(t, "hikey-8", "v5.15-cfs,+UCLAMP")
	w := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 6, Prog: Loop(Block(), Run(50_000))})
	mustTask(t, s, TaskSpec{Comm: "waker", CPU: 7, Prog: Loop(Run(2*ms), Wake(w), Block())})
	s.Run(5 * ms)
	s.barrier(nil)
	waker, target := s.RQ(7), s.RQ(6)
	if w.Stats.NrWakeups != 1 || waker.Stats.DirectWakeups != 1 {
		t.Fatalf("want one direct wakeup of CPU 6 by CPU 7: %d wakeups, %d direct", w.Stats.NrWakeups, waker.Stats.DirectWakeups)
	}
	// Each CPU's own task was enqueued once at its start on its own CPU
	// (the same cost and the same two fills on either CPU); the wakeup's
	// increment, its cost and the stall of taking the target's lines, is
	// the waker's on top. (Had the target paid, the difference would be
	// -cost.)
	cost := s.Machine().Cost(hwmodel.OpUclamp)
	if d := waker.profile[SymUclampRQInc] - target.profile[SymUclampRQInc]; d < cost {
		t.Errorf("uclamp_rq_inc: waker %d ns, target %d ns: the waker should have paid the wakeup's %d ns (and its stall) on top of its own start (difference %d)",
			waker.profile[SymUclampRQInc], target.profile[SymUclampRQInc], cost, d)
	}
	st := s.Space().Stats()
	for i, l := range target.uclamp.Lines() {
		ls := st.Lines[l]
		if n := ls.TotalTransfers(); n != 2 {
			t.Errorf("target's rq->uclamp line %c: %d transfers (%d accesses), want 2: to the waker at its uclamp_rq_inc(), back at the wakee's dequeue",
				'A'+i, n, ls.Accesses)
		}
	}
}

// TestUclampLinesAgeByCopies: a task alone on CPU 0 of xeon-e5-2x10
// (32 KiB L1d) that copies 16 KiB (32 KiB through the L1d: emu's
// Action.Touching) before each sleep finds its rq->uclamp lines aged
// into the L2 at the sleep's uclamp_rq_dec(): the two lines cost an L2
// hit each (weave's capacity model), where without the copy they are L1
// hits. The wakeup's uclamp_rq_inc() follows the dequeue with nothing
// moved between: free either way.
func TestUclampLinesAgeByCopies(t *testing.T) {
	run := func(bytes int64) (dec, inc int64, n int64) {
		s := newSim(t, "xeon-e5-2x10", "v5.15-cfs,+UCLAMP")
		mustTask(t, s, TaskSpec{Comm: "copier", CPU: 0, Prog: Loop(Run(10_000).Touching(bytes), Sleep(50_000))})
		s.Run(2 * ms)
		s.barrier(nil)
		rq := s.RQ(0)
		return rq.profile[SymUclampRQDec], rq.profile[SymUclampRQInc], rq.Stats.Dequeues
	}
	dec0, inc0, n0 := run(0)
	dec1, inc1, n1 := run(32 << 10)
	if n0 != n1 || n0 < 20 {
		t.Fatalf("dequeues %d and %d: want the same schedule, at least 20", n0, n1)
	}
	m := newSim(t, "xeon-e5-2x10", "v5.15-cfs").Machine()
	want := float64(n1) * 2 * m.Lat.L2Hit
	// The barrier hands a weave's whole ns out over its sites, the last
	// taking the other sites' fractions (the rq lock's line ages too):
	// up to 2 ns a dequeue more.
	if d := float64(dec1 - dec0); d < want-float64(n1) || d > want+2*float64(n1) {
		t.Errorf("uclamp_rq_dec: %d ns with the copies, %d without: +%v ns over %d dequeues, want 2 L2 hits each, %.0f (-1..+2 ns each)", dec1, dec0, d, n1, want)
	}
	if inc1 != inc0 {
		t.Errorf("uclamp_rq_inc: %d ns with the copies, %d without: want equal (nothing moved since the dequeue)", inc1, inc0)
	}
}
