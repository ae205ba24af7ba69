package contention

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrCPUNotAllowed is returned (wrapped) when a host CPU is not in the
// calling thread's allowed set (sched_getaffinity), for example because a
// container cpuset or taskset excludes it, or because it does not exist.
var ErrCPUNotAllowed = errors.New("contention: host CPU not in the allowed set")

// cpuSetBits is the number of CPU ids a unix.CPUSet can represent (1024).
const cpuSetBits = int(unsafe.Sizeof(unix.CPUSet{})) * 8

// AllowedCPUs returns the calling thread's allowed host CPU set, as reported
// by sched_getaffinity(0), in ascending order.
//
// On an ordinary (unpinned) goroutine the thread's set is the process's set,
// i.e. what the container cpuset and any taskset allow.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("contention: sched_getaffinity: %w", err)
	}
	cpus := make([]int, 0, set.Count())
	for c := 0; c < cpuSetBits; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// PinCurrentThread locks the calling goroutine to its OS thread
// (runtime.LockOSThread) and then restricts that thread to the single host
// CPU hostCPU with sched_setaffinity(0).
//
// IT NEVER UNLOCKS THE THREAD ON SUCCESS, and the caller must not call
// runtime.UnlockOSThread either. The pinned goroutine must simply exit while
// still locked: per `go doc runtime.LockOSThread`, "If the calling goroutine
// exits without unlocking the thread, the thread will be terminated." That is
// what keeps the narrowed affinity from leaking into Go's thread pool, where
// an unrelated goroutine could later run stuck on one CPU. So call it only on
// a goroutine you start for the purpose and that returns when the work is
// done; never on a long-lived or shared goroutine (main, a test goroutine
// that keeps running other code, a worker pool).
//
// If hostCPU is not in the thread's current allowed set, or the kernel
// rejects it (EINVAL: offline or outside the cgroup cpuset), the returned
// error wraps ErrCPUNotAllowed. Because the check uses the thread's own set,
// a thread that is already pinned cannot be re-pinned to another CPU; start
// a new goroutine instead. On any error the affinity was not changed, so the
// lock taken by this call is released again before returning.
func PinCurrentThread(hostCPU int) error {
	runtime.LockOSThread()
	// From here on this goroutine stays on this thread, so the affinity
	// calls below (pid 0 = the calling thread) act on the thread we keep.
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("contention: sched_getaffinity: %w", err)
	}
	if hostCPU < 0 || hostCPU >= cpuSetBits || !set.IsSet(hostCPU) {
		runtime.UnlockOSThread()
		return fmt.Errorf("%w: cpu %d (allowed %d CPUs)", ErrCPUNotAllowed, hostCPU, set.Count())
	}
	set.Zero()
	set.Set(hostCPU)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		runtime.UnlockOSThread()
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("%w: cpu %d: sched_setaffinity: %w", ErrCPUNotAllowed, hostCPU, err)
		}
		return fmt.Errorf("contention: sched_setaffinity(cpu %d): %w", hostCPU, err)
	}
	return nil
}

// PlanPinning maps wanted logical CPU slots onto allowed host CPUs and
// returns one host CPU per entry of want.
//
// If every wanted slot is itself an allowed CPU the mapping is the identity.
// Otherwise slot w goes to the (w mod len(allowed))-th allowed CPU in
// ascending order, so a plan for a big modeled machine folds cleanly onto a
// small host (the 2-CPU CI machine): slots 0,1,2,3 on CPUs {0,1} become
// 0,1,0,1, and a given slot always lands on the same host CPU.
//
// allowed is not modified; duplicates in it are ignored. PlanPinning returns
// nil if allowed is empty and an empty slice if want is empty.
func PlanPinning(want []int, allowed []int) []int {
	if len(allowed) == 0 {
		return nil
	}
	set := slices.Clone(allowed)
	slices.Sort(set)
	set = slices.Compact(set)

	out := make([]int, len(want))
	identity := true
	for _, w := range want {
		if _, ok := slices.BinarySearch(set, w); !ok {
			identity = false
			break
		}
	}
	n := len(set)
	for i, w := range want {
		if identity {
			out[i] = w
			continue
		}
		out[i] = set[((w%n)+n)%n]
	}
	return out
}

// CurrentCPU returns the host CPU the calling thread is running on, from the
// getcpu(2) system call (x/sys has no wrapper, so it is issued raw with
// unix.SYS_GETCPU), or -1 if the call fails. Unless the thread is pinned the
// answer may be stale by the time it is used.
func CurrentCPU() int {
	var cpu uint32
	_, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0)
	if errno != 0 {
		return -1
	}
	return int(cpu)
}

// checkAllowed reports an error wrapping ErrCPUNotAllowed if any of cpus is
// outside the calling thread's allowed set.
func checkAllowed(cpus ...int) error {
	allowed, err := AllowedCPUs()
	if err != nil {
		return err
	}
	for _, c := range cpus {
		if _, ok := slices.BinarySearch(allowed, c); !ok {
			return fmt.Errorf("%w: cpu %d (allowed %v)", ErrCPUNotAllowed, c, allowed)
		}
	}
	return nil
}
