package emu

import "testing"

// TestTTWUQueueCondIdleTarget: a wakeup inside the LLC onto an idle CPU.
// v5.15 (core.c: ttwu_queue_cond() of v5.10-v5.19) queues on the wake
// list inside the LLC only "if ((wake_flags & WF_ON_CPU) &&
// cpu_rq(cpu)->nr_running <= 1)", so the waker enqueues under the idle
// target's rq lock; v6.0 (f3dd3f674555, TTWU_QUEUE_IDLE) offloads the
// activation to any idle target: "if (!cpu_rq(cpu)->nr_running) return
// true".
func TestTTWUQueueCondIdleTarget(t *testing.T) {
	for _, tc := range []struct {
		feat             string
		wakelist, direct int64
	}{
		{"v5.15-cfs", 0, 1},
		{"v6.6-eevdf", 1, 0},
		{"v6.6-eevdf,-TTWU_QUEUE_IDLE", 0, 1},
		{"v5.15-cfs,+TTWU_QUEUE_IDLE", 1, 0},
	} {
		s := newSim(t, "hikey-8", tc.feat)
		w := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 6, Prog: Loop(Block(), Run(50_000))})
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: 7, Prog: Loop(Run(2*ms), Wake(w), Block())})
		s.Run(5 * ms)
		st := s.RQ(7).Stats
		if w.Stats.NrWakeups != 1 || st.WakelistWakeups != tc.wakelist || st.DirectWakeups != tc.direct {
			t.Errorf("%s: CPU 7 -> idle CPU 6: %d wakeups, wakelist %d, direct %d; want 1, %d, %d",
				tc.feat, w.Stats.NrWakeups, st.WakelistWakeups, st.DirectWakeups, tc.wakelist, tc.direct)
		}
	}
}
