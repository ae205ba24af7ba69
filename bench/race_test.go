//go:build race

package bench

// raceEnabled: under the race detector the engine runs ~20x slower, so the
// tests over many seeds run one.
const raceEnabled = true
