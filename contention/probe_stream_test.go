package contention

import (
	"errors"
	"slices"
	"testing"
)

// TestStreamCosts: on this host a message through a pipe or a socket costs
// more than one bare system call (it is two of them and the paths' work),
// every batch is positive, and the arguments are checked. The comparison
// is of each probe's fastest batch: the test runs beside other packages'
// (go test ./...), which can preempt any batch, and the fastest is the
// least disturbed.
func TestStreamCosts(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	r, err := StreamCosts(cpus[0], 2000)
	if err != nil {
		t.Fatal(err)
	}
	sys, pipe, sock := slices.Min(r.SyscallNs), slices.Min(r.PipeMsgNs), slices.Min(r.UnixMsgNs)
	t.Logf("cpu %d, fastest batches: getppid %.0f ns, pipe message %.0f ns, unix message %.0f ns", r.CPU, sys, pipe, sock)
	if len(r.SyscallNs) != ProbeBatches || len(r.PipeMsgNs) != ProbeBatches || len(r.UnixMsgNs) != ProbeBatches {
		t.Fatalf("batches: %d %d %d, want %d each", len(r.SyscallNs), len(r.PipeMsgNs), len(r.UnixMsgNs), ProbeBatches)
	}
	if !(pipe > sys) || !(sock > sys) {
		t.Errorf("a message (pipe %.0f, unix %.0f ns) is two system calls and more, yet one getppid is %.0f ns", pipe, sock, sys)
	}
	if _, err := StreamCosts(cpus[0], 0); err == nil {
		t.Error("rounds 0: no error")
	}
	if _, err := StreamCosts(1<<20, 10); !errors.Is(err, ErrCPUNotAllowed) {
		t.Errorf("CPU 1<<20: %v, want ErrCPUNotAllowed", err)
	}
}
