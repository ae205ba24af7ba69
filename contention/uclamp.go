package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// UclampID is a clamp index: enum uclamp_id.
type UclampID int

const (
	UclampMin UclampID = 0 // UCLAMP_MIN
	UclampMax UclampID = 1 // UCLAMP_MAX
	UclampCnt          = 2 // UCLAMP_CNT
)

const (
	// SchedCapacityScale is SCHED_CAPACITY_SCALE, the largest clamp value.
	SchedCapacityScale = 1024
	// UclampBuckets is UCLAMP_BUCKETS (CONFIG_UCLAMP_BUCKETS_COUNT, 5 by
	// default).
	UclampBuckets = 5
	// UclampBucketDelta is UCLAMP_BUCKET_DELTA =
	// DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS) = 205.
	UclampBucketDelta = (SchedCapacityScale + UclampBuckets/2) / UclampBuckets
	// UclampFlagIdle is UCLAMP_FLAG_IDLE in rq->uclamp_flags.
	UclampFlagIdle = 0x01

	// uclampValueBits is bits_per(SCHED_CAPACITY_SCALE): the bucket's
	// value field; the other 53 bits count tasks.
	uclampValueBits = 11
	uclampValueMask = 1<<uclampValueBits - 1
)

// BucketID is core.c: uclamp_bucket_id(): min(v / UCLAMP_BUCKET_DELTA,
// UCLAMP_BUCKETS - 1).
func BucketID(v uint32) int { return min(int(v/UclampBucketDelta), UclampBuckets-1) }

// uclampBucket is struct uclamp_bucket { unsigned long value : 11; unsigned
// long tasks : 53; }: value in the low 11 bits, tasks above (x86-64 packs
// bit-fields from the low end).
type uclampBucket uint64

func (b uclampBucket) value() uint32 { return uint32(b & uclampValueMask) }
func (b uclampBucket) tasks() uint64 { return uint64(b) >> uclampValueBits }
func mkBucket(value uint32, tasks uint64) uclampBucket {
	return uclampBucket(tasks<<uclampValueBits | uint64(value)&uclampValueMask)
}

// uclampRQ is struct uclamp_rq { unsigned int value; struct uclamp_bucket
// bucket[UCLAMP_BUCKETS]; }: 48 bytes.
type uclampRQ struct {
	value  uint32
	_      uint32
	bucket [UclampBuckets]uclampBucket
}

// uclampLines mirrors the uclamp part of struct rq (kernel/sched/sched.h):
//
//	struct uclamp_rq	uclamp[UCLAMP_CNT] ____cacheline_aligned; // 96 bytes
//	unsigned int		uclamp_flags;                              // offset 96
//
// which spans two 64-byte lines: line A holds uclamp[MIN] (value and the
// five buckets), uclamp[MAX].value and uclamp[MAX].bucket[0]; line B
// holds uclamp[MAX].bucket[1..4] and uclamp_flags (kernel-mechanisms.md
// 5.1). Every field is guarded by the rq lock.
type uclampLines struct {
	rq    [UclampCnt]uclampRQ // rq->uclamp[]. Guarded by the rq lock.
	flags uint32              // rq->uclamp_flags. Guarded by the rq lock.
}

// The modeled line (0 = A, 1 = B) of each word, from its offset in
// uclampLines: the modeled layout is the Go layout, which is the kernel's.
var (
	uclampValueLine  [UclampCnt]uint8
	uclampBucketLine [UclampCnt][UclampBuckets]uint8
	uclampFlagsLine  uint8
)

func init() {
	var u uclampLines
	line := func(off uintptr) uint8 { return uint8(off / 64) }
	for id := range UclampCnt {
		rqOff := unsafe.Offsetof(u.rq) + uintptr(id)*unsafe.Sizeof(u.rq[0])
		uclampValueLine[id] = line(rqOff + unsafe.Offsetof(u.rq[0].value))
		for b := range UclampBuckets {
			uclampBucketLine[id][b] = line(rqOff + unsafe.Offsetof(u.rq[0].bucket) + uintptr(b)*unsafe.Sizeof(u.rq[0].bucket[0]))
		}
	}
	uclampFlagsLine = line(unsafe.Offsetof(u.flags))
	// LogIncTask relies on it: every MIN bucket on line A, the flags on B.
	for b := range UclampBuckets {
		if uclampBucketLine[UclampMin][b] != 0 || uclampFlagsLine != 1 {
			panic("contention: uclamp layout: the MIN buckets must be on line A and the flags on line B")
		}
	}
}

