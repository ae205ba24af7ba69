package contention

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func TestProbePadding(t *testing.T) {
	if got := unsafe.Sizeof(paddedCounter{}); got != hostLinePad {
		t.Errorf("sizeof(paddedCounter) = %d, want %d", got, hostLinePad)
	}
	if got := unsafe.Sizeof(isolatedLine{}); got != 2*hostLinePad {
		t.Errorf("sizeof(isolatedLine) = %d, want %d", got, 2*hostLinePad)
	}
	var l isolatedLine
	if got := unsafe.Offsetof(l.paddedCounter); got != hostLinePad {
		t.Errorf("offset of the hot word in isolatedLine = %d, want %d", got, hostLinePad)
	}
	if hostLinePad%64 != 0 || hostLinePad < 128 {
		t.Errorf("hostLinePad = %d, want a multiple of 64 and at least 128", hostLinePad)
	}
	cs := newPaddedCounters(3)
	if len(cs) != 3 {
		t.Fatalf("newPaddedCounters(3) has %d counters", len(cs))
	}
	// A guard element sits in front of the first counter.
	if cap(cs) != 3 {
		t.Errorf("cap = %d, want 3 (guard in front, none behind)", cap(cs))
	}
	for i := 1; i < len(cs); i++ {
		d := uintptr(unsafe.Pointer(&cs[i].v)) - uintptr(unsafe.Pointer(&cs[i-1].v))
		if d != hostLinePad {
			t.Errorf("counters %d and %d are %d bytes apart, want %d", i-1, i, d, hostLinePad)
		}
		// Distance 128 puts them in different aligned 128-byte blocks.
		if uintptr(unsafe.Pointer(&cs[i].v))/hostLinePad == uintptr(unsafe.Pointer(&cs[i-1].v))/hostLinePad {
			t.Errorf("counters %d and %d share a 128-byte block", i-1, i)
		}
	}
}

func TestProbeSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3, 7, 6})
	want := spread{min: 1, p10: 1.6, median: 4, p90: 6.4, max: 7}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.min, want.min) || !near(s.p10, want.p10) || !near(s.median, want.median) ||
		!near(s.p90, want.p90) || !near(s.max, want.max) {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
	one := summarize([]float64{3})
	if one.min != 3 || one.p10 != 3 || one.median != 3 || one.p90 != 3 || one.max != 3 {
		t.Errorf("summarize([3]) = %+v", one)
	}
	if got := quantile([]float64{1, 2}, 1); got != 2 {
		t.Errorf("quantile(.., 1) = %v, want 2", got)
	}
}

func TestProbeSpinnerTimeout(t *testing.T) {
	var abort atomic.Bool
	s := newSpinner(&abort)
	var err error
	for err == nil {
		err = s.spin(10 * time.Millisecond)
	}
	if !errors.Is(err, ErrProbeTimeout) {
		t.Errorf("spin = %v, want ErrProbeTimeout", err)
	}
	s.reset()
	abort.Store(true)
	for err = nil; err == nil; {
		err = s.spin(time.Hour)
	}
	if !errors.Is(err, errProbeAborted) {
		t.Errorf("spin after abort = %v, want errProbeAborted", err)
	}
}

