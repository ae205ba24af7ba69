package pelt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// periodNs is one PELT period of PELT clock: 1024 units of 1024 ns.
const periodNs = periodUnits << 10

// TestUpdateLoadSumUnits: time counts in whole 1024 ns units, the remainder
// carries over, and the result says whether a period boundary was crossed.
func TestUpdateLoadSumUnits(t *testing.T) {
	var sa Avg
	if UpdateLoadSum(1023, &sa, 1, 1, 1) || sa != (Avg{}) {
		t.Fatalf("1023 ns changed the state: %+v", sa)
	}
	// 1500 ns: one unit, the 476 ns left over stay before last_update_time.
	if UpdateLoadSum(1500, &sa, 1, 1, 1) {
		t.Fatal("one unit reported a period crossing")
	}
	want := Avg{LastUpdateTime: 1024, LoadSum: 1, RunnableSum: 1024, UtilSum: 1024, PeriodContrib: 1}
	if sa != want {
		t.Fatalf("after 1500 ns: %+v, want %+v", sa, want)
	}
	// 1023 units more reaches the boundary exactly.
	if !UpdateLoadSum(1024*1024+500, &sa, 1, 1, 1) {
		t.Fatal("reaching the period boundary was not reported")
	}
	if sa.PeriodContrib != 0 || sa.LastUpdateTime != 1024*1024 {
		t.Fatalf("at the boundary: %+v", sa)
	}

	// Property: for random steps the flag is exactly "the unit count
	// crossed a multiple of 1024", and last_update_time stays on the unit
	// grid at most 1023 ns behind now.
	r := rand.New(rand.NewPCG(7, 8))
	sa = Avg{}
	now, units := uint64(0), uint64(0)
	for range 100000 {
		now += r.Uint64N(3 * periodNs / 2)
		before := units
		units = now >> 10
		got := UpdateLoadSum(now, &sa, 1, 1, 0)
		if want := units/periodUnits > before/periodUnits; got != want {
			t.Fatalf("now=%d: crossed=%v, want %v", now, got, want)
		}
		if sa.LastUpdateTime != units<<10 || uint64(sa.PeriodContrib) != units%periodUnits {
			t.Fatalf("now=%d: %+v", now, sa)
		}
	}
}

// TestUpdateLoadSumClockBackwards: a negative delta resets
// last_update_time to now and touches nothing else.
func TestUpdateLoadSumClockBackwards(t *testing.T) {
	sa := Avg{LastUpdateTime: 10 * periodNs, LoadSum: 1234, UtilSum: 5678, PeriodContrib: 7}
	want := sa
	want.LastUpdateTime = 3 * periodNs
	if UpdateLoadSum(3*periodNs, &sa, 1, 1, 1) {
		t.Fatal("backwards clock reported a crossing")
	}
	if sa != want {
		t.Fatalf("got %+v, want %+v", sa, want)
	}
}

// TestLoadZeroForcesIdle: with load 0 nothing accrues even if runnable and
// running are passed (a dequeued cfs_rq->curr).
func TestLoadZeroForcesIdle(t *testing.T) {
	var sa Avg
	UpdateLoadSum(5*periodNs, &sa, 0, 3, 1)
	if sa.LoadSum != 0 || sa.RunnableSum != 0 || sa.UtilSum != 0 {
		t.Fatalf("load 0 accrued: %+v", sa)
	}
}

// runFor updates an entity that is runnable and running from its
// LastUpdateTime to end, in steps of step ns.
func runFor(sa *Avg, end, step, weight uint64) {
	for now := sa.LastUpdateTime + step; now <= end; now += step {
		UpdateSE(now, sa, true, 1, true, weight)
	}
	UpdateSE(end, sa, true, 1, true, weight)
}

// TestConvergence: an always-running entity's load_avg converges to its
// weight, and its util_avg and runnable_avg to 1024, within 0.1% (or one
// unit of integer division for tiny weights).
func TestConvergence(t *testing.T) {
	for _, w := range []uint64{2, 15, 335, 1024, 3121, 88761} {
		for _, step := range []uint64{100_000, 1_000_000, 4_000_000, 50 * periodNs} {
			var sa Avg
			runFor(&sa, 2000*periodNs+12345, step, w)
			for _, c := range []struct {
				name      string
				got, want uint64
			}{
				{"load_avg", sa.LoadAvg, w},
				{"util_avg", sa.UtilAvg, SchedCapacityScale},
				{"runnable_avg", sa.RunnableAvg, SchedCapacityScale},
			} {
				if d := math.Abs(float64(c.got) - float64(c.want)); d > max(1, 0.001*float64(c.want)) {
					t.Errorf("w=%d step=%d: %s = %d, want %d", w, step, c.name, c.got, c.want)
				}
			}
		}
	}
}

// TestRampMatchesClosedForm: from nothing, an always-running entity's
// load_avg after k whole periods is w·(1 − y^k).
func TestRampMatchesClosedForm(t *testing.T) {
	const w = 1024
	var sa Avg
	for k := uint64(1); k <= 400; k++ {
		UpdateSE(k*periodNs, &sa, true, 1, true, w)
		want := w * (1 - math.Pow(y, float64(k)))
		if d := math.Abs(float64(sa.LoadAvg) - want); d > 0.001*w+1 {
			t.Fatalf("after %d periods load_avg = %d, closed form %.2f", k, sa.LoadAvg, want)
		}
		if d := math.Abs(float64(sa.UtilAvg) - want); d > 0.001*w+1 {
			t.Fatalf("after %d periods util_avg = %d, closed form %.2f", k, sa.UtilAvg, want)
		}
	}
}

