//go:build race

package emu

// raceEnabled: under the race detector the engine runs ~20x slower, so the
// long multi-CPU tests run scaled-down workloads.
const raceEnabled = true
