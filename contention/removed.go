package contention

import (
	"github.com/rqemu/rqemu/weave"
	"runtime"
	"sync/atomic"

	"github.com/rqemu/rqemu/hwmodel"
)

// removedLine mirrors cfs_rq->removed (kernel/sched/sched.h), 32 bytes
// on a line of its own:
//
//	struct {
//		raw_spinlock_t	lock ____cacheline_aligned; // offset 0
//		int		nr;                          // offset 4
//		unsigned long	load_avg;                    // offset 8
//		unsigned long	util_avg;                    // offset 16
//		unsigned long	runnable_avg;                // offset 24
//	} removed;
type removedLine struct {
	lock     atomic.Uint32 // removed.lock. Atomic: CAS to take it (1 = held), store 0 to release.
	nr       atomic.Uint32 // Written under lock; atomic so that Pending may read it racily, as the kernel does.
	load     uint64        // Guarded by lock.
	util     uint64        // Guarded by lock.
	runnable uint64        // Guarded by lock.
}

// Removed is cfs_rq->removed, where a CPU that migrates a task away from
// this cfs_rq on wakeup leaves the task's load for the owner to subtract
// later: the write that wakeup migration makes to the previous CPU's
// memory (kernel-mechanisms.md 2, 11, 14.2).
//
// Kernel: fair.c: remove_entity_load_avg() (the remote waker, under
// removed.lock: ++nr and three += of the task's averages), and fair.c:
// update_cfs_rq_load_avg() (the owner: if removed.nr, swap the sums out
// under the lock and zero nr, then subtract them and later publish to
// tg->load_avg).
//
// Modeled layout: one line. Host layout: the 32 bytes on a 128-byte
// aligned, 128-byte padded block, unless made by a Pack. The lock is a
// plain test-and-set spinlock on the host (bounded spinning, then
// runtime.Gosched); the weave prices the wait.
type Removed struct {
	h    *removedLine // hot words
	line weave.LineID // read-only after set-up
	name string       // read-only after set-up
	// lockOp and unlockOp are what taking and releasing removed.lock log:
	// Lock and Unlock, or RMW and Write when packed (see Pack.SpinLock).
	// Read-only after set-up.
	lockOp, unlockOp hwmodel.Op
}

// NewRemoved returns the empty cfs_rq->removed of a CPU on NUMA node home.
func NewRemoved(s *weave.Space, name string, home int) *Removed {
	return &Removed{h: alignedHot[removedLine](), line: s.NewKindLine(name, home, weave.KindRemoved), name: name,
		lockOp: hwmodel.Lock, unlockOp: hwmodel.Unlock}
}

// Removed returns a Removed packed with the Pack's other members; its lock
// logs RMW and Write instead of Lock and Unlock, as Pack.SpinLock explains.
func (p *Pack) Removed(name string) *Removed {
	return &Removed{h: packSlot[removedLine](p), line: p.line(0, weave.KindRemoved), name: name,
		lockOp: hwmodel.RMW, unlockOp: hwmodel.Write}
}

// Line is the modeled line.
func (r *Removed) Line() weave.LineID { return r.line }

// Name is the name the object was made with.
func (r *Removed) Name() string { return r.name }

func (r *Removed) lock() {
	for spins := 0; ; spins++ {
		if r.h.lock.Load() == 0 && r.h.lock.CompareAndSwap(0, 1) {
			return
		}
		if spins >= lockSpins {
			runtime.Gosched()
			spins = 0
		}
	}
}

// Add leaves a migrating task's averages on this cfs_rq, as
// remove_entity_load_avg() does from the waker's CPU: it logs a Lock, four
// Writes (++nr and the three sums: plain stores on a line the lock already
// owns) and an Unlock.
func (r *Removed) Add(l *weave.Log, now int64, site weave.Site, load, util, runnable uint64) {
	l.Record(now, r.line, r.lockOp, site)
	for range 4 {
		l.Record(now, r.line, hwmodel.Write, site)
	}
	l.Record(now, r.line, r.unlockOp, site)
	var t0 int64
	sample := l.SampleDue()
	if sample {
		t0 = weave.HostNow()
	}
	r.lock()
	r.h.nr.Add(1)
	r.h.load += load
	r.h.util += util
	r.h.runnable += runnable
	r.h.lock.Store(0)
	if sample {
		l.Sampled(r.line, 6, t0)
	}
}

// Take empties the removed sums, as the owner's update_cfs_rq_load_avg()
// does under the lock (swap() of each sum, nr = 0), and returns what was
// there. It logs a Lock, four Writes and an Unlock whatever it finds, so
// that the log does not depend on the race with Add; the kernel's racy
// "if (cfs_rq->removed.nr)" test before it is Pending.
func (r *Removed) Take(l *weave.Log, now int64, site weave.Site) (nr, load, util, runnable uint64) {
	l.Record(now, r.line, r.lockOp, site)
	for range 4 {
		l.Record(now, r.line, hwmodel.Write, site)
	}
	l.Record(now, r.line, r.unlockOp, site)
	var t0 int64
	sample := l.SampleDue()
	if sample {
		t0 = weave.HostNow()
	}
	r.lock()
	nr, load, util, runnable = uint64(r.h.nr.Swap(0)), r.h.load, r.h.util, r.h.runnable
	r.h.load, r.h.util, r.h.runnable = 0, 0, 0
	r.h.lock.Store(0)
	if sample {
		l.Sampled(r.line, 6, t0)
	}
	return nr, load, util, runnable
}

// Pending reads removed.nr without the lock, as update_cfs_rq_load_avg()
// tests it, logging a Read. The answer is physical (racy).
func (r *Removed) Pending(l *weave.Log, now int64, site weave.Site) uint64 {
	l.Record(now, r.line, hwmodel.Read, site)
	return uint64(r.h.nr.Load())
}

// Values reads the sums under the lock without logging, for checks.
func (r *Removed) Values() (nr, load, util, runnable uint64) {
	r.lock()
	defer r.h.lock.Store(0)
	return uint64(r.h.nr.Load()), r.h.load, r.h.util, r.h.runnable
}