// UclampRQ is a runqueue's utilization-clamp accounting, rq->uclamp[] and
// rq->uclamp_flags, laid out exactly as the kernel lays them out over two
// cache lines (see uclampLines), so that a default task (min 0 → MIN bucket
// 0 on line A; max 1024 → MAX bucket 4 on line B) touches both lines on
// every enqueue and every dequeue (kernel-mechanisms.md 5, 14.9).
//
// Kernel: core.c: uclamp_rq_inc_id() / uclamp_rq_dec_id(), called from
// enqueue_task() / dequeue_task() under the rq lock when the sched_uclamp_used
// static key is on; uclamp_rq_max_value(), uclamp_idle_value(),
// uclamp_idle_reset(), uclamp_rq_inc() (clears UCLAMP_FLAG_IDLE).
//
// The words are plain memory guarded by the rq's SpinLock, which the caller
// holds (the owner on its own enqueues, a remote CPU on a direct wakeup or
// a load-balance attach). Each operation logs the modeled lines it touched,
// once per line in the order of first touch, as a Write if it stored to
// the line and a Read otherwise. Host layout: 128-byte aligned, so lines A
// and B are two host lines as well, with 128 bytes of padding around
// (unless made by a Pack).
type UclampRQ struct {
	h     *uclampLines    // hot words, guarded by the rq lock
	lines [2]weave.LineID // modeled lines A and B; read-only after set-up
	name  string          // read-only after set-up
}

// NewUclampRQ returns the idle uclamp state of a CPU's rq on NUMA node
// home: no task, both values 0, no flag.
func NewUclampRQ(s *weave.Space, name string, home int) *UclampRQ {
	return &UclampRQ{h: alignedHot[uclampLines](), name: name,
		lines: [2]weave.LineID{s.NewKindLine(name+".A", home, weave.KindUclamp), s.NewKindLine(name+".B", home, weave.KindUclamp)}}
}

// UclampRQ returns a UclampRQ packed with the Pack's other members (line A
// on the Pack's first line, line B on its second).
func (p *Pack) UclampRQ(name string) *UclampRQ {
	return &UclampRQ{h: packSlot[uclampLines](p), name: name,
		lines: [2]weave.LineID{p.line(0, weave.KindUclamp), p.line(1, weave.KindUclamp)}}
}

// Lines returns the modeled lines A and B.
func (u *UclampRQ) Lines() [2]weave.LineID { return u.lines }

// Name is the name the UclampRQ was made with.
func (u *UclampRQ) Name() string { return u.name }

// touches collects the lines an operation touched, in first-touch order.
type touches struct {
	n     int
	which [2]uint8
	write [2]bool
}

func (t *touches) mark(which uint8, write bool) {
	for i := range t.n {
		if t.which[i] == which {
			t.write[i] = t.write[i] || write
			return
		}
	}
	t.which[t.n], t.write[t.n] = which, write
	t.n++
}

// flush logs each touched line once: a load, and a store after it if the
// accounting wrote the line. Every field uclamp writes it has read first
// (bucket->tasks++, the max aggregation, the flags' test), so the load's
// miss stalls the CPU even where the store then retires into a store
// buffer (x86; weave's store buffer hides only the store).
func (t *touches) flush(l *weave.Log, now int64, site weave.Site, lines *[2]weave.LineID) {
	for i := range t.n {
		l.Record(now, lines[t.which[i]], hwmodel.Read, site)
		if t.write[i] {
			l.Record(now, lines[t.which[i]], hwmodel.Write, site)
		}
	}
}

func checkClamp(id UclampID, value uint32) {
	if id != UclampMin && id != UclampMax {
		panic(fmt.Sprintf("contention: uclamp id %d", id))
	}
	if value > SchedCapacityScale {
		panic(fmt.Sprintf("contention: uclamp value %d > %d", value, SchedCapacityScale))
	}
}

