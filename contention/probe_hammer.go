package contention

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// HammerWriter is one writer's share of a Hammer run.
type HammerWriter struct {
	CPU     int           `json:"cpu"`
	Ops     uint64        `json:"ops"`
	Elapsed time.Duration `json:"elapsed_ns"` // this writer's own start-to-stop time
	NsPerOp float64       `json:"ns_per_op"`  // Elapsed / Ops
}

// HammerResult is the outcome of a Hammer run.
type HammerResult struct {
	CPUs     []int         `json:"cpus"`
	Shared   bool          `json:"shared"`      // one shared line, or one padded line per writer
	Duration time.Duration `json:"duration_ns"` // requested run time
	// Elapsed is the measured window, from the first writer's start to the
	// last writer's stop; it is a little longer than Duration.
	Elapsed  time.Duration `json:"elapsed_ns"`
	TotalOps uint64        `json:"total_ops"`
	// Counter is the final value of the shared line, or the sum of the
	// private lines; it always equals TotalOps.
	Counter    uint64         `json:"counter"`
	MopsPerSec float64        `json:"mops_per_sec"` // TotalOps / Elapsed, in 10^6 per second
	NsPerOp    float64        `json:"ns_per_op"`    // Elapsed / TotalOps: aggregate cost of one add
	Writers    []HammerWriter `json:"writers"`
}

// String formats the result on one line.
func (r HammerResult) String() string {
	mode := "padded"
	if r.Shared {
		mode = "shared"
	}
	var per strings.Builder
	for i, w := range r.Writers {
		if i > 0 {
			per.WriteString(" ")
		}
		fmt.Fprintf(&per, "cpu%d:%.2f", w.CPU, w.NsPerOp)
	}
	return fmt.Sprintf("hammer %d writers %s on %v: %.1f Mops/s, %.2f ns/op aggregate, %d ops in %v (per-writer ns/op %s)",
		len(r.CPUs), mode, r.CPUs, r.MopsPerSec, r.NsPerOp, r.TotalOps, r.Elapsed, per.String())
}

// hammerChunk is the number of adds between looks at the stop flag;
// hammerClockChunks is the number of chunks between looks at the clock.
const (
	hammerChunk       = 256
	hammerClockChunks = 64
)

// Hammer runs one writer goroutine per entry of cpus, each pinned with
// PinCurrentThread to that host CPU, doing atomic adds for dur: all on ONE
// shared, isolated (128-byte padded) line when shared is true, which
// measures contended-line throughput; or each on its own line when shared is
// false, which measures the uncontended baseline. Private lines are 128
// bytes apart, not 64, because the adjacent-line prefetcher pairs 64-byte
// lines into 128-byte blocks (sync.Pool pads the same way); see hostLinePad.
//
// A CPU may appear more than once. Two writers pinned to the same CPU is
// legal and measures time-slicing rather than coherence: the kernel shares
// the CPU between the two threads, and if there are more writers than
// GOMAXPROCS, Go's scheduler also preempts them (every ~10 ms), so
// per-writer ns/op then includes time spent descheduled.
//
// All writers are pinned, then released together through a spinning start
// barrier; each stops at a common
// deadline (checked every hammerChunk*hammerClockChunks adds) or as soon as
// another writer has stopped. Aggregate figures use the measured window
// Elapsed. Hammer returns an error if cpus is empty, dur <= 0, or a CPU is
// not allowed (wrapping ErrCPUNotAllowed). All writers have exited when it
// returns.
func Hammer(cpus []int, shared bool, dur time.Duration) (HammerResult, error) {
	if len(cpus) == 0 {
		return HammerResult{}, errors.New("contention: Hammer needs at least one CPU")
	}
	if dur <= 0 {
		return HammerResult{}, fmt.Errorf("contention: Hammer duration must be positive, got %v", dur)
	}
	if err := checkAllowed(cpus...); err != nil {
		return HammerResult{}, err
	}

	n := len(cpus)
	sharedLine := new(isolatedLine)
	private := newPaddedCounters(n)
	stop := new(isolatedLine)    // 0 = run, 1 = stop; read-mostly, kept off the hot lines
	arrived := new(isolatedLine) // start barrier count
	var abort atomic.Bool
	var deadline time.Time
	starts := make([]time.Time, n)
	writers := make([]HammerWriter, n)

	err := runPinned(cpus, &abort, func() {
		deadline = time.Now().Add(dur)
	}, func(i int) error {
		ctr := &private[i].v
		if shared {
			ctr = &sharedLine.v
		}
		// Start barrier: the channel release in runPinned wakes the
		// writers one by one (tens of µs apart), so they also meet here,
		// spinning, and start within a line transfer of each other.
		arrived.v.Add(1)
		sp := newSpinner(&abort)
		for arrived.v.Load() < uint64(n) {
			if err := sp.spin(spinTimeout); err != nil {
				return fmt.Errorf("contention: Hammer writer on cpu%d at start barrier: %w", cpus[i], err)
			}
		}
		var ops uint64
		t0 := time.Now()
		for chunks := 1; ; chunks++ {
			for range hammerChunk {
				ctr.Add(1)
			}
			ops += hammerChunk
			if stop.v.Load() != 0 {
				break
			}
			if chunks%hammerClockChunks == 0 && !time.Now().Before(deadline) {
				stop.v.Store(1)
				break
			}
		}
		t1 := time.Now()
		starts[i] = t0
		writers[i] = HammerWriter{
			CPU:     cpus[i],
			Ops:     ops,
			Elapsed: t1.Sub(t0),
			NsPerOp: float64(t1.Sub(t0).Nanoseconds()) / float64(ops),
		}
		return nil
	})
	if err != nil {
		return HammerResult{}, err
	}

	res := HammerResult{
		CPUs:     append([]int(nil), cpus...),
		Shared:   shared,
		Duration: dur,
		Writers:  writers,
	}
	first, last := starts[0], starts[0].Add(writers[0].Elapsed)
	for i, w := range writers {
		res.TotalOps += w.Ops
		if starts[i].Before(first) {
			first = starts[i]
		}
		if end := starts[i].Add(w.Elapsed); end.After(last) {
			last = end
		}
	}
	if shared {
		res.Counter = sharedLine.v.Load()
	} else {
		for i := range private {
			res.Counter += private[i].v.Load()
		}
	}
	res.Elapsed = last.Sub(first)
	if res.Elapsed <= 0 {
		return HammerResult{}, errors.New("contention: Hammer measured a non-positive window")
	}
	res.MopsPerSec = float64(res.TotalOps) / res.Elapsed.Seconds() / 1e6
	res.NsPerOp = float64(res.Elapsed.Nanoseconds()) / float64(res.TotalOps)
	return res, nil
}
