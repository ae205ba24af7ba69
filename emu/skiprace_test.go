package emu

import "testing"

// skipUnderRace skips, under the race detector, a scenario that runs on one
// goroutine (one CPU, or the serial driver): it has nothing for the detector
// to find and runs ~20x slower under it. scripts/test's no-race pass runs it
// (cmd/emu's TestNoRacePass holds that list to the tests that call this).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("a one-goroutine scenario: scripts/test runs it without -race")
	}
}