// Inc accounts a task with clamp value for id becoming runnable:
// core.c: uclamp_rq_inc_id(). For UclampMax it then clears
// UCLAMP_FLAG_IDLE, as uclamp_rq_inc() does after visiting both ids (MIN,
// then MAX): call Inc for MIN before MAX, or use IncTask.
func (u *UclampRQ) Inc(l *weave.Log, now int64, site weave.Site, id UclampID, value uint32) {
	checkClamp(id, value)
	u.update(l, now, site, func(t *touches) {
		u.inc(t, id, value)
		if id == UclampMax {
			u.clearIdle(t)
		}
	})
}

// IncTask is core.c: uclamp_rq_inc() for a task with clamps min and max:
// Inc for UCLAMP_MIN, Inc for UCLAMP_MAX, clear UCLAMP_FLAG_IDLE. Each line
// touched is logged once.
func (u *UclampRQ) IncTask(l *weave.Log, now int64, site weave.Site, minV, maxV uint32) {
	checkClamp(UclampMin, minV)
	checkClamp(UclampMax, maxV)
	u.update(l, now, site, func(t *touches) {
		u.inc(t, UclampMin, minV)
		u.inc(t, UclampMax, maxV)
		u.clearIdle(t)
	})
}

// LogIncTask logs, without touching the state, the accesses IncTask makes
// for a task with clamps minV and maxV, as far as they follow from the
// clamps: line A (the MIN bucket, read and written) and line B (read and
// written: the MAX bucket for a max clamp of 205 or more, else
// uclamp_idle_reset()'s clear of UCLAMP_FLAG_IDLE on an rq that was
// idle), in IncTask's order.
// For a CPU that does the increment under another rq's lock while the
// rq's owner applies the state change later (a direct remote wakeup): the
// owner's IncTask then logs nothing of its own for it. Simplified: a max
// clamp under 205 onto a busy rq only reads line B; it is logged as a
// write.
func (u *UclampRQ) LogIncTask(l *weave.Log, now int64, site weave.Site, minV, maxV uint32) {
	checkClamp(UclampMin, minV)
	checkClamp(UclampMax, maxV)
	for _, li := range u.lines {
		l.Record(now, li, hwmodel.Read, site)
		l.Record(now, li, hwmodel.Write, site)
	}
}

// update runs the accounting f, which marks the lines it touches, timing
// it on the host when the log's sample is due, then logs each touched
// line once.
func (u *UclampRQ) update(l *weave.Log, now int64, site weave.Site, f func(*touches)) {
	var t touches
	sample := l.SampleDue()
	t0 := int64(0)
	if sample {
		t0 = weave.HostNow()
	}
	f(&t)
	if sample {
		l.Sampled(u.lines[0], t.n, t0)
	}
	t.flush(l, now, site, &u.lines)
}

func (u *UclampRQ) inc(t *touches, id UclampID, value uint32) {
	h := u.h
	rq := &h.rq[id]
	b := BucketID(value)
	bk := rq.bucket[b]
	tasks := bk.tasks() + 1 // bucket->tasks++
	bval := bk.value()
	t.mark(uclampBucketLine[id][b], true)
	// uclamp_idle_reset(): reset the max-clamp retention on idle exit.
	t.mark(uclampFlagsLine, false)
	if h.flags&UclampFlagIdle != 0 {
		rq.value = value
		t.mark(uclampValueLine[id], true)
	}
	// Local max aggregation.
	if tasks == 1 || value > bval {
		bval = value
	}
	rq.bucket[b] = mkBucket(bval, tasks)
	t.mark(uclampValueLine[id], false)
	if value > rq.value {
		rq.value = value
		t.mark(uclampValueLine[id], true)
	}
}

func (u *UclampRQ) clearIdle(t *touches) {
	t.mark(uclampFlagsLine, false)
	if u.h.flags&UclampFlagIdle != 0 {
		u.h.flags &^= UclampFlagIdle
		t.mark(uclampFlagsLine, true)
	}
}

