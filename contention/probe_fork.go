package contention

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ForkResult is the outcome of a forked-child probe (ForkFaults): the
// cost of a copy-on-write fault after fork(), with the faulting mm loaded
// on no other CPU and with it running on another, and the exit and reap
// of a forked child. Each slice holds one sample per batch.
type ForkResult struct {
	CPU   int `json:"cpu"`
	Other int `json:"other"` // the other CPU; -1: none allowed (no remote figure)
	Pages int `json:"pages"` // pages written per batch
	// CoWUs is µs per copy-on-write fault, the mm loaded here only;
	// CoWRemoteUs the same with a thread of the mm running on Other.
	CoWUs       []float64 `json:"cow_us"`
	CoWRemoteUs []float64 `json:"cow_remote_us,omitempty"`
	// ExitUs is µs from the write that lets a blocked child exit to the
	// parent's wait4() returning, for a child holding Pages private
	// pages; ExitBaseUs the same for a child forked without them.
	ExitUs     []float64 `json:"exit_us"`
	ExitBaseUs []float64 `json:"exit_base_us"`
}

// ExitPerPageUs is the exit and reap's cost per private page a child
// holds: (median exit - median base exit) / pages.
func (r ForkResult) ExitPerPageUs() float64 {
	if r.Pages <= 0 {
		return 0
	}
	return (RobustOf(r.ExitUs).Median - RobustOf(r.ExitBaseUs).Median) / float64(r.Pages)
}

// ForkFaults measures what a forked child's fixed costs are made of, on
// host CPU cpu (other: a second allowed CPU, or -1). Each batch maps and
// fills pages private anonymous pages and forks a child that shares them
// (dup_mmap() -> copy_page_range() write-protects both copies). The
// child, pinned to cpu like its parent, writes one byte to each page:
// every write is a copy-on-write fault, do_user_addr_fault() ->
// handle_mm_fault() -> do_wp_page() -> wp_page_copy() (mm/memory.c,
// v6.6): allocate a page, copy 4 KiB, and ptep_clear_flush() ->
// flush_tlb_page() -> flush_tlb_mm_range() (arch/x86/mm/tlb.c), which
// flushes this CPU's TLB entry and, through native_flush_tlb_multi(),
// sends an IPI to every other CPU in mm_cpumask() that is not in lazy
// TLB mode (tlb_is_not_lazy()) and waits for its flush_tlb_func(). A
// single-threaded child's mm runs on no other CPU while it faults, so
// these are the local faults (CoWUs), as a tool's forked children take
// them. With other >= 0 a second child is forked and this (multi-threaded)
// process writes the pages itself while one of its threads spins on
// other, so every fault also pays the shootdown IPI (CoWRemoteUs). Each
// child then exits when told: do_exit() -> exit_mm() -> exit_mmap() tears
// down its copy of this process's mm, and the parent's wait4() reaps it
// (ExitUs, the child that wrote its pages); ExitBaseUs times a child
// forked without the pages, so the difference is their share
// (ExitPerPageUs). The first batch warms up and is not counted.
//
// The children are forked with raw clone(2) and run only raw system calls
// (forkChild), as syscall.forkAndExecInChild does before its exec: they
// never return to Go code, so a Go program can fork without exec.
func ForkFaults(cpu, other, pages, batches int) (ForkResult, error) {
	if pages < 1 || batches < 1 {
		return ForkResult{}, fmt.Errorf("fork faults: pages %d and batches %d must be positive", pages, batches)
	}
	res := ForkResult{CPU: cpu, Other: other, Pages: pages}
	cpus := []int{cpu}
	if other >= 0 {
		cpus = append(cpus, other)
	}
	var abort, spin, spinning atomic.Bool
	err := runPinned(cpus, &abort, nil, func(i int) error {
		if i == 1 {
			// The spinner: a thread of this mm running on other
			// while spin is set (loaded_mm there, not lazy).
			for !abort.Load() {
				if spin.Load() {
					spinning.Store(true)
					for spin.Load() && !abort.Load() {
					}
					spinning.Store(false)
				}
				time.Sleep(50 * time.Microsecond)
			}
			return nil
		}
		defer abort.Store(true) // stops the spinner
		spinOther := func() (func(), error) {
			spin.Store(true)
			for !spinning.Load() {
				if abort.Load() {
					return nil, errProbeAborted
				}
			}
			return func() { spin.Store(false) }, nil
		}
		for b := 0; b <= batches; b++ {
			local, exit, err := cowBatch(pages, nil)
			if err != nil {
				return err
			}
			var remote float64
			if other >= 0 {
				if remote, _, err = cowBatch(pages, spinOther); err != nil {
					return err
				}
			}
			base, err := exitBase()
			if err != nil {
				return err
			}
			if b > 0 {
				res.CoWUs = append(res.CoWUs, local)
				res.ExitUs = append(res.ExitUs, exit)
				res.ExitBaseUs = append(res.ExitBaseUs, base)
				if other >= 0 {
					res.CoWRemoteUs = append(res.CoWRemoteUs, remote)
				}
			}
		}
		return nil
	})
	if err != nil {
		return ForkResult{}, err
	}
	return res, nil
}

