package bench

import (
	"slices"

	"github.com/rqemu/rqemu/emu"
)

// Bucket is one non-empty bucket of a Hist: the value it is reported at
// (its midpoint, as schbench prints percentiles) and its count.
type Bucket struct {
	Value uint64 `json:"v"`
	Count uint64 `json:"n"`
}

// Buckets lists the histogram's non-empty buckets in increasing order of
// value: enough to rebuild its CDF (-json's "histograms", emu plot -cdf).
func (h *Hist) Buckets() []Bucket {
	keys := make([]int, 0, len(h.buckets))
	for k := range h.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Bucket, 0, len(keys))
	for _, k := range keys {
		out = append(out, Bucket{Value: platIdxToVal(k), Count: h.buckets[k]})
	}
	return out
}

// Histogram is a named latency histogram of a run.
type Histogram struct {
	Name    string   `json:"name"`
	Unit    string   `json:"unit"`
	Count   uint64   `json:"count"`
	Min     uint64   `json:"min"`
	Max     uint64   `json:"max"`
	Buckets []Bucket `json:"buckets"`
}

func histogram(name, unit string, h *Hist) Histogram {
	return Histogram{Name: name, Unit: unit, Count: h.Count(), Min: h.Min(), Max: h.Max(), Buckets: h.Buckets()}
}

// Histogrammer is a workload that keeps latency histograms (schbench's
// wakeup and request latencies, hopper's runnable waits).
type Histogrammer interface {
	Histograms(s *emu.Sim) []Histogram
}

// Histograms are the wakeup and request latencies over the same passes
// Metrics reads (after the -w warmup), in usec.
func (w *schbench) Histograms(s *emu.Sim) []Histogram {
	endTick, _ := w.ran(s)
	w.replay.finish(endTick)
	return []Histogram{histogram("wakeup", "usec", w.replay.wake), histogram("request", "usec", w.replay.req)}
}

// Histograms is every task's runnable waits merged, in ns.
func (w *hopper) Histograms(s *emu.Sim) []Histogram {
	all := NewHist()
	for _, st := range w.st {
		all.Merge(st.h)
	}
	return []Histogram{histogram("runnable_wait", "ns", all)}
}