// Dec accounts a task with clamp value for id leaving the runqueue:
// core.c: uclamp_rq_dec_id(). When its bucket empties and held the rq's
// value (bucket value >= rq value), the rq value is recomputed as the
// value of the highest non-empty bucket, scanning buckets 4 → 0
// (uclamp_rq_max_value()); with none left, UCLAMP_MAX keeps the departing
// task's value and sets UCLAMP_FLAG_IDLE, UCLAMP_MIN returns to 0
// (uclamp_idle_value()). Dec panics if the bucket has no task (the kernel
// warns).
func (u *UclampRQ) Dec(l *weave.Log, now int64, site weave.Site, id UclampID, value uint32) {
	checkClamp(id, value)
	u.update(l, now, site, func(t *touches) { u.dec(t, id, value) })
}

// DecTask is core.c: uclamp_rq_dec(): Dec for UCLAMP_MIN then UCLAMP_MAX,
// each line touched logged once.
func (u *UclampRQ) DecTask(l *weave.Log, now int64, site weave.Site, minV, maxV uint32) {
	checkClamp(UclampMin, minV)
	checkClamp(UclampMax, maxV)
	u.update(l, now, site, func(t *touches) {
		u.dec(t, UclampMin, minV)
		u.dec(t, UclampMax, maxV)
	})
}

func (u *UclampRQ) dec(t *touches, id UclampID, value uint32) {
	h := u.h
	rq := &h.rq[id]
	b := BucketID(value)
	bk := rq.bucket[b]
	if bk.tasks() == 0 {
		panic(fmt.Sprintf("contention: UclampRQ %q: Dec of %s bucket %d (value %d) with no task", u.name, uclampIDName(id), b, value))
	}
	bk = mkBucket(bk.value(), bk.tasks()-1)
	rq.bucket[b] = bk
	t.mark(uclampBucketLine[id][b], true)
	if bk.tasks() != 0 {
		return
	}
	t.mark(uclampValueLine[id], false)
	if bk.value() < rq.value {
		return
	}
	// uclamp_rq_max_value(): the top-most bucket with tasks.
	v, found := uint32(0), false
	for i := UclampBuckets - 1; i >= 0; i-- {
		t.mark(uclampBucketLine[id][i], false)
		if rq.bucket[i].tasks() != 0 {
			v, found = rq.bucket[i].value(), true
			break
		}
	}
	if !found {
		// uclamp_idle_value()
		if id == UclampMax {
			h.flags |= UclampFlagIdle
			t.mark(uclampFlagsLine, true)
			v = value
		} else {
			v = 0 // uclamp_none(UCLAMP_MIN)
		}
	}
	rq.value = v // uclamp_rq_set()
	t.mark(uclampValueLine[id], true)
}

// Get reads rq->uclamp[id].value (uclamp_rq_get(), READ_ONCE), as the
// rq's consumers do (uclamp_rq_util_with(), uclamp_rq_is_capped()), logging
// a Read of line A. The caller is the rq's owner or holds its lock.
func (u *UclampRQ) Get(l *weave.Log, now int64, site weave.Site, id UclampID) uint32 {
	l.Record(now, u.lines[uclampValueLine[id]], hwmodel.Read, site)
	return u.h.rq[id].value
}

// Value reads rq->uclamp[id].value without logging. Like all the unlogged
// getters, the caller holds the rq lock or has synchronized otherwise.
func (u *UclampRQ) Value(id UclampID) uint32 { return u.h.rq[id].value }

// Tasks is the task count of bucket b of clamp id, unlogged.
func (u *UclampRQ) Tasks(id UclampID, b int) uint64 { return u.h.rq[id].bucket[b].tasks() }

// BucketValue is the value of bucket b of clamp id, unlogged.
func (u *UclampRQ) BucketValue(id UclampID, b int) uint32 { return u.h.rq[id].bucket[b].value() }

// Flags is rq->uclamp_flags, unlogged.
func (u *UclampRQ) Flags() uint32 { return u.h.flags }

func uclampIDName(id UclampID) string {
	if id == UclampMin {
		return "UCLAMP_MIN"
	}
	return "UCLAMP_MAX"
}
