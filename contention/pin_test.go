package contention

import (
	"errors"
	"slices"
	"testing"
)

// allowedOrSkip returns the allowed host CPUs, skipping the test if fewer
// than n are allowed.
func allowedOrSkip(tb testing.TB, n int) []int {
	tb.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		tb.Skipf("AllowedCPUs: %v", err)
	}
	if len(cpus) < n {
		tb.Skipf("need %d allowed CPUs, have %v", n, cpus)
	}
	return cpus
}

// notAllowedCPU returns the smallest non-negative CPU id outside allowed.
func notAllowedCPU(allowed []int) int {
	for c := 0; ; c++ {
		if !slices.Contains(allowed, c) {
			return c
		}
	}
}

// inFreshGoroutine runs f on a new goroutine and waits for it, so f may pin
// (the goroutine then exits locked and its thread is destroyed).
func inFreshGoroutine(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func TestPlanPinning(t *testing.T) {
	tests := []struct {
		name    string
		want    []int
		allowed []int
		out     []int
	}{
		{"identity", []int{0, 1}, []int{0, 1}, []int{0, 1}},
		{"identity subset", []int{3, 1}, []int{0, 1, 2, 3}, []int{3, 1}},
		{"identity repeat", []int{1, 1, 0}, []int{0, 1}, []int{1, 1, 0}},
		{"fold 4 on 2", []int{0, 1, 2, 3}, []int{0, 1}, []int{0, 1, 0, 1}},
		{"fold onto offset set", []int{0, 1, 2}, []int{4, 5}, []int{4, 5, 4}},
		{"fold uses sorted order", []int{0, 1, 2, 3}, []int{7, 2, 5}, []int{2, 5, 7, 2}},
		{"fold ignores duplicates", []int{0, 1, 2}, []int{1, 1, 0}, []int{0, 1, 0}},
		{"one outside forces fold", []int{0, 2}, []int{0, 1}, []int{0, 0}},
		{"negative slot", []int{-1}, []int{0, 1, 2}, []int{2}},
		{"single allowed", []int{0, 5, 9}, []int{3}, []int{3, 3, 3}},
		{"empty want", []int{}, []int{0, 1}, []int{}},
		{"nil want", nil, []int{0}, []int{}},
		{"empty allowed", []int{0, 1}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PlanPinning(tc.want, tc.allowed)
			if !slices.Equal(got, tc.out) || (got == nil) != (tc.out == nil) {
				t.Errorf("PlanPinning(%v, %v) = %#v, want %#v", tc.want, tc.allowed, got, tc.out)
			}
		})
	}
}

func TestPlanPinningLeavesInputsAlone(t *testing.T) {
	want := []int{3, 0, 2}
	allowed := []int{9, 1, 1, 4}
	PlanPinning(want, allowed)
	if !slices.Equal(want, []int{3, 0, 2}) || !slices.Equal(allowed, []int{9, 1, 1, 4}) {
		t.Errorf("inputs modified: want %v allowed %v", want, allowed)
	}
}

func TestPlanPinningOnHost(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	want := make([]int, 2*len(allowed)+1)
	for i := range want {
		want[i] = i
	}
	for i, c := range PlanPinning(want, allowed) {
		if !slices.Contains(allowed, c) {
			t.Errorf("slot %d mapped to %d, not in allowed %v", i, c, allowed)
		}
	}
}

func TestPinAllowedCPUs(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatalf("AllowedCPUs: %v", err)
	}
	if len(cpus) == 0 {
		t.Fatal("AllowedCPUs returned no CPUs")
	}
	if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) || cpus[0] < 0 {
		t.Errorf("AllowedCPUs = %v, want strictly ascending non-negative ids", cpus)
	}
}

func TestPinCurrentThread(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	if len(allowed) > 8 {
		allowed = allowed[:8]
	}
	for _, cpu := range allowed {
		var pinErr, affErr error
		var aff []int
		got := -2
		inFreshGoroutine(func() {
			if pinErr = PinCurrentThread(cpu); pinErr != nil {
				return
			}
			aff, affErr = AllowedCPUs()
			got = CurrentCPU()
			// A pinned thread only allows its CPU, so re-pinning elsewhere
			// is refused and leaves the pin in place.
			if len(allowed) > 1 {
				other := allowed[0]
				if other == cpu {
					other = allowed[1]
				}
				if err := PinCurrentThread(other); !errors.Is(err, ErrCPUNotAllowed) {
					t.Errorf("re-pinning %d -> %d = %v, want ErrCPUNotAllowed", cpu, other, err)
				}
				if again, _ := AllowedCPUs(); !slices.Equal(again, []int{cpu}) {
					t.Errorf("refused re-pin changed affinity to %v", again)
				}
			}
		})
		if pinErr != nil {
			t.Fatalf("PinCurrentThread(%d): %v", cpu, pinErr)
		}
		if affErr != nil || !slices.Equal(aff, []int{cpu}) {
			t.Errorf("after pinning to %d: affinity %v (err %v), want [%d]", cpu, aff, affErr, cpu)
		}
		// sched_setaffinity migrates the calling thread before returning,
		// so getcpu must already report the pinned CPU.
		if got != -1 && got != cpu {
			t.Errorf("pinned to %d, CurrentCPU() = %d", cpu, got)
		}
	}
}

func TestPinCurrentThreadNotAllowed(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	for _, cpu := range []int{-1, notAllowedCPU(allowed), cpuSetBits, 1 << 20} {
		var err error
		var aff []int
		inFreshGoroutine(func() {
			err = PinCurrentThread(cpu)
			aff, _ = AllowedCPUs()
		})
		if !errors.Is(err, ErrCPUNotAllowed) {
			t.Errorf("PinCurrentThread(%d) = %v, want ErrCPUNotAllowed", cpu, err)
		}
		if !slices.Equal(aff, allowed) {
			t.Errorf("failed PinCurrentThread(%d) changed affinity to %v, want %v", cpu, aff, allowed)
		}
	}
}

// TestPinningDoesNotLeak checks that pinned threads die with their
// goroutines: afterwards every goroutine still sees the full allowed set.
func TestPinningDoesNotLeak(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	for i := range 8 {
		inFreshGoroutine(func() {
			if err := PinCurrentThread(allowed[i%len(allowed)]); err != nil {
				t.Errorf("PinCurrentThread: %v", err)
			}
		})
	}
	results := make(chan []int, 32)
	for range cap(results) {
		go func() {
			cpus, _ := AllowedCPUs()
			results <- cpus
		}()
	}
	for range cap(results) {
		if got := <-results; !slices.Equal(got, allowed) {
			t.Fatalf("a goroutine sees affinity %v after pinned goroutines exited, want %v", got, allowed)
		}
	}
}

func TestPinCurrentCPU(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	got := CurrentCPU()
	if got == -1 {
		t.Skip("getcpu not supported")
	}
	if !slices.Contains(allowed, got) {
		t.Errorf("CurrentCPU() = %d, not in allowed set %v", got, allowed)
	}
}
