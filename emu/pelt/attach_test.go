package pelt

import (
	"math/rand/v2"
	"testing"
	"testing/quick"
)

func TestSubAddPositive(t *testing.T) {
	u64 := func(v uint64) *uint64 { return &v }
	u32 := func(v uint32) *uint32 { return &v }

	for _, c := range []struct {
		p       *uint64
		sub     uint64
		want    uint64
		comment string
	}{
		{u64(5), 3, 2, "plain"},
		{u64(3), 5, 0, "clamped"},
		{u64(0), 0, 0, "zero"},
	} {
		SubPositive(c.p, c.sub)
		if *c.p != c.want {
			t.Errorf("SubPositive %s: %d, want %d", c.comment, *c.p, c.want)
		}
	}
	for _, c := range []struct {
		p       *uint32
		add     int64
		want    uint32
		comment string
	}{
		{u32(5), -3, 2, "negative"},
		{u32(5), -7, 0, "clamped"},
		{u32(5), 3, 8, "positive"},
		{u32(0xffffffff), 1, 0, "positive wraps at the field width, as in C"},
		{u32(5), -(1 << 32), 5, "negative by a multiple of 2^32 is a no-op in u32"},
	} {
		AddPositive(c.p, c.add)
		if *c.p != c.want {
			t.Errorf("AddPositive %s: %d, want %d", c.comment, *c.p, c.want)
		}
	}

	// Properties against plain integer arithmetic.
	sub := func(a, b uint64) bool {
		p := a
		SubPositive(&p, b)
		return (a >= b && p == a-b) || (a < b && p == 0)
	}
	add := func(a uint32, b int32) bool {
		p := uint64(a)
		AddPositive(&p, int64(b))
		want := int64(a) + int64(b)
		return (want >= 0 && p == uint64(want)) || (want < 0 && p == 0)
	}
	if err := quick.Check(sub, nil); err != nil {
		t.Error("SubPositive:", err)
	}
	if err := quick.Check(add, nil); err != nil {
		t.Error("AddPositive:", err)
	}
}

// busyCfsRq returns a cfs_rq signal built the way the kernel builds it:
// nTasks nice-0 tasks queued for a while, then some sleeping.
func busyCfsRq(r *rand.Rand, nTasks uint64) Avg {
	var cfs Avg
	now := uint64(0)
	for range 300 {
		now += uint64(r.ExpFloat64() * 2e6)
		n := r.Uint64N(nTasks + 1)
		UpdateCfsRq(now, &cfs, n*1024, n, n > 0)
	}
	return cfs
}

// migrant returns a task signal with some history, detached (last update 0).
func migrant(r *rand.Rand, w uint64) Avg {
	var se Avg
	now := uint64(0)
	for range 200 {
		now += uint64(r.ExpFloat64() * 3e6)
		on := r.IntN(2) == 0
		UpdateSE(now, &se, on, b2u(on), on, w)
	}
	se.LastUpdateTime = 0
	return se
}

// TestAttachAlignsWindow: the entity takes the cfs_rq's window and its sums
// are rebuilt so that recomputing the averages gives them back.
func TestAttachAlignsWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 1000 {
		w := []uint64{15, 1024, 88761}[r.IntN(3)]
		cfs := busyCfsRq(r, 4)
		se := migrant(r, w)
		before := se
		Attach(&cfs, &se, w)
		if se.LastUpdateTime != cfs.LastUpdateTime || se.PeriodContrib != cfs.PeriodContrib {
			t.Fatalf("window not aligned: se %+v cfs %+v", se, cfs)
		}
		check := se
		UpdateLoadAvg(&check, w)
		if check.UtilAvg != before.UtilAvg || check.RunnableAvg != before.RunnableAvg {
			t.Fatalf("util/runnable not recoverable: %+v from %+v", check, before)
		}
		// load_sum = ⌊load_avg·divider/w⌋ loses up to w/divider of load_avg.
		if before.LoadAvg-check.LoadAvg > w/PeltMinDivider+1 {
			t.Fatalf("load_avg %d → %d", before.LoadAvg, check.LoadAvg)
		}
	}
	// A weightless history still gets load_sum 1.
	var cfs, se Avg
	Attach(&cfs, &se, 1024)
	if se.LoadSum != 1 || cfs.LoadSum != 1024 {
		t.Fatalf("zero load: se load_sum %d, cfs %d", se.LoadSum, cfs.LoadSum)
	}
}

