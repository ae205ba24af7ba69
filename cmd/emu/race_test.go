//go:build race

package main

// raceEnabled: under the race detector emu runs ~20x slower, so the
// time bounds of the hardening tests are scaled.
const raceEnabled = true
