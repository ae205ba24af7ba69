package contention

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// StreamMsgBytes is the message the stream probe writes and reads back:
// hackbench's -s default (DATASIZE 100), which perf bench sched messaging
// also sends.
const StreamMsgBytes = 100

// StreamResult is what one thread pays for a system call and for a
// message through a pipe and an AF_UNIX stream socket when nobody sleeps:
// the kernel's syscall entry and exit, and the pipe's and the socket's own
// paths, apart from any wakeup or context switch (the pipe round trip
// prices those). Each batch's mean is in ns.
type StreamResult struct {
	CPU     int `json:"cpu"`
	Rounds  int `json:"rounds"`  // operations per batch
	Batches int `json:"batches"` // measured batches (warm-up excluded)
	// SyscallNs is one getppid(2): the entry and exit with no work.
	SyscallNs []float64 `json:"syscall_ns"`
	// PipeMsgNs is one StreamMsgBytes write(2) into a pipe and its
	// read(2) back by the same thread (pipe_write() and pipe_read(); the
	// reader is never asleep, so no wakeup).
	PipeMsgNs []float64 `json:"pipe_msg_ns"`
	// UnixMsgNs is the same through a socketpair(AF_UNIX, SOCK_STREAM)
	// (unix_stream_sendmsg() and unix_stream_recvmsg()).
	UnixMsgNs []float64 `json:"unix_msg_ns"`
}

// StreamCosts measures, on one thread pinned to cpu, ProbeBatches batches
// of rounds getppid(2) calls, of rounds 100-byte messages written into a
// pipe and read back, and of the same through an AF_UNIX stream
// socketpair, after a warm-up of min(rounds, 1000) of each. The calls are
// raw system calls (unix.RawSyscall), as a C program's libc wrappers make
// them: no Go runtime entry and exit around them (they never block: the
// thread reads back what it wrote, so the buffer never fills). rounds must
// be positive and cpu allowed (ErrCPUNotAllowed).
func StreamCosts(cpu, rounds int) (StreamResult, error) {
	if rounds <= 0 {
		return StreamResult{}, fmt.Errorf("contention: StreamCosts rounds must be positive, got %d", rounds)
	}
	if err := checkAllowed(cpu); err != nil {
		return StreamResult{}, err
	}
	var pfd [2]int
	if err := unix.Pipe2(pfd[:], unix.O_CLOEXEC); err != nil {
		return StreamResult{}, fmt.Errorf("contention: pipe2: %w", err)
	}
	defer unix.Close(pfd[0])
	defer unix.Close(pfd[1])
	sfd, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return StreamResult{}, fmt.Errorf("contention: socketpair: %w", err)
	}
	defer unix.Close(sfd[0])
	defer unix.Close(sfd[1])

	res := StreamResult{CPU: cpu, Rounds: rounds, Batches: ProbeBatches,
		SyscallNs: make([]float64, ProbeBatches), PipeMsgNs: make([]float64, ProbeBatches), UnixMsgNs: make([]float64, ProbeBatches)}
	var abort atomic.Bool
	err = runPinned([]int{cpu}, &abort, nil, func(int) error {
		buf := make([]byte, StreamMsgBytes)
		for _, p := range []struct {
			out []float64
			op  func() error
		}{
			{res.SyscallNs, func() error { unix.Getppid(); return nil }},
			{res.PipeMsgNs, func() error { return roundTrip(pfd[1], pfd[0], buf) }},
			{res.UnixMsgNs, func() error { return roundTrip(sfd[1], sfd[0], buf) }},
		} {
			for range min(rounds, 1000) {
				if err := p.op(); err != nil {
					return err
				}
			}
			for b := range ProbeBatches {
				t0 := time.Now()
				for range rounds {
					if err := p.op(); err != nil {
						return err
					}
				}
				p.out[b] = float64(time.Since(t0).Nanoseconds()) / float64(rounds)
			}
		}
		return nil
	})
	if err != nil {
		return StreamResult{}, err
	}
	for _, s := range [][]float64{res.SyscallNs, res.PipeMsgNs, res.UnixMsgNs} {
		for _, v := range s {
			if !(v > 0) {
				return StreamResult{}, errors.New("contention: StreamCosts measured a non-positive batch time")
			}
		}
	}
	return res, nil
}

// roundTrip writes buf to w and reads it back from r with raw system
// calls, retrying on EINTR and short transfers.
func roundTrip(w, r int, buf []byte) error {
	for _, side := range []struct {
		fd, nr int
	}{{w, unix.SYS_WRITE}, {r, unix.SYS_READ}} {
		for done := 0; done < len(buf); {
			n, _, errno := unix.RawSyscall(uintptr(side.nr), uintptr(side.fd), uintptr(unsafe.Pointer(&buf[done])), uintptr(len(buf)-done))
			switch {
			case errno == unix.EINTR:
				continue
			case errno != 0:
				return fmt.Errorf("contention: StreamCosts: %w", errno)
			case n == 0:
				return errors.New("contention: StreamCosts: unexpected end of stream")
			}
			done += int(n)
		}
	}
	return nil
}