// TestProbeRunPinnedAbort checks that one failing body stops a spinning
// peer and that the real error, not the peer's abort, is reported.
func TestProbeRunPinnedAbort(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	boom := errors.New("boom")
	var abort atomic.Bool
	var never atomic.Bool
	err := runPinned([]int{allowed[0], allowed[len(allowed)-1]}, &abort, nil, func(i int) error {
		if i == 1 {
			return boom
		}
		s := newSpinner(&abort)
		for !never.Load() {
			if err := s.spin(time.Minute); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("runPinned = %v, want boom", err)
	}
}

func TestProbeRunPinnedPinFailure(t *testing.T) {
	allowed := allowedOrSkip(t, 1)
	var abort atomic.Bool
	var ran, released atomic.Bool
	err := runPinned([]int{allowed[0], notAllowedCPU(allowed)}, &abort,
		func() { released.Store(true) },
		func(int) error { ran.Store(true); return nil })
	if !errors.Is(err, ErrCPUNotAllowed) {
		t.Errorf("runPinned = %v, want ErrCPUNotAllowed", err)
	}
	if ran.Load() || released.Load() {
		t.Errorf("body ran (%v) or release called (%v) after a pin failure", ran.Load(), released.Load())
	}
}

// checkNoLeak fails if the goroutine count does not return to before
// within a second (goroutines that called wg.Done may still be exiting).
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Errorf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func positiveFinite(vals ...float64) bool {
	for _, v := range vals {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func TestPingPong(t *testing.T) {
	cpus := allowedOrSkip(t, 2)
	rounds := 1000
	if testing.Short() {
		rounds = 200
	}
	before := runtime.NumGoroutine()
	r, err := PingPong(cpus[0], cpus[1], rounds)
	if err != nil {
		t.Fatalf("PingPong: %v", err)
	}
	checkNoLeak(t, before)
	t.Log(r)
	if r.CPUA != cpus[0] || r.CPUB != cpus[1] || r.Rounds != rounds || r.Batches != ProbeBatches || len(r.BatchNs) != ProbeBatches {
		t.Errorf("bad metadata: %+v", r)
	}
	if !positiveFinite(append([]float64{r.MedianNs, r.MinNs, r.P10Ns, r.P90Ns, r.MaxNs}, r.BatchNs...)...) {
		t.Errorf("non-positive or infinite latency: %+v", r)
	}
	if !(r.MinNs <= r.P10Ns && r.P10Ns <= r.MedianNs && r.MedianNs <= r.P90Ns && r.P90Ns <= r.MaxNs) {
		t.Errorf("statistics out of order: %+v", r)
	}
	checkJSONAndString(t, r, "pingpong")
}

func TestPingPongBadInput(t *testing.T) {
	cpus := allowedOrSkip(t, 1)
	bad := notAllowedCPU(cpus)
	for _, tc := range []struct {
		name      string
		a, b, n   int
		notAllowd bool
	}{
		{"same cpu", cpus[0], cpus[0], 10, false},
		{"zero rounds", cpus[0], bad, 0, false},
		{"negative rounds", cpus[0], bad, -5, false},
		{"cpu not allowed", cpus[0], bad, 10, true},
		{"negative cpu", -1, cpus[0], 10, true},
	} {
		_, err := PingPong(tc.a, tc.b, tc.n)
		if err == nil || errors.Is(err, ErrCPUNotAllowed) != tc.notAllowd {
			t.Errorf("%s: PingPong(%d, %d, %d) = %v", tc.name, tc.a, tc.b, tc.n, err)
		}
	}
}

func TestHammer(t *testing.T) {
	cpus := allowedOrSkip(t, 1)
	if len(cpus) > 4 {
		cpus = cpus[:4]
	}
	dur := 20 * time.Millisecond
	if testing.Short() {
		dur = 5 * time.Millisecond
	}
	sets := [][]int{{cpus[0]}, cpus, append(append([]int(nil), cpus...), cpus...)}
	for _, set := range sets {
		for _, shared := range []bool{true, false} {
			before := runtime.NumGoroutine()
			r, err := Hammer(set, shared, dur)
			if err != nil {
				t.Fatalf("Hammer(%v, %v): %v", set, shared, err)
			}
			checkNoLeak(t, before)
			t.Log(r)
			var sum uint64
			for i, w := range r.Writers {
				sum += w.Ops
				if w.CPU != set[i] || w.Ops == 0 || !positiveFinite(w.NsPerOp) || w.Elapsed <= 0 {
					t.Errorf("writer %d: %+v", i, w)
				}
			}
			if r.Counter != sum || r.TotalOps != sum {
				t.Errorf("counter %d, total %d, sum of writers %d: want all equal", r.Counter, r.TotalOps, sum)
			}
			if r.Shared != shared || len(r.Writers) != len(set) || r.Duration != dur || r.Elapsed <= 0 {
				t.Errorf("bad metadata: %+v", r)
			}
			if !positiveFinite(r.MopsPerSec, r.NsPerOp) {
				t.Errorf("non-positive or infinite rate: %+v", r)
			}
			checkJSONAndString(t, r, "hammer")
		}
	}
}

func TestHammerBadInput(t *testing.T) {
	cpus := allowedOrSkip(t, 1)
	if _, err := Hammer(nil, true, time.Millisecond); err == nil {
		t.Error("Hammer(nil) succeeded")
	}
	if _, err := Hammer(cpus[:1], false, 0); err == nil {
		t.Error("Hammer(dur=0) succeeded")
	}
	if _, err := Hammer([]int{cpus[0], notAllowedCPU(cpus)}, true, time.Millisecond); !errors.Is(err, ErrCPUNotAllowed) {
		t.Errorf("Hammer(not allowed) = %v, want ErrCPUNotAllowed", err)
	}
}

func TestPipeRoundTrip(t *testing.T) {
	cpus := allowedOrSkip(t, 2)
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	before := runtime.NumGoroutine()
	fdsBefore := openFDs(t)
	r, err := PipeRoundTrip(cpus[0], cpus[1], rounds)
	if err != nil {
		t.Fatalf("PipeRoundTrip: %v", err)
	}
	checkNoLeak(t, before)
	if fdsAfter := openFDs(t); fdsBefore >= 0 && fdsAfter > fdsBefore {
		t.Errorf("open fds: %d before, %d after", fdsBefore, fdsAfter)
	}
	t.Log(r)
	if r.CPUA != cpus[0] || r.CPUB != cpus[1] || r.Rounds != rounds || r.Batches != ProbeBatches || len(r.BatchUsecs) != ProbeBatches {
		t.Errorf("bad metadata: %+v", r)
	}
	if !positiveFinite(append([]float64{r.UsecsPerOp, r.MinUsecs, r.P90Usecs, r.OpsPerSec}, r.BatchUsecs...)...) {
		t.Errorf("non-positive or infinite result: %+v", r)
	}
	if !(r.MinUsecs <= r.UsecsPerOp && r.UsecsPerOp <= r.P90Usecs) {
		t.Errorf("statistics out of order: %+v", r)
	}
	checkJSONAndString(t, r, "usecs/op")
}

func TestPipeRoundTripBadInput(t *testing.T) {
	cpus := allowedOrSkip(t, 1)
	bad := notAllowedCPU(cpus)
	fdsBefore := openFDs(t)
	if r, err := PipeRoundTrip(cpus[0], cpus[0], 10); err != nil || !positiveFinite(r.UsecsPerOp) {
		t.Errorf("PipeRoundTrip(a == b) = %v, %v; want a one-CPU round trip", r, err)
	}
	if _, err := PipeRoundTrip(cpus[0], bad, 0); err == nil || errors.Is(err, ErrCPUNotAllowed) {
		t.Errorf("PipeRoundTrip(rounds=0) = %v", err)
	}
	if _, err := PipeRoundTrip(cpus[0], bad, 10); !errors.Is(err, ErrCPUNotAllowed) {
		t.Errorf("PipeRoundTrip(not allowed) = %v, want ErrCPUNotAllowed", err)
	}
	if fdsAfter := openFDs(t); fdsBefore >= 0 && fdsAfter > fdsBefore {
		t.Errorf("open fds: %d before, %d after", fdsBefore, fdsAfter)
	}
}

// openFDs counts this process's open descriptors, or returns -1 if
// /proc/self/fd cannot be read.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

func checkJSONAndString(t *testing.T, v interface{ String() string }, substr string) {
	t.Helper()
	if s := v.String(); !strings.Contains(s, substr) || strings.Contains(s, "%!") {
		t.Errorf("String() = %q, want it to contain %q", s, substr)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || len(m) == 0 {
		t.Errorf("JSON %s does not round-trip: %v", b, err)
	}
}

// TestPageFaults: the probe first-touches every page of each batch once
// and reports a positive median per fault over the counted batches (the
// warm-up batch excluded); bad sizes are refused.
func TestPageFaults(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	r, err := PageFaults(cpus[0], 256, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.BatchUs) != 3 || !(r.UsPerFault > 0) || r.Pages != 256 {
		t.Errorf("%s: %d batches %v, want 3 positive", r, len(r.BatchUs), r.BatchUs)
	}
	if _, err := PageFaults(cpus[0], 0, 3); err == nil {
		t.Error("PageFaults with 0 pages: no error")
	}
}
