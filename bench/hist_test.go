package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The histogram's bucket midpoints are within 0.4% of any value they
// hold, and its percentiles within 0.4% of the exact order statistic
// (schbench's calc_percentiles rank), over random samples of many scales.
func TestHistError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		h := NewHist()
		var vals []uint64
		n := 1 + r.IntN(5000)
		scale := uint64(1) << r.IntN(30)
		for i := 0; i < n; i++ {
			v := scale + r.Uint64N(scale*8+1)
			vals = append(vals, v)
			h.Add(v)
			mid := platIdxToVal(platIdx(v))
			if d := absDiff(mid, v); float64(d) > 0.004*float64(v)+1 {
				t.Fatalf("value %d lands in a bucket reported as %d (%.2f%% off)", v, mid, 100*float64(d)/float64(v))
			}
		}
		slices.Sort(vals)
		if h.Count() != uint64(n) || h.Min() != vals[0] || h.Max() != vals[n-1] {
			t.Fatalf("count/min/max %d/%d/%d, want %d/%d/%d", h.Count(), h.Min(), h.Max(), n, vals[0], vals[n-1])
		}
		for _, p := range []float64{20, 50, 90, 99, 99.9} {
			got, _ := h.Percentile(p)
			rank := int(float64(n)*p/100 + 0.999999)
			want := vals[max(rank, 1)-1]
			if d := absDiff(got, want); float64(d) > 0.004*float64(want)+1 {
				t.Errorf("p%.1f of %d samples: %d, exact %d", p, n, got, want)
			}
		}
	}
}

// Merging per-task histograms is the histogram of all samples.
func TestHistMerge(t *testing.T) {
	a, b, all := NewHist(), NewHist(), NewHist()
	for v := uint64(1); v < 100000; v = v*3 + 1 {
		a.Add(v)
		all.Add(v)
		b.Add(v * 7)
		all.Add(v * 7)
	}
	a.Merge(b)
	for _, p := range []float64{20, 50, 90, 99, 99.9} {
		x, _ := a.Percentile(p)
		y, _ := all.Percentile(p)
		if x != y {
			t.Errorf("p%.1f: merged %d, direct %d", p, x, y)
		}
	}
	if a.Count() != all.Count() || a.Min() != all.Min() || a.Max() != all.Max() {
		t.Error("merged count/min/max differ")
	}
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}