// TestAttachDetachRoundTrip: attaching then detaching an entity leaves the
// cfs_rq exactly as it was (its sums sit above the floors).
func TestAttachDetachRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 2000 {
		w := []uint64{2, 15, 335, 1024, 3121, 88761}[r.IntN(6)]
		cfs := busyCfsRq(r, 1+r.Uint64N(6))
		se := migrant(r, w)
		before := cfs
		Attach(&cfs, &se, w)
		if cfs.LoadAvg != before.LoadAvg+se.LoadAvg || cfs.UtilAvg != before.UtilAvg+se.UtilAvg {
			t.Fatalf("trial %d: attach did not add the averages", i)
		}
		Detach(&cfs, &se, w)
		if cfs != before {
			t.Fatalf("trial %d (w=%d): round trip\n got %+v\nwant %+v", i, w, cfs, before)
		}
	}
}

// TestRemovedMatchesDetach: removing an entity through cfs_rq->removed
// (wakeup migration) takes away the same averages as a synchronous detach.
// The sums differ by what the averages cannot see: detach subtracts the
// entity's sums, removal avg·divider, and sum − avg·divider lies in
// [0, divider) once the averages are fresh. Right after an attach the entity's util and runnable sums
// are exactly avg·divider, so those match exactly, and its load_sum is
// ⌊load_avg·divider/w⌋, so w·load_sum may fall short by up to w.
func TestRemovedMatchesDetach(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := range 2000 {
		w := []uint64{15, 1024, 3121, 88761}[r.IntN(4)]
		cfs := busyCfsRq(r, 1+r.Uint64N(6))
		se := migrant(r, w)
		Attach(&cfs, &se, w)
		aged := i%2 == 1
		if aged {
			// Both age past a period boundary (so the averages are
			// fresh): the task sleeps, the cfs_rq runs two others.
			now := cfs.LastUpdateTime + periodNs + uint64(r.ExpFloat64()*5e6)
			UpdateBlockedSE(now, &se, w)
			UpdateCfsRq(now, &cfs, 2048, 2, true)
			if se.LastUpdateTime != cfs.LastUpdateTime || se.PeriodContrib != cfs.PeriodContrib {
				t.Fatal("windows drifted apart")
			}
		}

		det, rem := cfs, cfs
		Detach(&det, &se, w)
		var rq Removed
		rq.Add(&se)
		if !ApplyRemoved(&rem, rq) {
			t.Fatal("removal not reported as decayed")
		}
		if det.LoadAvg != rem.LoadAvg || det.UtilAvg != rem.UtilAvg || det.RunnableAvg != rem.RunnableAvg {
			t.Fatalf("trial %d: averages differ: detach %+v removed %+v", i, det, rem)
		}
		div := int64(Divider(&cfs))
		slack := int64(0) // right after attach: util/runnable exact
		if aged {
			slack = div
		}
		for _, c := range []struct {
			name     string
			det, rem int64
			lo, hi   int64 // rem − det ∈ (lo, hi]
		}{
			{"load_sum", int64(det.LoadSum), int64(rem.LoadSum), -int64(w), slack},
			{"util_sum", int64(det.UtilSum), int64(rem.UtilSum), -1, slack},
			{"runnable_sum", int64(det.RunnableSum), int64(rem.RunnableSum), -1, slack},
		} {
			if d := c.rem - c.det; d <= c.lo || d > c.hi {
				t.Fatalf("trial %d (aged=%v, w=%d): %s detach %d removed %d\nse %+v\ncfs %+v", i, aged, w, c.name, c.det, c.rem, se, cfs)
			}
		}
		if got, want := rq.PropSum(Divider(&cfs)), -int64(se.RunnableAvg*uint64(div))>>10; got != want {
			t.Fatalf("PropSum %d, want %d", got, want)
		}
	}
	// Nothing queued: nothing happens.
	cfs := Avg{LoadAvg: 7, LoadSum: 7 * LoadAvgMax}
	if ApplyRemoved(&cfs, Removed{}) || cfs.LoadAvg != 7 {
		t.Fatal("empty removal changed the cfs_rq")
	}
}

