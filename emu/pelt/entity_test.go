package pelt

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUpdateSEClearsUtilEstFlag: UTIL_AVG_UNCHANGED is dropped only when
// the averages are recomputed, and the estimate itself is kept.
func TestUpdateSEClearsUtilEstFlag(t *testing.T) {
	sa := Avg{UtilEst: UtilEst{Enqueued: 300 | UtilAvgUnchanged, Ewma: 280}}
	UpdateSE(periodNs/2, &sa, true, 1, true, 1024)
	if sa.UtilEst != (UtilEst{300 | UtilAvgUnchanged, 280}) {
		t.Fatalf("within a period: util_est = %#x", sa.UtilEst)
	}
	UpdateSE(periodNs, &sa, true, 1, true, 1024)
	if sa.UtilEst != (UtilEst{300, 280}) {
		t.Fatalf("after a crossing: util_est = %#x, want {300, 280}", sa.UtilEst)
	}
}

// TestBlockedDecaysToZero: after LOAD_AVG_PERIOD·63 idle periods nothing is
// left and the signal counts as decayed.
func TestBlockedDecaysToZero(t *testing.T) {
	var sa Avg
	runFor(&sa, 100*periodNs, 1_000_000, 88761)
	if LoadAvgIsDecayed(&sa) {
		t.Fatal("busy entity reported decayed")
	}
	UpdateBlockedSE(100*periodNs+(maxDecayPeriods+1)*periodNs, &sa, 88761)
	if !LoadAvgIsDecayed(&sa) || sa.LoadAvg != 0 || sa.UtilAvg != 0 || sa.RunnableAvg != 0 {
		t.Fatalf("after 2017 idle periods: %+v", sa)
	}
}

// TestUpdateClassRq: an rt/dl-style signal tracks util (load_avg is
// "meaningless" there, as pelt.c says: load_sum/divider with a multiplier
// of 1).
func TestUpdateClassRq(t *testing.T) {
	var sa Avg
	for k := uint64(1); k <= 1000; k++ {
		UpdateClassRq(k*periodNs, &sa, true)
	}
	if sa.UtilAvg < 1023 || sa.RunnableAvg < 1023 {
		t.Fatalf("always running: %+v", sa)
	}
}

// TestCfsRqIsSumOfEntities: with aligned windows and updates at the same
// instants, a cfs_rq's signal is the sum of its entities', blocked ones
// included: load_sum = Σ weight·se load_sum, util and runnable likewise.
// The only differences are the per-entity floors of decay_load.
func TestCfsRqIsSumOfEntities(t *testing.T) {
	weights := []uint64{1024, 335, 3121, 15}
	ses := make([]Avg, len(weights))
	queued := make([]bool, len(weights))
	var cfs Avg
	r := rand.New(rand.NewPCG(9, 10))
	now := uint64(0)
	for i := range 20000 {
		now += uint64(r.ExpFloat64() * 2e6)
		curr := -1
		var loadW, nr uint64
		for j, q := range queued {
			if q {
				if curr < 0 {
					curr = j
				}
				loadW += weights[j]
				nr++
			}
		}
		for j := range ses {
			UpdateSE(now, &ses[j], queued[j], b2u(queued[j]), j == curr, weights[j])
		}
		UpdateCfsRq(now, &cfs, loadW, nr, curr >= 0)
		j := r.IntN(len(weights))
		queued[j] = !queued[j]

		if i%50 != 0 {
			continue
		}
		var sumLoad, sumLoadAvg, sumUtil, sumRun, sumW float64
		for j, se := range ses {
			sumLoad += float64(weights[j] * se.LoadSum)
			sumLoadAvg += float64(se.LoadAvg)
			sumUtil += float64(se.UtilSum)
			sumRun += float64(se.RunnableSum)
			sumW += float64(weights[j])
		}
		// Each decay floors every se sum: < 1 unit × weight per period,
		// at most 1/(1−y) ≈ 47 periods' worth still visible.
		floors := 48 * sumW
		if d := math.Abs(float64(cfs.LoadSum) - sumLoad); d > floors {
			t.Fatalf("step %d: cfs load_sum %d, Σ w·se %.0f", i, cfs.LoadSum, sumLoad)
		}
		if d := math.Abs(float64(cfs.LoadAvg) - sumLoadAvg); d > 2+float64(len(ses)) {
			t.Fatalf("step %d: cfs load_avg %d, Σ se %.0f", i, cfs.LoadAvg, sumLoadAvg)
		}
		if d := math.Abs(float64(cfs.UtilSum) - sumUtil); d > 48*float64(len(ses)) {
			t.Fatalf("step %d: cfs util_sum %d, Σ se %.0f", i, cfs.UtilSum, sumUtil)
		}
		if d := math.Abs(float64(cfs.RunnableSum) - sumRun); d > 48*float64(len(ses)) {
			t.Fatalf("step %d: cfs runnable_sum %d, Σ se %.0f", i, cfs.RunnableSum, sumRun)
		}
	}
}
