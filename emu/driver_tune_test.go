package emu

import (
	"testing"
	"time"
)

// TestShareTuner: the tuner probes sharing, then the engine alone, and
// keeps the way whose rounds cost less host time per CPU (barriers
// included; sharing must win by shareGain), probing again later, for longer after each confirmation;
// off, it shares every round.
func TestShareTuner(t *testing.T) {
	for _, tc := range []struct {
		name              string
		sharedNS, aloneNS int64 // host ns per CPU stepped, per way
		want              bool
	}{
		{"sharing costs more (the 2-core VM)", 300, 200, false},
		{"sharing pays (more cores)", 120, 200, true},
		{"sharing pays less than shareGain", 190, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clock time.Time
			tu := shareTuner{on: true, phase: tuneKeep, now: func() time.Time { return clock }}
			var shared, alone int
			var keeps []int // the kept phases' lengths
			for range probeRounds*6 + keepRounds*4 {
				share := tu.next(10)
				if share {
					shared++
					clock = clock.Add(time.Duration(10 * tc.sharedNS))
				} else {
					alone++
					clock = clock.Add(time.Duration(10 * tc.aloneNS))
				}
				if tu.phase != tuneKeep {
					continue
				}
				if share != tc.want {
					t.Fatalf("kept phase %d: shared %v, want %v", len(keeps), share, tc.want)
				}
				if tu.rounds == keepRounds<<tu.streak-1 {
					keeps = append(keeps, 0)
				}
				keeps[len(keeps)-1]++
			}
			if shared < 2*probeRounds || alone < 2*probeRounds {
				t.Errorf("probes: %d rounds shared, %d alone, want >= %d each", shared, alone, 2*probeRounds)
			}
			// Each probe that confirms the last keeps twice as long.
			if len(keeps) < 2 || keeps[0] != keepRounds || keeps[1] != 2*keepRounds {
				t.Errorf("kept phases %v, want %d then %d", keeps, keepRounds, 2*keepRounds)
			}
		})
	}
	off := shareTuner{now: func() time.Time { panic("an untuned driver reads no clock") }}
	for range 3 * keepRounds {
		if !off.next(4) {
			t.Fatal("an untuned driver stepped a round alone")
		}
	}
}
