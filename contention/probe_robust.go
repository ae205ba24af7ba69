package contention

import (
	"fmt"
	"slices"
	"strings"
)

// DefaultMaxSpread is the widest spread (IQR/median) a probe may show and
// still be fitted: a quarter of the median. On a quiet host the probes'
// batches agree within a few percent; another task sharing a probe CPU
// for part of the run spreads them by tens of percent.
const DefaultMaxSpread = 0.25

// Robust is a repeated measurement: its median and its spread, the
// interquartile range over the median, which neither a few disturbed
// samples nor their size move much.
type Robust struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Q1     float64 `json:"q1"`
	Q3     float64 `json:"q3"`
	// Spread is (Q3 - Q1) / Median, 0 for a single sample.
	Spread float64 `json:"spread"`
}

// RobustOf summarizes vals (not modified). It returns the zero Robust for
// an empty sample.
func RobustOf(vals []float64) Robust {
	if len(vals) == 0 {
		return Robust{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	r := Robust{N: len(s), Median: quantile(s, 0.5), Q1: quantile(s, 0.25), Q3: quantile(s, 0.75)}
	if r.Median > 0 {
		r.Spread = (r.Q3 - r.Q1) / r.Median
	}
	return r
}

// String formats the median with its spread, e.g. "9.73 (IQR/median 0.04, n=21)".
func (r Robust) String() string {
	return fmt.Sprintf("%.2f (IQR/median %.2f, n=%d)", r.Median, r.Spread, r.N)
}

// NoisyError says that repeated measurements disagree too much to be
// fitted: the host was busy with other work while it was measured.
type NoisyError struct {
	What  []string // each measurement too wide, with its spread
	Limit float64
	// OtherLoad is the share of the allowed CPUs' time that other
	// processes used while measuring (LoadMeter), -1 if unknown.
	OtherLoad float64
}

func (e *NoisyError) Error() string {
	load := ""
	if e.OtherLoad >= 0 {
		load = fmt.Sprintf("; other processes used %.0f%% of the CPUs meanwhile", 100*e.OtherLoad)
	}
	return fmt.Sprintf("the host is too noisy to fit: %s (the limit is IQR/median %.2f)%s; rerun on an otherwise idle machine, or pass -max-spread to fit anyway",
		strings.Join(e.What, "; "), e.Limit, load)
}

// CheckSpread returns a *NoisyError naming every measurement whose spread
// exceeds limit (limit < 0: never), nil if none does. names and rs pair up.
func CheckSpread(names []string, rs []Robust, limit, otherLoad float64) error {
	if limit < 0 {
		return nil
	}
	var what []string
	for i, r := range rs {
		if r.Spread > limit {
			what = append(what, fmt.Sprintf("%s spread %.2f (median %.4g, quartiles %.4g-%.4g over %d samples)",
				names[i], r.Spread, r.Median, r.Q1, r.Q3, r.N))
		}
	}
	if len(what) == 0 {
		return nil
	}
	return &NoisyError{What: what, Limit: limit, OtherLoad: otherLoad}
}
