package main

import "testing"

// TestCalibrateFlags: calibrate's and reproduce's repeat and refusal flags name themselves and
// their allowed values, before any probe runs.
func TestCalibrateFlags(t *testing.T) {
	checkCases(t, []h2case{
		{"calibrate -repeats 0", []string{"calibrate", "-repeats", "0"}, 2, "-repeats: must be from 1 to 100, got 0"},
		{"calibrate -repeats 101", []string{"calibrate", "-repeats", "101"}, 2, "-repeats: must be from 1 to 100, got 101"},
		{"calibrate -max-spread 0", []string{"calibrate", "-max-spread", "0"}, 2, "-max-spread: must be a number above 0"},
		{"calibrate -max-spread NaN", []string{"calibrate", "-max-spread", "NaN"}, 2, "-max-spread: must be a number above 0"},
		{"calibrate -settle -1s", []string{"calibrate", "-settle", "-1s"}, 2, "-settle: must be from 0 to 1h"},
		{"reproduce -max-spread -1", []string{"reproduce", "-max-spread", "-1", "host-pipe"}, 2, "-max-spread: must be a number above 0"},
	})
}
