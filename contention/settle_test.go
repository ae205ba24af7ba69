package contention

import (
	"testing"
	"time"
)

// TestSettle: settle samples until the others' load falls under the
// limit, gives up at the bound, and does not wait where the load cannot
// be read.
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		loads   []float64
		max     time.Duration
		samples int
		last    float64
	}{
		{"quiet at once", []float64{0.02}, 5 * time.Second, 1, 0.02},
		{"settles on the third", []float64{0.9, 0.4, 0.05, 0.01}, 5 * time.Second, 3, 0.05},
		{"at the limit is not quiet", []float64{0.10, 0.099}, 5 * time.Second, 2, 0.099},
		{"never quiet: the bound", []float64{0.8, 0.8, 0.8, 0.8, 0.8, 0.8}, time.Second, 4, 0.8},
		{"unreadable", []float64{-1, 0.0}, 5 * time.Second, 1, -1},
	} {
		n := 0
		waited, last := settle(tc.max, 0.10, func() float64 { n++; return tc.loads[n-1] })
		if n != tc.samples || last != tc.last || waited != time.Duration(n)*SettleSample {
			t.Errorf("%s: %d samples (want %d), last load %v (want %v), waited %v", tc.name, n, tc.samples, last, tc.last, waited)
		}
	}
}
