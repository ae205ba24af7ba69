package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"runtime"
	"sync/atomic"

	"github.com/rqemu/rqemu/hwmodel"
)

// lockSpins is how many failed attempts SpinLock.Lock makes before it
// yields the host processor with runtime.Gosched.
const lockSpins = 64

// rqLine0 mirrors the head of struct rq (kernel/sched/sched.h), which is
// its line 0:
//
//	struct rq {
//		raw_spinlock_t	__lock;       // offset 0, 4 bytes
//		unsigned int	nr_running;   // offset 4
//		...
//
// lock is the qspinlock word: 0 when free, else the holding modeled CPU
// plus 1 (the kernel's word holds the locked byte and the MCS tail; here the
// holder, so an unlock by another CPU is caught).
type rqLine0 struct {
	lock      atomic.Uint32 // rq->__lock. Atomic: CAS by any CPU taking the lock, store by the holder.
	nrRunning atomic.Uint32 // rq->nr_running. Atomic: stored by the holder of lock, read racily by anyone.
}

// SpinLock is a runqueue's lock, rq->__lock, together with rq->nr_running,
// which shares its line (rq line 0, kernel-mechanisms.md 2): the line every
// CPU that takes the rq lock writes (the owner on every
// enqueue/dequeue/schedule, a remote waker on the direct ttwu path, load
// balancing in double_rq_lock()), and that idle_cpu() and load-balance
// statistics read remotely for nr_running.
//
// Kernel: core.c: raw_spin_rq_lock_nested() / raw_spin_rq_unlock(), a
// queued spinlock (MCS hand-over, first come first served); nr_running is
// written by sched.h: add_nr_running() / sub_nr_running() under the lock,
// and read by core.c: idle_cpu(), fair.c: update_sg_lb_stats().
//
// Physically the acquire is a CAS. Waiting is the weave's business: the
// replay serves Lock requests first come first served like the queued
// spinlock hand-over, so the host only needs mutual exclusion and never
// spins unboundedly: Lock spins lockSpins times, then yields the processor
// with runtime.Gosched, and tries again. Host critical sections are short:
// the emulator never blocks, sleeps or waits for another CPU goroutine
// while holding a SpinLock, and never holds one across an epoch barrier
// (the weave panics on a lock held at the end of an epoch).
//
// Modeled layout: one line (rq line 0). Host layout: the two words on a
// 128-byte aligned, 128-byte padded block, unless made by a Pack.
type SpinLock struct {
	h    *rqLine0     // hot words
	line weave.LineID // read-only after set-up
	name string       // read-only after set-up
	// lockOp and unlockOp are what acquire and release log: Lock and
	// Unlock, or RMW and Write for a packed lock (see Pack.SpinLock).
	// Read-only after set-up.
	lockOp, unlockOp hwmodel.Op
}

// NewSpinLock returns a free SpinLock with nr_running 0, for the rq of a CPU
// on NUMA node home.
func NewSpinLock(s *weave.Space, name string, home int) *SpinLock {
	return &SpinLock{h: alignedHot[rqLine0](), line: s.NewKindLine(name, home, weave.KindSpinLock), name: name,
		lockOp: hwmodel.Lock, unlockOp: hwmodel.Unlock}
}

// SpinLock returns a SpinLock packed with the Pack's other members. The
// replay knows one lock per modeled line, and the Pack's locks share one,
// so a packed lock logs its acquire as an RMW and its release as a Write:
// the line's traffic is priced, the wait for the lock itself is not.
func (p *Pack) SpinLock(name string) *SpinLock {
	return &SpinLock{h: packSlot[rqLine0](p), line: p.line(0, weave.KindSpinLock), name: name,
		lockOp: hwmodel.RMW, unlockOp: hwmodel.Write}
}

// Line is the lock's modeled line (rq line 0).
func (sl *SpinLock) Line() weave.LineID { return sl.line }

