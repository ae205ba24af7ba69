package contention

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// PipeResult is the outcome of a pipe round-trip probe. A round trip is one
// byte sent from the thread on CPUA to the thread on CPUB and one byte back:
// two wakeups and two context switches, like one "op" of
// `perf bench sched pipe`.
type PipeResult struct {
	CPUA    int `json:"cpu_a"`   // host CPU of the initiating side
	CPUB    int `json:"cpu_b"`   // host CPU of the responding side
	Rounds  int `json:"rounds"`  // round trips per batch
	Batches int `json:"batches"` // measured batches (warm-up excluded)

	// UsecsPerOp is the median over batches of the mean round-trip time,
	// in microseconds (perf's "usecs/op").
	UsecsPerOp float64 `json:"usecs_per_op"`
	MinUsecs   float64 `json:"min_usecs"`
	P90Usecs   float64 `json:"p90_usecs"`
	// OpsPerSec is 1e6 / UsecsPerOp (perf's "ops/sec").
	OpsPerSec float64 `json:"ops_per_sec"`

	// BatchUsecs is each batch's mean round-trip time in microseconds.
	BatchUsecs []float64 `json:"batch_usecs"`
}

// String formats the result on one line, in the spirit of perf bench sched
// pipe's summary.
func (r PipeResult) String() string {
	return fmt.Sprintf("pipe cpu%d<->cpu%d: %.3f usecs/op (min %.3f, p90 %.3f), %.0f ops/sec over %d×%d round trips",
		r.CPUA, r.CPUB, r.UsecsPerOp, r.MinUsecs, r.P90Usecs, r.OpsPerSec, r.Batches, r.Rounds)
}

// pipeFD is a descriptor closed at most once, by whichever of its owner
// goroutine or the final cleanup comes first.
type pipeFD struct {
	fd   int
	once sync.Once
}

func (p *pipeFD) close() { p.once.Do(func() { _ = unix.Close(p.fd) }) }

// PipeRoundTrip measures the wakeup round trip between host CPUs a and b the
// way `perf bench sched pipe` does: two goroutines, each locked to an OS
// thread pinned with PinCurrentThread, pass a 1-byte message back and forth
// through two kernel pipes; each side sleeps in read(2) until the other
// writes.
//
// The pipes are raw, blocking descriptors from unix.Pipe2 used with
// unix.Read and unix.Write, not os.File. An os.File pipe is switched to
// non-blocking mode and served by Go's netpoller: a reader would park its
// goroutine and be woken through epoll and the Go scheduler, which measures
// the runtime rather than the kernel's pipe wakeup of a sleeping thread. The
// calls still go through the runtime's syscall entry (Syscall, not
// RawSyscall), so a thread blocked in read releases its P and cannot stall a
// garbage-collection stop-the-world.
//
// rounds is the number of round trips per batch; after a warm-up batch of
// min(rounds, 1000) round trips, ProbeBatches batches are timed. All four
// descriptors are closed and both goroutines have exited when PipeRoundTrip
// returns. a == b is allowed: both threads share one CPU, as
// `taskset 1 perf bench sched pipe` does, and every wakeup is local. It
// returns an error if rounds <= 0 or a CPU is not allowed (wrapping
// ErrCPUNotAllowed).
func PipeRoundTrip(a, b int, rounds int) (PipeResult, error) {
	if rounds <= 0 {
		return PipeResult{}, fmt.Errorf("contention: PipeRoundTrip rounds must be positive, got %d", rounds)
	}
	if err := checkAllowed(a, b); err != nil {
		return PipeResult{}, err
	}

	var ab, ba [2]int // ab: a writes, b reads; ba: b writes, a reads
	if err := unix.Pipe2(ab[:], unix.O_CLOEXEC); err != nil {
		return PipeResult{}, fmt.Errorf("contention: pipe2: %w", err)
	}
	if err := unix.Pipe2(ba[:], unix.O_CLOEXEC); err != nil {
		_ = unix.Close(ab[0])
		_ = unix.Close(ab[1])
		return PipeResult{}, fmt.Errorf("contention: pipe2: %w", err)
	}
	// The read ends stay open until both goroutines are gone, so a write
	// never hits a closed reader (no EPIPE). Each write end is closed by its
	// writer when it finishes, so a peer blocked in read then sees EOF
	// instead of hanging; only its writer ever uses it, so the close cannot
	// race with a write on a recycled descriptor number.
	abR, abW := &pipeFD{fd: ab[0]}, &pipeFD{fd: ab[1]}
	baR, baW := &pipeFD{fd: ba[0]}, &pipeFD{fd: ba[1]}
	defer func() {
		for _, p := range []*pipeFD{abR, abW, baR, baW} {
			p.close()
		}
	}()

	warm := min(rounds, 1000)
	total := warm + ProbeBatches*rounds
	batchUs := make([]float64, ProbeBatches)
	var abort atomic.Bool

	initiator := func() error {
		defer abW.close()
		buf := []byte{'x'}
		var t0 time.Time
		for k := 0; k <= total; k++ {
			if k >= warm {
				if i := k - warm; i%rounds == 0 {
					now := time.Now()
					if i > 0 {
						batchUs[i/rounds-1] = float64(now.Sub(t0).Nanoseconds()) / 1e3 / float64(rounds)
					}
					t0 = now
				}
			}
			if k == total {
				break
			}
			if err := writeByte(abW.fd, buf); err != nil {
				return fmt.Errorf("contention: PipeRoundTrip cpu%d write: %w", a, err)
			}
			if err := readByte(baR.fd, buf); err != nil {
				return fmt.Errorf("contention: PipeRoundTrip cpu%d read: %w", a, err)
			}
		}
		return nil
	}
	responder := func() error {
		defer baW.close()
		buf := []byte{0}
		for range total {
			if err := readByte(abR.fd, buf); err != nil {
				return fmt.Errorf("contention: PipeRoundTrip cpu%d read: %w", b, err)
			}
			if err := writeByte(baW.fd, buf); err != nil {
				return fmt.Errorf("contention: PipeRoundTrip cpu%d write: %w", b, err)
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
		return PipeResult{}, err
	}
	for _, v := range batchUs {
		if !(v > 0) {
			return PipeResult{}, errors.New("contention: PipeRoundTrip measured a non-positive batch time")
		}
	}
	sp := summarize(batchUs)
	return PipeResult{
		CPUA: a, CPUB: b, Rounds: rounds, Batches: ProbeBatches,
		UsecsPerOp: sp.median, MinUsecs: sp.min, P90Usecs: sp.p90,
		OpsPerSec:  1e6 / sp.median,
		BatchUsecs: batchUs,
	}, nil
}

// errPeerClosed is returned when the other side's write end was closed
// because it failed; it wraps errProbeAborted so that runPinned reports the
// peer's own error instead.
var errPeerClosed = fmt.Errorf("peer closed its pipe: %w", errProbeAborted)

// readByte reads exactly one byte from a blocking fd, retrying on EINTR.
func readByte(fd int, buf []byte) error {
	for {
		n, err := unix.Read(fd, buf[:1])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n == 0:
			return errPeerClosed
		default:
			return nil
		}
	}
}

// writeByte writes exactly one byte to a blocking fd, retrying on EINTR.
func writeByte(fd int, buf []byte) error {
	for {
		n, err := unix.Write(fd, buf[:1])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return err
		case n != 1:
			return fmt.Errorf("short write (%d bytes)", n)
		default:
			return nil
		}
	}
}
