package eevdf

import (
	"math/big"
	"testing"
)

// TestTables: the weight table is NICE_0 = 1024 with ≈1.25× steps, and the
// wmult table is 2^32/weight rounded to nearest.
func TestTables(t *testing.T) {
	if PrioToWeight[-MinNice] != 1024 || NiceToWeight(0) != Nice0Load {
		t.Fatalf("nice 0 weight %d / %d", PrioToWeight[-MinNice], NiceToWeight(0))
	}
	for i, w := range PrioToWeight {
		if i > 0 {
			ratio := float64(PrioToWeight[i-1]) / float64(w)
			if ratio < 1.2 || ratio > 1.3 {
				t.Errorf("nice %d: step ratio %.3f", i+MinNice, ratio)
			}
		}
		// |wmult·w − 2^32| < w: 2^32/w, rounded (most) or truncated (a few).
		d := int64(PrioToWmult[i])*int64(w) - 1<<32
		if d >= int64(w) || -d >= int64(w) {
			t.Errorf("nice %d: wmult %d is not 2^32/%d", i+MinNice, PrioToWmult[i], w)
		}
	}
}

func TestScaleLoadDownAndSet(t *testing.T) {
	for _, tc := range []struct{ in, want uint64 }{
		{0, 0}, {1, 2}, {1023, 2}, {2047, 2}, {3072, 3}, {Nice0Load, 1024}, {NiceToWeight(-20), 88761},
	} {
		if got := ScaleLoadDown(tc.in); got != tc.want {
			t.Errorf("ScaleLoadDown(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	var lw LoadWeight
	lw.Set(Nice0Load)
	if lw.InvWeight != 0xffffffff/1024 {
		t.Errorf("Set(NICE_0_LOAD) inv %d, want WMULT_CONST/1024", lw.InvWeight)
	}
	lw.Set(0)
	if lw.InvWeight != 0xffffffff {
		t.Errorf("Set(0) inv %d, want WMULT_CONST", lw.InvWeight)
	}
	lw.Set(1 << 60)
	if lw.InvWeight != 1 {
		t.Errorf("Set(2^60) inv %d, want 1", lw.InvWeight)
	}
	lw.SetNice(19)
	if lw.Weight != 15<<10 || lw.InvWeight != 286331153 {
		t.Errorf("SetNice(19) = %+v", lw)
	}
}

// kernelCalcDelta replays __calc_delta() literally, one bit per loop
// iteration and with math/big for the final 64×32 multiply and shift.
func kernelCalcDelta(delta, weight uint64, lwWeight uint64, inv uint32) *big.Int {
	fact := ScaleLoadDown(weight)
	shift := 32
	for fact>>32 != 0 {
		fact >>= 1
		shift--
	}
	fact = uint64(uint32(fact)) * uint64(inv)
	for fact>>32 != 0 {
		fact >>= 1
		shift--
	}
	p := new(big.Int).Mul(new(big.Int).SetUint64(delta), new(big.Int).SetUint64(fact))
	p.Rsh(p, uint(shift))
	return p
}

// TestCalcDeltaOracle: CalcDelta equals the literal big.Int replay of
// __calc_delta() (truncated to 64 bits as the kernel's u64 return), and it
// approximates delta·w/lw.w from below within the precision of the
// inverse: exact − result ∈ [0, exact·((w_lw+1)/2^32 + 2^-30) + 1] for
// computed inverses.
func TestCalcDeltaOracle(t *testing.T) {
	r := newRand(t, 5)
	mask64 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	for i := range 200000 {
		delta := r.Uint64N(1 << (1 + r.IntN(50)))
		weight := randWeight(r)
		var lw LoadWeight
		table := r.IntN(3) == 0
		if table {
			lw.SetNice(MinNice + r.IntN(40))
		} else {
			lw.Set(ScaleLoad(2 + r.Uint64N(1<<(1+r.IntN(30)))))
		}
		if i%7 == 0 {
			weight = Nice0Load // the calc_delta_fair() case
		}
		got := CalcDelta(delta, weight, &lw)

		want := kernelCalcDelta(delta, weight, lw.Weight, lw.InvWeight)
		want.And(want, mask64)
		if want.Uint64() != got {
			t.Fatalf("CalcDelta(%d, %d, %+v) = %d, kernel replay %d", delta, weight, lw, got, want)
		}

		// Error bound against the exact quotient.
		sw, slw := ScaleLoadDown(weight), ScaleLoadDown(lw.Weight)
		exact := new(big.Rat).SetFrac(
			new(big.Int).Mul(new(big.Int).SetUint64(delta), new(big.Int).SetUint64(sw)),
			new(big.Int).SetUint64(slw))
		if exact.Cmp(new(big.Rat).SetUint64(1<<62)) > 0 {
			continue // the kernel result wraps; callers never get here
		}
		gotR := new(big.Rat).SetUint64(got)
		diff := new(big.Rat).Sub(exact, gotR) // ≥ 0 expected for computed inverses
		relBound := new(big.Rat).SetFrac64(int64(slw+1), 1<<32)
		relBound.Add(relBound, big.NewRat(1, 1<<30))
		bound := new(big.Rat).Mul(exact, relBound)
		bound.Add(bound, big.NewRat(1, 1))
		if !table && diff.Sign() < 0 {
			t.Fatalf("CalcDelta(%d, %d, %+v) = %d overshoots exact %s", delta, weight, lw, got, exact.FloatString(3))
		}
		abs := new(big.Rat).Abs(diff)
		if abs.Cmp(bound) > 0 {
			t.Fatalf("CalcDelta(%d, %d, %+v) = %d, exact %s: error %s > bound %s",
				delta, weight, lw, got, exact.FloatString(3), abs.FloatString(3), bound.FloatString(3))
		}
	}
}

// TestCalcDeltaTable pins a few values.
func TestCalcDeltaTable(t *testing.T) {
	nice := func(n int) *Entity {
		se := &Entity{}
		se.Load.SetNice(n)
		return se
	}
	for _, tc := range []struct {
		delta uint64
		se    *Entity
		want  uint64
	}{
		{3_000_000, nice(0), 3_000_000},         // identity for NICE_0_LOAD
		{1<<63 + 12345, nice(0), 1<<63 + 12345}, // even beyond 64-bit products
		{3_000_000, nice(19), 204_799_999},      // 3 ms·1024/15 = 204.8 M, truncated
		{3_000_000, nice(-20), 34_609},          // 3 ms·1024/88761 = 34610.7, from below
		{1_000_000, nice(1), 1_248_780},         // 1 ms·1024/820 = 1248780.5
		{0, nice(5), 0},
	} {
		if got := CalcDeltaFair(tc.delta, tc.se); got != tc.want {
			t.Errorf("CalcDeltaFair(%d, w=%d) = %d, want %d", tc.delta, tc.se.Load.Weight, got, tc.want)
		}
	}
}

// TestCalcDeltaNegativeShift: weights far beyond any caller's contract
// panic instead of returning garbage.
func TestCalcDeltaNegativeShift(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var lw LoadWeight
	lw.Set(ScaleLoad(2))
	CalcDelta(1, 1<<63, &lw)
}
