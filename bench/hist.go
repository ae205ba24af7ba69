package bench

import (
	"math/bits"
	"slices"
)

// Hist is a log-linear latency histogram with schbench's (and fio's)
// bucketing: PLAT_BITS = 8, so 256 buckets per power of two above 512 and
// exact values below, each bucket reported at its midpoint: a relative
// error under 0.4%. Values are in the unit the caller records (schbench
// records µs). Not safe for concurrent use: each task keeps its own and
// the workload merges them after the run.
type Hist struct {
	buckets map[int]uint64
	n       uint64
	min     uint64
	max     uint64
}

const (
	platBits = 8
	platVal  = 1 << platBits
)

// NewHist returns an empty histogram.
func NewHist() *Hist { return &Hist{buckets: map[int]uint64{}} }

// platIdx is schbench's plat_val_to_idx().
func platIdx(v uint64) int {
	if v < 2*platVal {
		return int(v)
	}
	msb := bits.Len64(v) - 1
	errBits := msb - platBits
	base := (errBits + 1) << platBits
	offset := int((v >> uint(errBits)) & (platVal - 1))
	return base + offset
}

// platIdxToVal is schbench's plat_idx_to_val(): the bucket's midpoint.
func platIdxToVal(idx int) uint64 {
	if idx < 2*platVal {
		return uint64(idx)
	}
	errBits := (idx >> platBits) - 1
	k := uint64(idx % platVal)
	base := uint64(1) << uint(errBits+platBits)
	return base + (k+0)<<uint(errBits) + (uint64(1)<<uint(errBits))/2
}

// Add records a value.
func (h *Hist) Add(v uint64) {
	h.buckets[platIdx(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
}

// Merge adds o's samples.
func (h *Hist) Merge(o *Hist) {
	for k, c := range o.buckets {
		h.buckets[k] += c
	}
	if o.n > 0 && (h.n == 0 || o.min < h.min) {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
}

// Count, Min and Max describe the samples.
func (h *Hist) Count() uint64 { return h.n }
func (h *Hist) Min() uint64   { return h.min }
func (h *Hist) Max() uint64   { return h.max }

// Percentile returns the value at percentile p (0-100) as schbench's
// calc_percentiles() does: the midpoint of the bucket holding the sample
// of rank ceil(n·p/100), and how many samples that bucket holds.
func (h *Hist) Percentile(p float64) (val, count uint64) {
	if h.n == 0 {
		return 0, 0
	}
	rank := uint64(float64(h.n)*p/100 + 0.999999)
	rank = max(rank, 1)
	keys := make([]int, 0, len(h.buckets))
	for k := range h.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var seen uint64
	for _, k := range keys {
		seen += h.buckets[k]
		if seen >= rank {
			return platIdxToVal(k), h.buckets[k]
		}
	}
	last := keys[len(keys)-1]
	return platIdxToVal(last), h.buckets[last]
}
