package weave

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
)

// Entry is one logged access to a modeled shared line: 16 bytes.
type Entry struct {
	T    int64      // virtual ns at which the CPU issued the access
	Line LineID     // the line
	Op   hwmodel.Op // Read, Write, RMW, Lock or Unlock
	// Flags: EntryIndep, an independent load (Req.Indep),
	// recorded while the Log was in independent mode; EntryNotify, the
	// weave reports when the replay finished serving it
	// (WeaveResult.Notices), set by MarkNotify; EntryLocked, a Write or
	// Unlock that is a locked instruction (Req.Locked), set by
	// MarkLocked. (One byte: an Entry is 16 bytes.)
	Flags EntryFlags
	Site  Site // the calling site charged for its stall
}

// EntryFlags are an Entry's flags.
type EntryFlags uint8

const (
	EntryIndep EntryFlags = 1 << iota
	EntryNotify
	EntryLocked
)

// Indep reports whether e is an independent load.
func (e Entry) Indep() bool { return e.Flags&EntryIndep != 0 }

// Notify reports whether the weave reports e's completion.
func (e Entry) Notify() bool { return e.Flags&EntryNotify != 0 }

// Locked reports whether e is a locked instruction: an RMW or Lock, or a
// Write or Unlock marked by MarkLocked.
func (e Entry) Locked() bool {
	return e.Op == hwmodel.RMW || e.Op == hwmodel.Lock || e.Flags&EntryLocked != 0
}

// HostLinePad is the padding unit for host-side isolation: 128 bytes, the
// pair of 64-byte lines the adjacent-line prefetcher fetches together
// (contention's objects pad their hot words by it too).
const HostLinePad = 128

// Log is one modeled CPU's record of its accesses to shared lines during
// an epoch, in issue order. Every object operation appends to the calling
// CPU's Log; at the barrier Space.Weave prices the logs and resets them.
//
// A Log belongs to the goroutine that runs its CPU: only that goroutine
// calls Record (directly or through the objects) between barriers, and the
// weave reads it only at a barrier. It is padded so that two CPUs' Logs
// never share a host line.
type Log struct {
	_ [HostLinePad]byte

	// cpu is the modeled CPU. Read-only after NewLog.
	cpu int
	// entries are this epoch's accesses. Owned by CPU cpu's goroutine.
	entries []Entry
	// last is the time of the latest entry ever recorded (it survives
	// Reset: virtual time never goes back). Owned by CPU cpu's goroutine.
	last int64
	// indep: reads recorded now are independent loads (SetIndependent).
	// Owned by CPU cpu's goroutine.
	indep bool
	// foot is the bytes of traffic the CPU has moved through its caches
	// so far (Touch); footBase its value at the last Reset, and marks
	// where it grew among this epoch's entries. Owned by CPU cpu's
	// goroutine.
	foot, footBase int64
	marks          []footMark

	// Host-time sampling (sample.go). Owned by CPU cpu's goroutine.
	sampleEvery uint32
	sampleLeft  uint32
	samples     []hostSample // by LineID

	_ [HostLinePad]byte
}

// NewLog returns an empty Log for modeled CPU cpu, with host sampling off.
func NewLog(cpu int) *Log {
	if cpu < 0 {
		panic(fmt.Sprintf("weave: NewLog: CPU %d", cpu))
	}
	return &Log{cpu: cpu, last: -1 << 63}
}

// CPU is the modeled CPU the Log belongs to.
func (l *Log) CPU() int { return l.cpu }

// Record appends an access: CPU l.CPU() issues op on line at virtual time
// now, on behalf of site. Times must not decrease along a Log (across
// Resets too); Record panics if now is before the previous entry's time.
//
// Accesses logged at the same instant are issued one after the other: the
// weave starts each access when the CPU's previous one has retired on its
// uncontended timeline, so the CPU's own RMW latency is never counted as
// stall (Space.Weave).
func (l *Log) Record(now int64, line LineID, op hwmodel.Op, site Site) {
	if now < l.last {
		panic(fmt.Sprintf("weave: Log of CPU %d: entry {line %d, %v, site %d} at t=%d is before the previous entry at t=%d",
			l.cpu, line, op, site, now, l.last))
	}
	l.last = now
	var f EntryFlags
	if l.indep && op == hwmodel.Read {
		f = EntryIndep
	}
	l.entries = append(l.entries, Entry{T: now, Line: line, Op: op, Flags: f, Site: site})
}