// cowBatch maps and fills pages pages and forks a child that shares them.
// Without spin, the child, told to go, writes one byte to each page and
// reports the time: its copy-on-write faults, µs per fault. With spin,
// this thread writes each page instead while spin's thread holds the mm
// on the other CPU. Whichever side writes second would find the page its
// own (do_wp_page() reuses it: no copy, no flush), hence one writer per
// child. Last it lets the child exit and times the exit and reap (µs).
func cowBatch(pages int, spin func() (stop func(), err error)) (perFault, exitUs float64, err error) {
	const page = 4096
	mem, err := unix.Mmap(-1, 0, pages*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, 0, fmt.Errorf("fork faults: mmap %d pages: %w", pages, err)
	}
	defer unix.Munmap(mem)
	// Best effort: a kernel without THP has nothing to refuse.
	_ = unix.Madvise(mem, unix.MADV_NOHUGEPAGE)
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	writes := pages
	if spin != nil {
		writes = 0
	}
	c, err := startChild(unsafe.Pointer(&mem[0]), writes)
	if err != nil {
		return 0, 0, err
	}
	defer c.kill()
	if perFault, err = c.faults(writes); err != nil {
		return 0, 0, err
	}
	if spin != nil {
		stop, err := spin()
		if err != nil {
			return 0, 0, err
		}
		t0 := time.Now()
		for i := 0; i < len(mem); i += page {
			mem[i] = 2
		}
		d := time.Since(t0)
		stop()
		perFault = float64(d.Nanoseconds()) / 1e3 / float64(pages)
	}
	exitUs, err = c.exit()
	return perFault, exitUs, err
}

// exitBase times the exit and reap of a child holding no probe pages.
func exitBase() (float64, error) {
	c, err := startChild(nil, 0)
	if err != nil {
		return 0, err
	}
	defer c.kill()
	if _, err := c.faults(0); err != nil {
		return 0, err
	}
	return c.exit()
}

// child is a forked child (forkChild) waiting on its control pipe.
type child struct {
	pid    int
	ctl    int // the control pipe's write end: each byte is a step
	res    int // the result pipe's read end
	reaped bool
}

// startChild forks a child that will write one byte to each of pages
// pages at mem (nil: none).
func startChild(mem unsafe.Pointer, pages int) (*child, error) {
	var ctl, res [2]int
	if err := unix.Pipe2(ctl[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("fork faults: pipe2: %w", err)
	}
	if err := unix.Pipe2(res[:], unix.O_CLOEXEC); err != nil {
		unix.Close(ctl[0])
		unix.Close(ctl[1])
		return nil, fmt.Errorf("fork faults: pipe2: %w", err)
	}
	pid, errno := forkChild(&childArgs{ctlR: ctl[0], ctlW: ctl[1], resR: res[0], resW: res[1], mem: mem, pages: pages})
	unix.Close(ctl[0])
	unix.Close(res[1])
	if errno != 0 {
		unix.Close(ctl[1])
		unix.Close(res[0])
		return nil, fmt.Errorf("fork faults: clone: %w", errno)
	}
	return &child{pid: pid, ctl: ctl[1], res: res[0]}, nil
}

// faults lets the child write its pages and returns its µs per fault (0
// for none).
func (c *child) faults(pages int) (float64, error) {
	if _, err := unix.Write(c.ctl, []byte{1}); err != nil {
		return 0, fmt.Errorf("fork faults: write to the child: %w", err)
	}
	var ts [2]unix.Timespec
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&ts[0])), unsafe.Sizeof(ts))
	for got := 0; got < len(buf); {
		n, err := unix.Read(c.res, buf[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0, fmt.Errorf("fork faults: the child reported %d of %d bytes: %v", got, len(buf), err)
		}
		got += n
	}
	d := ts[1].Nano() - ts[0].Nano()
	return float64(d) / 1e3 / float64(max(pages, 1)), nil
}

