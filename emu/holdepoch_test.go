package emu

import "testing"

// pipePairRoundTrip runs perf bench sched pipe's two tasks on
// xeon-e5-2x10 CPUs 7 and 8 (feat, epoch length epoch: 0 is the
// lookahead) for trips round trips and returns the time of one, in ns.
func pipePairRoundTrip(t *testing.T, feat string, epoch int64, trips int) float64 {
	t.Helper()
	s, err := New(Config{Machine: machine(t, "xeon-e5-2x10"), Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial", Epoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	var done [2]int64
	pipePair(t, s, trips, &done)
	s.Run(int64(trips) * 50_000)
	if done[0] == 0 || done[1] == 0 {
		t.Fatalf("%s epoch %d: the pipe pair did not finish %d round trips", feat, epoch, trips)
	}
	return float64(max(done[0], done[1])) / float64(trips)
}

// TestHeldSignalEpochIndependent: a held signal (hold.go) whose barrier
// settled it goes on in the next epoch even when its CPU logged accesses
// past that barrier, as a CPU that only ran ahead of the barrier does:
// before, nextStep() held such a CPU for the whole next epoch, and its
// try_to_wake_up(), logged before the replay's clock, was served at that
// epoch's start. On perf bench sched pipe with UCLAMP (the uclamp-pipe
// study's row) each half round trip took three 1250 ns epochs exactly,
// phase-locked: 7.50 us per round trip at the lookahead, 7.20 us at
// 1000 ns epochs. The epoch is the engine's, not the kernel's: the round
// trip must not depend on it.
func TestHeldSignalEpochIndependent(t *testing.T) {
	for _, feat := range []string{"v5.15-cfs", "v5.15-cfs,+UCLAMP"} {
		lo, hi := 0.0, 0.0
		for _, ep := range []int64{0, 900, 1000, 1100, 1200} {
			rt := pipePairRoundTrip(t, feat, ep, 2000)
			t.Logf("%s epoch %d ns: %.1f ns per round trip", feat, ep, rt)
			if lo == 0 || rt < lo {
				lo = rt
			}
			hi = max(hi, rt)
		}
		if hi > lo*1.015 {
			t.Errorf("%s: the round trip ranges %.1f..%.1f ns over the epoch lengths (%.1f%%); want within 1.5%%", feat, lo, hi, 100*(hi/lo-1))
		}
	}
}
