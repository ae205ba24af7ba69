package contention

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// PingPongResult is the outcome of a CAS ping-pong probe between two host
// CPUs. Latencies are one-way cache-line transfer times, i.e. half a round
// trip, in nanoseconds; the summary statistics are taken over the
// per-batch means in BatchNs.
type PingPongResult struct {
	CPUA    int `json:"cpu_a"`   // host CPU of the initiating side
	CPUB    int `json:"cpu_b"`   // host CPU of the responding side
	Rounds  int `json:"rounds"`  // round trips per batch
	Batches int `json:"batches"` // measured batches (warm-up excluded)

	MedianNs float64 `json:"median_ns"`
	MinNs    float64 `json:"min_ns"`
	P10Ns    float64 `json:"p10_ns"`
	P90Ns    float64 `json:"p90_ns"`
	MaxNs    float64 `json:"max_ns"`

	// BatchNs is each batch's mean one-way latency (batch time / 2 / Rounds).
	BatchNs []float64 `json:"batch_ns"`
}

// String formats the result on one line.
func (r PingPongResult) String() string {
	return fmt.Sprintf("pingpong cpu%d<->cpu%d: one-way median %.1f ns (min %.1f, p10 %.1f, p90 %.1f, max %.1f) over %d×%d round trips",
		r.CPUA, r.CPUB, r.MedianNs, r.MinNs, r.P10Ns, r.P90Ns, r.MaxNs, r.Batches, r.Rounds)
}

// PingPong measures the one-way cache-line transfer latency between host
// CPUs a and b, as core-to-core-latency's CAS benchmark does: two goroutines,
// each pinned with PinCurrentThread, bounce one isolated (128-byte padded)
// word. The side on a turns an even value 2k into 2k+1 with a CAS retried
// until it succeeds, which means waiting for b; the side on b turns 2k+1
// into 2k+2 the same way. A round trip is two line transfers, so one-way =
// RTT/2.
//
// rounds is the number of round trips per batch. After one warm-up batch of
// min(rounds, 10000) round trips, ProbeBatches batches of rounds each are
// timed (PingPong(a, b, 200000) reproduces hardware.md C1's method). Both
// goroutines have exited when PingPong returns.
//
// The waits spin, so a and b should be different, idle CPUs and GOMAXPROCS
// at least 2; otherwise the numbers measure scheduling, not the cache. Each
// wait is bounded: if the peer does not answer within 2 s the probe fails
// with an error wrapping ErrProbeTimeout. PingPong returns an error if a ==
// b, rounds <= 0, or a CPU is not allowed (wrapping ErrCPUNotAllowed).
func PingPong(a, b int, rounds int) (PingPongResult, error) {
	return pingPong(a, b, rounds, spinTimeout)
}

func pingPong(a, b int, rounds int, timeout time.Duration) (PingPongResult, error) {
	if a == b {
		return PingPongResult{}, fmt.Errorf("contention: PingPong needs two different CPUs, got %d twice", a)
	}
	if rounds <= 0 {
		return PingPongResult{}, fmt.Errorf("contention: PingPong rounds must be positive, got %d", rounds)
	}
	if err := checkAllowed(a, b); err != nil {
		return PingPongResult{}, err
	}

	warm := min(rounds, 10000)
	// The initiator performs CAS number 0..total: batch j spans its CAS
	// warm+j*rounds to warm+(j+1)*rounds. The responder answers CAS 0..total-1.
	total := uint64(warm) + uint64(ProbeBatches)*uint64(rounds)
	line := new(isolatedLine)
	var abort atomic.Bool
	batchNs := make([]float64, ProbeBatches)

	initiator := func() error {
		s := newSpinner(&abort)
		var t0 time.Time
		for k := uint64(0); k <= total; k++ {
			s.reset()
			for !line.v.CompareAndSwap(2*k, 2*k+1) {
				if err := s.spin(timeout); err != nil {
					return fmt.Errorf("contention: PingPong cpu%d waiting for cpu%d: %w", a, b, err)
				}
			}
			if k < uint64(warm) {
				continue
			}
			if i := k - uint64(warm); i%uint64(rounds) == 0 {
				now := time.Now()
				if i > 0 {
					batchNs[i/uint64(rounds)-1] = float64(now.Sub(t0).Nanoseconds()) / (2 * float64(rounds))
				}
				t0 = now
			}
		}
		return nil
	}
	responder := func() error {
		s := newSpinner(&abort)
		for k := uint64(0); k < total; k++ {
			s.reset()
			for !line.v.CompareAndSwap(2*k+1, 2*k+2) {
				if err := s.spin(timeout); err != nil {
					return fmt.Errorf("contention: PingPong cpu%d waiting for cpu%d: %w", b, a, err)
				}
			}
		}
		return nil
	}

	err := runPinned([]int{a, b}, &abort, nil, func(i int) error {
		if i == 0 {
			return initiator()
		}
		return responder()
	})
	if err != nil {
		return PingPongResult{}, err
	}
	for _, v := range batchNs {
		if !(v > 0) {
			// A clock that did not advance over a whole batch; report
			// rather than return a meaningless zero.
			return PingPongResult{}, errors.New("contention: PingPong measured a non-positive batch time")
		}
	}
	sp := summarize(batchNs)
	return PingPongResult{
		CPUA: a, CPUB: b, Rounds: rounds, Batches: ProbeBatches,
		MedianNs: sp.median, MinNs: sp.min, P10Ns: sp.p10, P90Ns: sp.p90, MaxNs: sp.max,
		BatchNs: batchNs,
	}, nil
}
