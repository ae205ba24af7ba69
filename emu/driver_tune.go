package emu

import "time"

// shareTuner decides, round by round, whether the parallel driver hands a
// round's CPUs to its workers or steps them on the engine's goroutine
// alone. Stepping CPUs on another host core is not free: the barrier then
// reads their state and logs from that core's cache. On the 2-core VM,
// quiet, the default emu run took 1.4 s serial and 2.0 s with two
// workers stepping. So when the number of workers is left to the driver
// (Config.Workers 0, not pinned), it measures: a probe of probeRounds
// rounds on the engine alone, as many shared, as many alone again, each
// timed per CPU stepped from round to round (so the barriers between
// count); the faster way (sharing by shareGain over both) runs for
// keepRounds rounds before the next probe, twice as long after each probe
// that confirms it (up to 16 times). The Sim keeps it from run to run. Which goroutine steps a CPU
// never moves the bytes (TestDriversAgree).
type shareTuner struct {
	on       bool // adapt; otherwise every round is shared
	share    bool // the phase's rounds are shared
	phase    int  // tuneAlone, tuneShared, tuneAlone2 (the probe) or tuneKeep
	rounds   int  // rounds left in the phase
	steps    int  // CPUs stepped in the phase so far
	start    time.Time
	sharedNS float64 // host ns per CPU stepped of the last shared probe
	aloneNS  float64 // and of the window alone before it
	probes   int     // probes made
	share2   bool    // the last probe's choice
	streak   int     // probes in a row that chose it
	now      func() time.Time
}

const (
	tuneAlone = iota
	tuneShared
	tuneAlone2
	tuneKeep
)

const (
	probeRounds = 32
	keepRounds  = 2048
	// shareGain is how much cheaper per CPU the shared probe must be to
	// share: sharing also costs the host a second core, and a wrong
	// choice lasts until the next probe.
	shareGain = 0.9
)

// next reports whether to share a round of n CPUs.
func (t *shareTuner) next(n int) bool {
	if !t.on {
		return true
	}
	if t.rounds == 0 {
		now := t.now()
		perCPU := float64(now.Sub(t.start)) / float64(max(t.steps, 1))
		switch t.phase {
		case tuneAlone:
			t.aloneNS = perCPU
			t.phase, t.share, t.rounds = tuneShared, true, probeRounds
		case tuneShared:
			t.sharedNS = perCPU
			t.phase, t.share, t.rounds = tuneAlone2, false, probeRounds
		case tuneAlone2:
			// Both windows alone must lose: a window the host took
			// the engine's core from looks slow, and a wrong share
			// costs the most.
			share := t.sharedNS < shareGain*min(t.aloneNS, perCPU)
			if t.probes > 0 && share == t.share2 {
				t.streak = min(t.streak+1, 4)
			} else {
				t.streak = 0
			}
			t.share, t.share2 = share, share
			t.probes++
			t.phase, t.rounds = tuneKeep, keepRounds<<t.streak
		default: // the first round, or the kept phase ended: probe
			t.phase, t.share, t.rounds = tuneAlone, false, probeRounds
		}
		t.start, t.steps = now, 0
	}
	t.rounds--
	t.steps += n
	return t.share
}
