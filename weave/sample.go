package weave

import (
	"sync"
	"time"
)

// Physical sampling: 1 operation in N is timed on the host around its real
// atomic operations, so a run can print "host ns per access" beside the
// modeled target's ns. The countdown and the accumulators live in the
// calling CPU's Log (no shared state); the weave collects them into the
// Space's per-line and per-kind tables.
//
// A sample is one object operation (all the accesses it logs), timed with
// two monotonic clock reads (time.Now, a vDSO call). The clock's own cost,
// measured once at start-up as the fastest back-to-back pair, is subtracted
// when the tables are printed; it is still what limits the precision to a
// few ns per sample.

// hostSample accumulates the sampled operations on one line.
type hostSample struct {
	calls    int64 // sampled operations
	accesses int64 // accesses they logged
	ns       int64 // host ns they took, clock overhead included
}

func (h *hostSample) add(o hostSample) {
	h.calls += o.calls
	h.accesses += o.accesses
	h.ns += o.ns
}

// SetSampling times 1 operation in every (0 or less: sampling off) on the
// host. It must be called by the Log's goroutine or at set-up time.
func (l *Log) SetSampling(every int) {
	if every <= 0 {
		l.sampleEvery, l.sampleLeft = 0, 0
		return
	}
	if every > 1<<31 {
		every = 1 << 31
	}
	if uint32(every) != l.sampleEvery {
		l.sampleEvery, l.sampleLeft = uint32(every), uint32(every)
	}
}

// SampleDue reports whether the operation about to run is one to time.
func (l *Log) SampleDue() bool {
	if l.sampleEvery == 0 {
		return false
	}
	l.sampleLeft--
	if l.sampleLeft == 0 {
		l.sampleLeft = l.sampleEvery
		return true
	}
	return false
}

// Sampled adds one timed operation of accesses accesses, started at t0
// (from HostNow), to line's accumulator.
func (l *Log) Sampled(line LineID, accesses int, t0 int64) {
	ns := HostNow() - t0
	for int(line) >= len(l.samples) {
		l.samples = append(l.samples, hostSample{})
	}
	l.samples[line].add(hostSample{calls: 1, accesses: int64(accesses), ns: ns})
}

var clockBase = time.Now()

// HostNow is the host's monotonic clock in ns.
func HostNow() int64 { return int64(time.Since(clockBase)) }

var clockOverhead = sync.OnceValue(func() float64 {
	best := int64(1 << 62)
	for range 256 {
		t0 := HostNow()
		if d := HostNow() - t0; d < best {
			best = d
		}
	}
	return float64(best)
})

// SetSampling sets the Space's host sampling rate: 1 operation in every is
// timed (0: off). Logs made by Space.NewLog start with it, and the weave
// sets it on every Log it weaves, so a change applies from the next epoch.
// Set-up or barrier time only.
func (s *Space) SetSampling(every int) {
	if every < 0 {
		every = 0
	}
	s.sampleEvery = uint32(min(every, 1<<31))
}

// collectSamples moves a Log's host samples into the Space's tables.
func (s *Space) collectSamples(l *Log) {
	for id, h := range l.samples {
		if h.calls == 0 || id >= len(s.lineStats) {
			continue
		}
		s.lineStats[id].host.add(h)
	}
	clear(l.samples)
}

// HostNS is a sampled host figure: the mean host ns of one access, with
// the clock overhead taken off (never below 0), from Calls operations
// covering Accesses accesses.
type HostNS struct {
	Calls    int64
	Accesses int64
	NS       float64 // total host ns, clock overhead included
}

// PerAccess is the mean host ns per access, clock overhead excluded, or 0
// with no sample.
func (h HostNS) PerAccess() float64 {
	if h.Accesses == 0 {
		return 0
	}
	return max(0, (h.NS-float64(h.Calls)*clockOverhead())/float64(h.Accesses))
}

func (h hostSample) public() HostNS {
	return HostNS{Calls: h.calls, Accesses: h.accesses, NS: float64(h.ns)}
}