// TestDetachFloors: rounding can leave an entity's sum above what its
// cfs_rq holds; the floor keeps sum ≥ avg·PELT_MIN_DIVIDER so the cfs_rq
// never reads sum 0 with avg ≠ 0.
func TestDetachFloors(t *testing.T) {
	cfs := Avg{UtilAvg: 10, UtilSum: 10*PeltMinDivider + 3, RunnableAvg: 10, RunnableSum: 10*PeltMinDivider + 3}
	se := Avg{UtilAvg: 4, UtilSum: 9 * PeltMinDivider, RunnableAvg: 4, RunnableSum: 9 * PeltMinDivider}
	Detach(&cfs, &se, 1024)
	if cfs.UtilAvg != 6 || cfs.UtilSum != 6*PeltMinDivider {
		t.Errorf("util: avg %d sum %d, want 6 and %d", cfs.UtilAvg, cfs.UtilSum, 6*PeltMinDivider)
	}
	if cfs.RunnableAvg != 6 || cfs.RunnableSum != 6*PeltMinDivider {
		t.Errorf("runnable: avg %d sum %d", cfs.RunnableAvg, cfs.RunnableSum)
	}
}

// TestFloorSumU32Quirk documents the kernel's max_t(u32, …): a weighted
// cfs_rq load_sum of 2^32 or more (here ~105 busy nice-0 tasks) loses its
// high bits when an entity is detached. Kept as in v6.12.
func TestFloorSumU32Quirk(t *testing.T) {
	const n = 105
	cfs := Avg{LoadAvg: n * 1024, LoadSum: n * 1024 * PeltMinDivider}
	se := Avg{LoadAvg: 1024, LoadSum: PeltMinDivider}
	Detach(&cfs, &se, 1024)
	full := uint64((n - 1) * 1024 * PeltMinDivider)
	want := uint64(uint32(full)) // both operands of max_t truncate alike here
	if cfs.LoadSum != want || cfs.LoadSum == full {
		t.Fatalf("load_sum %d, want the u32-truncated %d (full value %d)", cfs.LoadSum, want, full)
	}
	if cfs.LoadAvg != (n-1)*1024 {
		t.Fatalf("load_avg %d", cfs.LoadAvg)
	}
}

// TestReweight: changing a queued entity's weight moves its load_avg and
// the cfs_rq's with it, and changing it back restores the averages.
func TestReweight(t *testing.T) {
	var se, cfs Avg
	for k := uint64(1); k <= 500; k++ {
		UpdateSE(k*periodNs+777, &se, true, 1, true, 1024)
		UpdateCfsRq(k*periodNs+777, &cfs, 1024, 1, true)
	}
	before := cfs
	Reweight(&cfs, &se, 1024, 2048)
	if se.LoadAvg < 2046 || cfs.LoadAvg < before.LoadAvg+1022 {
		t.Fatalf("after ×2: se %d cfs %d (was %d)", se.LoadAvg, cfs.LoadAvg, before.LoadAvg)
	}
	Reweight(&cfs, &se, 2048, 1024)
	if cfs.LoadAvg != before.LoadAvg {
		t.Fatalf("round trip: cfs load_avg %d, want %d", cfs.LoadAvg, before.LoadAvg)
	}
}

// TestUpdateCfsRqLoadAvg: removal and aging combine, and the removed load
// is queued for propagation.
func TestUpdateCfsRqLoadAvg(t *testing.T) {
	cfs := Avg{LastUpdateTime: 10 * periodNs, LoadAvg: 2048, LoadSum: 2048 * PeltMinDivider,
		UtilAvg: 600, UtilSum: 600 * PeltMinDivider, RunnableAvg: 900, RunnableSum: 900 * PeltMinDivider}
	var prop Propagation
	r := Removed{Nr: 1, LoadAvg: 1024, UtilAvg: 300, RunnableAvg: 450}
	// No time passes: decayed only because of the removal.
	if !UpdateCfsRqLoadAvg(10*periodNs+500, &cfs, r, &prop, 1024, 1, false) {
		t.Fatal("removal not reported")
	}
	if cfs.LoadAvg != 1024 || cfs.UtilAvg != 300 || cfs.RunnableAvg != 450 {
		t.Fatalf("after removal: %+v", cfs)
	}
	if !prop.Pending || prop.RunnableSum != -int64(450*PeltMinDivider)>>10 {
		t.Fatalf("propagation %+v", prop)
	}
	// Nothing removed, no boundary: not decayed; nil prop is fine.
	if UpdateCfsRqLoadAvg(10*periodNs+2048, &cfs, Removed{}, nil, 1024, 1, false) {
		t.Fatal("reported decayed without removal or crossing")
	}
	if !UpdateCfsRqLoadAvg(11*periodNs, &cfs, Removed{}, nil, 1024, 1, false) {
		t.Fatal("crossing not reported")
	}
}