// exit lets the child exit and returns µs until wait4() has reaped it.
func (c *child) exit() (float64, error) {
	t0 := time.Now()
	_, werr := unix.Write(c.ctl, []byte{1})
	st, err := c.wait()
	d := time.Since(t0)
	switch {
	case err != nil:
		return 0, err
	case werr != nil:
		return 0, fmt.Errorf("fork faults: write to the child: %w", werr)
	case !st.Exited() || st.ExitStatus() != 0:
		return 0, fmt.Errorf("fork faults: the child ended with status %v", st)
	}
	return float64(d.Nanoseconds()) / 1e3, nil
}

func (c *child) wait() (unix.WaitStatus, error) {
	var st unix.WaitStatus
	for {
		_, err := unix.Wait4(c.pid, &st, 0, nil)
		if err == unix.EINTR {
			continue
		}
		c.reaped = true
		if err != nil {
			return st, fmt.Errorf("fork faults: wait4 %d: %w", c.pid, err)
		}
		return st, nil
	}
}

// kill ends and reaps a child that has not been reaped (an error path)
// and closes the pipes.
func (c *child) kill() {
	unix.Close(c.ctl) // EOF: the child exits
	unix.Close(c.res)
	if !c.reaped {
		_, _ = c.wait()
	}
}

// childArgs is what the forked child uses, set up before the fork.
type childArgs struct {
	ctlR, ctlW, resR, resW int
	mem                    unsafe.Pointer
	pages                  int
}

// forkChild forks with raw clone(2). The child closes the parent's pipe
// ends, waits for a byte on ctlR, writes one byte to each page at mem
// between two clock_gettime()s and writes both times to resW (so that a
// child with no pages has run and blocked too before it is told to exit),
// waits for another byte (or EOF) and exit_group(0)s. Between clone and exit it runs
// only raw system calls on its copy of this goroutine's stack (no
// allocation, no runtime call, no stack growth: nosplit, and RawSyscall is
// nosplit too), as syscall.forkAndExecInChild1 does before its exec. Every
// signal is blocked on this thread around the clone so that none reaches
// the child's copy of the Go runtime's handlers; the parent's mask is
// restored at once.
//
//go:norace
//go:nosplit
func forkChild(a *childArgs) (pid int, errno syscall.Errno) {
	all, old := ^uint64(0), uint64(0)
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK,
		uintptr(unsafe.Pointer(&all)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
		return 0, e
	}
	r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	if r1 != 0 || e != 0 {
		// The parent (or a failed clone): restore the mask.
		syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
		return int(r1), e
	}
	// The child. ts is written here first, so that its stack page's own
	// copy-on-write fault falls before the timed writes.
	var ts [4]int64
	ts[0], ts[3] = 1, 1
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(a.ctlW), 0, 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(a.resR), 0, 0)
	var b [1]byte
	syscall.RawSyscall(syscall.SYS_READ, uintptr(a.ctlR), uintptr(unsafe.Pointer(&b[0])), 1)
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts[0])), 0)
	for i := 0; i < a.pages; i++ {
		*(*byte)(unsafe.Add(a.mem, i*4096)) = 3
	}
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts[2])), 0)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(a.resW), uintptr(unsafe.Pointer(&ts[0])), 32)
	syscall.RawSyscall(syscall.SYS_READ, uintptr(a.ctlR), uintptr(unsafe.Pointer(&b[0])), 1)
	for {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
}
