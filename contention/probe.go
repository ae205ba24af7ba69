package contention

import (
	"errors"
	"github.com/rqemu/rqemu/weave"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ProbeBatches is the number of measured batches PingPong and PipeRoundTrip
// split a probe into (after one discarded warm-up batch). Seven batches
// matches the method behind the development-VM numbers in hardware.md C1
// ("7 runs × 200k round trips").
const ProbeBatches = 7

// ErrProbeTimeout is returned (wrapped) when a probe's spinning peer does not
// respond within the spin timeout (2 s of wall time), e.g. because its
// thread was descheduled for that long or the peer failed.
var ErrProbeTimeout = errors.New("contention: probe peer did not respond")

// errProbeAborted is what a probe goroutine returns when its peer gave up;
// the peer's own error is the one reported.
var errProbeAborted = errors.New("contention: probe aborted by peer")

// spinTimeout bounds every spinning wait in the probes.
const spinTimeout = 2 * time.Second

// spinCheckEvery is how many failed spins pass between looks at the clock
// and the abort flag (a power of two). The clock is never read on the fast
// path: a wait that succeeds within spinCheckEvery spins costs no time.Now.
const spinCheckEvery = 4096

// hostLinePad is the padding unit for host-side isolation: 128 bytes, as
// stdlib sync.Pool pads poolLocal ("Prevents false sharing on widespread
// platforms with 128 mod (cache line size) = 0"). Lines are 64 bytes on x86,
// but the L2 adjacent-line (spatial) prefetcher fetches 64-byte lines in
// aligned 128-byte pairs, so two hot words 64 bytes apart still interfere;
// 128 also equals the line size of Apple Silicon and some arm64 parts.
// golang.org/x/sys/cpu.CacheLinePad is only 64 bytes on amd64, which is why
// it is not used here.
const hostLinePad = weave.HostLinePad

// paddedCounter is one hot word followed by enough padding to fill
// hostLinePad bytes. In an array, counters are hostLinePad bytes apart, which
// puts any two of them in different aligned 128-byte blocks whatever the
// array's base alignment, so neither a line nor a prefetch pair is shared.
type paddedCounter struct {
	v atomic.Uint64
	_ [hostLinePad - 8]byte
}

// isolatedLine is a single paddedCounter with a full hostLinePad guard in
// front, so the word is at least 128 bytes away from whatever the allocator
// placed before it, and 120 bytes of trailing pad keep it away from what
// follows.
type isolatedLine struct {
	_ [hostLinePad]byte
	paddedCounter
}

// newPaddedCounters returns n counters hostLinePad bytes apart with a
// guard element in front (the guard is never touched).
func newPaddedCounters(n int) []paddedCounter {
	return make([]paddedCounter, n+1)[1:]
}

// spinner bounds a spinning wait: call spin after each failed attempt.
type spinner struct {
	abort *atomic.Bool
	spins uint64
	start time.Time
	// alone is set when GOMAXPROCS < 2: the peer cannot run while this
	// goroutine holds the only P, so every failed attempt yields.
	alone bool
}

// newSpinner returns a spinner watching abort.
func newSpinner(abort *atomic.Bool) spinner {
	return spinner{abort: abort, alone: runtime.GOMAXPROCS(0) < 2}
}

// spin records one failed attempt. Every spinCheckEvery attempts it checks
// the abort flag and the wall clock (started lazily at the first check) and
// yields the processor with runtime.Gosched, so that a wait whose peer is not
// running (OS descheduling, a stop-the-world, more spinners than Ps) does
// not burn the whole time slice; with GOMAXPROCS < 2 it yields after every
// attempt. It returns errProbeAborted if the peer gave up and
// ErrProbeTimeout after timeout of waiting.
func (s *spinner) spin(timeout time.Duration) error {
	s.spins++
	if s.spins%spinCheckEvery != 0 {
		if s.alone {
			runtime.Gosched()
		}
		return nil
	}
	if s.abort.Load() {
		return errProbeAborted
	}
	now := time.Now()
	if s.start.IsZero() {
		s.start = now
	} else if now.Sub(s.start) > timeout {
		return ErrProbeTimeout
	}
	runtime.Gosched()
	return nil
}

// reset prepares the spinner for the next wait.
func (s *spinner) reset() {
	s.spins = 0
	s.start = time.Time{}
}

// runPinned starts one goroutine per entry of cpus, pins each with
// PinCurrentThread, and once all are pinned calls release (if not nil) and
// lets them run body(i). If any pin fails, none runs body. If a body returns
// an error the abort flag is set so that its peers, which must watch abort
// in any wait, give up too. runPinned returns only after every goroutine
// has exited (each exits still locked, which destroys its pinned thread);
// the first real error is returned, in preference to errProbeAborted.
func runPinned(cpus []int, abort *atomic.Bool, release func(), body func(i int) error) error {
	n := len(cpus)
	pinned := make(chan error, n)
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, cpu := range cpus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := PinCurrentThread(cpu)
			pinned <- err
			if err != nil {
				return
			}
			// Never unlock: this goroutine exits locked (see PinCurrentThread).
			<-start
			if abort.Load() {
				return
			}
			if err := body(i); err != nil {
				errs[i] = err
				abort.Store(true)
			}
		}()
	}
	var pinErr error
	for range n {
		if err := <-pinned; err != nil && pinErr == nil {
			pinErr = err
		}
	}
	if pinErr != nil {
		abort.Store(true)
	} else if release != nil {
		release()
	}
	close(start)
	wg.Wait()
	if pinErr != nil {
		return pinErr
	}
	var aborted error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errProbeAborted):
			aborted = err
		default:
			return err
		}
	}
	return aborted
}

// spread summarizes a sample: minimum, 10th percentile, median, 90th
// percentile and maximum, with linear interpolation between order statistics.
type spread struct {
	min, p10, median, p90, max float64
}

// summarize computes the spread of vals (not modified). vals must be
// non-empty.
func summarize(vals []float64) spread {
	s := slices.Clone(vals)
	slices.Sort(s)
	return spread{
		min:    s[0],
		p10:    quantile(s, 0.10),
		median: quantile(s, 0.50),
		p90:    quantile(s, 0.90),
		max:    s[len(s)-1],
	}
}

// quantile returns the q-quantile of sorted (non-empty), interpolating
// linearly between the two nearest order statistics.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}
