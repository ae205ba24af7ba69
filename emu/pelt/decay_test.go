package pelt

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDecayLoad(t *testing.T) {
	for _, c := range []struct{ val, n, want uint64 }{
		{0, 5, 0},
		{1024, 0, 1023},          // y^0 is (2^32−1)/2^32, not 1
		{1 << 32, 0, 1<<32 - 1},  // likewise
		{1024, 1, 1002},          // 1024·y = 1002.06
		{47742, 1, 46718},        // LOAD_AVG_MAX·y = LOAD_AVG_MAX − 1024
		{1 << 20, 32, 1<<19 - 1}, // one half-life
		{1 << 20, 64, 1<<18 - 1}, // two
		{math.MaxUint64, 2016, 0},
		{math.MaxUint64, 2017, 0},
		{math.MaxUint64, 1 << 40, 0},
	} {
		if got := DecayLoad(c.val, c.n); got != c.want {
			t.Errorf("DecayLoad(%d, %d) = %d, want %d", c.val, c.n, got, c.want)
		}
	}
}

// TestDecayLoadMatchesFloat checks DecayLoad(v, n) against v·y^n in float:
// the shift can lose one unit before the multiply, the table entry is
// truncated (relative error < 2^-30) and the result is floored.
func TestDecayLoadMatchesFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := r.Uint64N(1 << 50)
		n := r.Uint64N(maxDecayPeriods + 1)
		want := float64(v) * math.Pow(y, float64(n))
		got := float64(DecayLoad(v, n))
		if d := want - got; d < -1e-6 || d > 2+want*0x1p-30 {
			t.Fatalf("DecayLoad(%d, %d) = %.0f, float %.3f", v, n, got, want)
		}
	}
}

// TestDecayLoadPastHorizon: beyond LOAD_AVG_PERIOD·63 periods everything is
// gone, whatever the value.
func TestDecayLoadPastHorizon(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := r.Uint64()
		n := maxDecayPeriods + 1 + r.Uint64N(1<<32)
		if got := DecayLoad(v, n); got != 0 {
			t.Fatalf("DecayLoad(%d, %d) = %d, want 0", v, n, got)
		}
	}
}

// TestAccumulatePeltSegments compares the three-segment contribution with
// the series it stands for, d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3. The
// middle term comes from the integer LOAD_AVG_MAX, which is 0.097% below
// the real limit, so long spans read up to that much low.
func TestAccumulatePeltSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		p := 1 + r.Uint64N(3000)
		d1 := 1 + uint32(r.Uint64N(1024))
		d3 := uint32(r.Uint64N(1024))
		// 1024·Σ_{n=1}^{p-1} y^n = 1024·(y − y^p)/(1 − y)
		mid := periodUnits * (y - math.Pow(y, float64(p))) / (1 - y)
		want := float64(d1)*math.Pow(y, float64(p)) + mid + float64(d3)
		got := float64(accumulatePeltSegments(p, d1, d3))
		if math.Abs(got-want) > 0.001*want+2 {
			t.Fatalf("segments(p=%d, d1=%d, d3=%d) = %.0f, series %.2f", p, d1, d3, got, want)
		}
	}
	// One boundary: nothing from the middle, d1 decayed once.
	if got, want := accumulatePeltSegments(1, 1024, 0), uint32(DecayLoad(1024, 1)); got != want {
		t.Errorf("segments(1, 1024, 0) = %d, want %d", got, want)
	}
}