// Name is the name the lock was made with.
func (sl *SpinLock) Name() string { return sl.name }

// Lock takes the lock for CPU l.CPU(), logging a Lock (the weave prices the
// wait and the hand-over). It panics if that CPU already holds it.
func (sl *SpinLock) Lock(l *weave.Log, now int64, site weave.Site) {
	me := uint32(l.CPU()) + 1
	if sl.h.lock.Load() == me {
		panic(fmt.Sprintf("contention: SpinLock %q: CPU %d takes it again while holding it", sl.name, l.CPU()))
	}
	l.Record(now, sl.line, sl.lockOp, site)
	var t0 int64
	sample := l.SampleDue()
	if sample {
		t0 = weave.HostNow()
	}
	for spins := 0; ; spins++ {
		if sl.h.lock.Load() == 0 && sl.h.lock.CompareAndSwap(0, me) {
			break
		}
		if spins >= lockSpins {
			runtime.Gosched()
			spins = 0
		}
	}
	if sample {
		l.Sampled(sl.line, 1, t0)
	}
}

// TryLock makes one attempt to take the lock (raw_spin_rq_trylock()). On
// success it logs a Lock, which the caller must Unlock within the epoch;
// on failure an RMW (the failed cmpxchg still takes the line). Its outcome
// is physical, decided by the host race: a deterministic engine uses Lock.
func (sl *SpinLock) TryLock(l *weave.Log, now int64, site weave.Site) bool {
	me := uint32(l.CPU()) + 1
	if sl.h.lock.Load() == 0 && sl.h.lock.CompareAndSwap(0, me) {
		l.Record(now, sl.line, sl.lockOp, site)
		return true
	}
	l.Record(now, sl.line, hwmodel.RMW, site)
	return false
}

// Unlock releases the lock held by CPU l.CPU(), logging an Unlock. It panics
// if another CPU (or none) holds it.
func (sl *SpinLock) Unlock(l *weave.Log, now int64, site weave.Site) {
	me := uint32(l.CPU()) + 1
	if v := sl.h.lock.Load(); v != me {
		panic(fmt.Sprintf("contention: SpinLock %q: CPU %d unlocks it but %s", sl.name, l.CPU(), holderString(v)))
	}
	l.Record(now, sl.line, sl.unlockOp, site)
	sl.h.lock.Store(0)
}

func holderString(v uint32) string {
	if v == 0 {
		return "nobody holds it"
	}
	return fmt.Sprintf("CPU %d holds it", v-1)
}

// Holder is the CPU holding the lock, or -1, read without logging (for
// checks; racy unless the caller is the holder).
func (sl *SpinLock) Holder() int { return int(sl.h.lock.Load()) - 1 }

// NrRunning reads rq->nr_running racily, as a remote CPU does in
// idle_cpu() or load-balance statistics, logging a Read of the lock line.
func (sl *SpinLock) NrRunning(l *weave.Log, now int64, site weave.Site) uint32 {
	l.Record(now, sl.line, hwmodel.Read, site)
	return sl.h.nrRunning.Load()
}

// SetNrRunning stores rq->nr_running, as add_nr_running() /
// sub_nr_running() do under the rq lock, logging a Write. The calling CPU
// must hold the lock (it panics otherwise).
func (sl *SpinLock) SetNrRunning(l *weave.Log, now int64, site weave.Site, n uint32) {
	if v := sl.h.lock.Load(); v != uint32(l.CPU())+1 {
		panic(fmt.Sprintf("contention: SpinLock %q: CPU %d sets nr_running without the lock; %s", sl.name, l.CPU(), holderString(v)))
	}
	l.Record(now, sl.line, hwmodel.Write, site)
	sl.h.nrRunning.Store(n)
}

// NrRunningValue reads nr_running without logging, for checks.
func (sl *SpinLock) NrRunningValue() uint32 { return sl.h.nrRunning.Load() }