// TestHalfLife: a saturated task that blocks keeps half its load and util
// after LOAD_AVG_PERIOD periods, a quarter after twice that.
func TestHalfLife(t *testing.T) {
	const w = 1024
	var sa Avg
	start := 1000 * uint64(periodNs)
	runFor(&sa, start, 1_000_000, w)
	l0, u0, s0 := sa.LoadAvg, sa.UtilAvg, sa.LoadSum

	for _, c := range []struct {
		periods uint64
		frac    float64
	}{{LoadAvgPeriod, 0.5}, {2 * LoadAvgPeriod, 0.25}} {
		b := sa
		if !UpdateBlockedSE(start+c.periods*periodNs, &b, w) {
			t.Fatal("blocked update over whole periods reported no crossing")
		}
		// Shift then multiply by y^0 = (2^32−1)/2^32: up to two units low.
		if d := math.Abs(float64(b.LoadSum) - c.frac*float64(s0)); d > 2 {
			t.Errorf("%d periods: load_sum %d, want %.1f", c.periods, b.LoadSum, c.frac*float64(s0))
		}
		for _, v := range []struct {
			name    string
			got, at uint64
		}{{"load_avg", b.LoadAvg, l0}, {"util_avg", b.UtilAvg, u0}} {
			if d := math.Abs(float64(v.got) - c.frac*float64(v.at)); d > 1 {
				t.Errorf("%d periods: %s %d, want ≈ %.1f", c.periods, v.name, v.got, c.frac*float64(v.at))
			}
		}
	}
}

// series is a float oracle: the raw contribution of every period (units ×
// load, ×1024 for runnable and util) kept apart, and the sum evaluated as
// Σ contribution·y^age with age in periods.
type series struct {
	lut, units      uint64
	load, run, util map[uint64]float64
}

func newSeries() *series {
	return &series{load: map[uint64]float64{}, run: map[uint64]float64{}, util: map[uint64]float64{}}
}

// step charges the whole 1024 ns units since the last step with the state,
// keeping the sub-unit remainder as the kernel does.
func (s *series) step(now, load, runnable uint64, running bool) {
	n := (now - s.lut) >> 10
	s.lut += n << 10
	if load == 0 {
		runnable, running = 0, false
	}
	for n > 0 {
		p := s.units / periodUnits
		c := min(n, (p+1)*periodUnits-s.units)
		s.load[p] += float64(load * c)
		s.run[p] += float64(runnable * c << SchedCapacityShift)
		if running {
			s.util[p] += float64(c << SchedCapacityShift)
		}
		s.units += c
		n -= c
	}
}

var yPow = func() (t [maxDecayPeriods + 1]float64) {
	for i := range t {
		t[i] = math.Pow(y, float64(i))
	}
	return t
}()

func (s *series) sum(m map[uint64]float64) float64 {
	now := s.units / periodUnits
	var total float64
	for p, c := range m {
		if age := now - p; age <= maxDecayPeriods {
			total += c * yPow[age]
		} else {
			delete(m, p)
		}
	}
	return total
}

// TestMatchesFloatSeries drives random run/sleep patterns (runnable counts
// 0–3, running or not, durations from 2 µs to 30 ms) and compares the
// integer sums with the float series once they are non-trivial (≥ 10% of
// their maximum).
//
// The kernel's series is normalised by its integer LOAD_AVG_MAX (47742),
// 0.097% below the real 1024/(1−y), so the raw sums read low by about that
// much: checked within 0.2%. Scaled by LOAD_AVG_MAX/(1024/(1−y)) they match
// within 0.1%, plus 16 units for the floor each decay_load takes (which
// only shows in an entity's unweighted load_sum).
func TestMatchesFloatSeries(t *testing.T) {
	scale := LoadAvgMax / floatLoadAvgMax
	for _, load := range []uint64{1, 2, 1024, 88761} {
		for _, meanNs := range []float64{2e3, 50e3, 500e3, 1.1e6, 5e6, 30e6} {
			r := rand.New(rand.NewPCG(load, uint64(meanNs)))
			var sa Avg
			s := newSeries()
			now := uint64(0)
			var worstRaw, worst float64
			for i := range 3000 {
				now += uint64(r.ExpFloat64() * meanNs)
				runnable := r.Uint64N(4)
				running := runnable > 0 && r.IntN(3) > 0
				l := load * min(runnable, 1)
				UpdateLoadSum(now, &sa, l, runnable, b2u(running))
				s.step(now, l, runnable, running)
				if i%10 != 0 {
					continue
				}
				for _, c := range []struct {
					name string
					got  uint64
					want float64
					max  float64
				}{
					{"load_sum", sa.LoadSum, s.sum(s.load), float64(load) * floatLoadAvgMax},
					{"runnable_sum", sa.RunnableSum, s.sum(s.run), 1024 * floatLoadAvgMax},
					{"util_sum", uint64(sa.UtilSum), s.sum(s.util), 1024 * floatLoadAvgMax},
				} {
					if c.want < c.max/10 {
						continue
					}
					got := float64(c.got)
					raw := math.Abs(got-c.want) / c.want
					scaled := math.Abs(got - c.want*scale)
					worstRaw = max(worstRaw, raw)
					worst = max(worst, scaled/(c.want*scale))
					if raw > 0.002 || scaled > 0.001*c.want*scale+16 {
						t.Fatalf("load=%d mean=%.0fns step %d: %s = %d, series %.1f (raw %.4f%%)",
							load, meanNs, i, c.name, c.got, c.want, raw*100)
					}
				}
			}
			t.Logf("load=%d mean=%.0fns: worst raw %.4f%%, scaled %.4f%%", load, meanNs, worstRaw*100, worst*100)
		}
	}
}