// Append records entry e again at time t (its line, op, site,
// independence and Locked mark, whatever the Log's mode): for accesses
// first logged on a scratch Log, which are never marked for a notice
// (MarkNotify's callers do not mark scratch entries: a notice names the
// Log's CPU). It panics as Record does.
func (l *Log) Append(t int64, e Entry) {
	was := l.indep
	l.indep = e.Indep()
	l.Record(t, e.Line, e.Op, e.Site)
	l.indep = was
	l.entries[len(l.entries)-1].Flags |= e.Flags & EntryLocked
}

// SetIndependent switches independent mode on or off and returns the
// previous mode. In independent mode every Read recorded is an independent
// load: the code issuing it does not depend on earlier loads' values for
// its address, as in a loop over other CPUs' runqueues, so an out-of-order
// core overlaps the misses (Req.Indep). Other ops are never
// independent.
func (l *Log) SetIndependent(on bool) bool {
	was := l.indep
	l.indep = on
	return was
}

// MarkNotify asks the weave for the completion time of the last entry
// recorded (WeaveResult.Notices): the end of a critical section whose
// effect another CPU must not see before it. It panics on an empty Log.
func (l *Log) MarkNotify() {
	if len(l.entries) == 0 {
		panic(fmt.Sprintf("weave: Log of CPU %d: MarkNotify with no entry", l.cpu))
	}
	l.entries[len(l.entries)-1].Flags |= EntryNotify
}

// MarkLocked marks the last entry recorded, a Write or Unlock, as a
// locked instruction (lock cmpxchg, xchg: mutex_unlock()'s
// atomic_long_try_cmpxchg_release()): it drains the CPU's store buffer, as
// an RMW does, rather than entering it (Req.Locked). It panics on an empty
// Log or on another op (RMW and Lock are locked already, a Read is not a
// store).
func (l *Log) MarkLocked() {
	if len(l.entries) == 0 {
		panic(fmt.Sprintf("weave: Log of CPU %d: MarkLocked with no entry", l.cpu))
	}
	e := &l.entries[len(l.entries)-1]
	if e.Op != hwmodel.Write && e.Op != hwmodel.Unlock {
		panic(fmt.Sprintf("weave: Log of CPU %d: MarkLocked on a %v", l.cpu, e.Op))
	}
	e.Flags |= EntryLocked
}

// footMark: entries from index at on were recorded after the CPU's
// traffic reached foot bytes.
type footMark struct {
	at   int
	foot int64
}

// Touch records that the CPU moved n bytes of data through its caches
// (a payload copy: its source and destination), which ages the lines it
// holds out of its private caches (hwmodel.Capacity): the weave prices
// its next touch of a line by the bytes moved since its last one.
func (l *Log) Touch(n int64) {
	if n <= 0 {
		return
	}
	l.foot += n
	if k := len(l.marks) - 1; k >= 0 && l.marks[k].at == len(l.entries) {
		l.marks[k].foot = l.foot
		return
	}
	l.marks = append(l.marks, footMark{at: len(l.entries), foot: l.foot})
}

// Footprint is the bytes the CPU has moved so far (Touch).
func (l *Log) Footprint() int64 { return l.foot }

// Len is the number of entries since the last Reset.
func (l *Log) Len() int { return len(l.entries) }

// Entries returns the entries since the last Reset. The slice is the
// Log's own: read it, do not keep it past the next Record or Reset.
func (l *Log) Entries() []Entry { return l.entries }

// Last is the time of the latest entry recorded, or math.MinInt64.
func (l *Log) Last() int64 { return l.last }

// Reset empties the Log, keeping its capacity and its last time. The weave
// calls it; host samples are kept until a weave collects them.
func (l *Log) Reset() {
	l.entries = l.entries[:0]
	l.marks = l.marks[:0]
	l.footBase = l.foot
}
