package weave

import (
	"fmt"
	"math"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// retryRates is Replayer.rate: a request reaches the line's home agent
// and hears back in the widest transfer class within the home's package
// (the mesh or ring of one LLC, or the IO die between CCXs), or in the
// remote class from another package.
func retryRates(m *hwmodel.Machine) [2]uint32 {
	present := m.ClassesPresent()
	local := m.Lat.Transfer[hwmodel.ClassLLC]
	for k := hwmodel.ClassSMT; k < hwmodel.ClassRemote; k++ {
		if present[k] {
			local = m.Lat.Transfer[k]
		}
	}
	remote := local
	if present[hwmodel.ClassRemote] {
		remote = m.Lat.Transfer[hwmodel.ClassRemote]
	}
	rate := func(ns float64) uint32 { return uint32(math.Round(1e6 / max(ns, 1))) }
	return [2]uint32{rate(local), rate(remote)}
}

// presentRate is how often, relative to the others, waiter w presents
// its miss to line's home while it waits (see serve): the inverse of its
// round trip to the home. The owner past its burst (serve takes a keeper
// first) presents nothing: the snoop of the request the home serves next
// takes its copy, so it waits behind the others.
func presentRate(w *waiter, line *hwmodel.Line) uint64 {
	if line.Owner() == int(w.cpu) {
		return 0
	}
	return uint64(w.rate)
}

// splitmix64 is the SplitMix64 finalizer: the serve's draw among waiters,
// a function of the line and the instant only, so a replay cut into calls
// at any instants draws the same.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

type waiter struct {
	cpu int32
	// rate is rp.rate for this CPU and the line's home: how often the
	// miss is re-presented while it waits (presentRate), fixed at arrival.
	rate   uint32
	arrive int64
	op     hwmodel.Op
	notify bool
	tag    int32
	out    int64 // the outRead id of an Indep read, or -1
	// spin: a Lock that found the lock held, whose tag has spin tags
	// (Replayer.SetLockSpin); head is when it became the first Lock
	// waiting (ps), -1 while another is ahead of it.
	spin bool
	head int64
	// held: a Lock that found the lock held, whose CPU spins reading
	// the lock's line until it is handed over (spinnerRead).
	held bool
	// store: a buffered store (replay_store.go), out its sbEntry id.
	store bool
	lvl   uint8 // pend.lvl
}

// replayLine is a line's queue and statistics: 192 bytes, three host
// cache lines (the runtime page-aligns a large slice), with what a
// request served at once reads and writes (the queue, the lock, its
// home, then st's Accesses, StallNS, BusyPS, Transfers, Ops[Read] and
// Ops[Write]) in the first two.
type replayLine struct {
	freeAt  int64 // ps: the line is busy with a transaction until then
	waiters []waiter
	holder  int32 // lock holder, or -1
	home    int32 // the Line's Home, which never changes
	// st is what happened to the line: in this call, or over every call
	// under KeepTotals. It lives here, beside the queue every request
	// reads anyway, rather than in ReplayResult.Lines (filled from it).
	st      LineCounts
	serveAt int64 // time of the pending evServe when pending
	pending bool
	touched bool // has stats in this call
	// lockedAt is when the holder's Lock completed (ps), while held:
	// past the first two host cache lines, read only by Lock and
	// Unlock.
	lockedAt int64
}

func (rp *Replayer) touch(li int32) *LineCounts {
	l := &rp.ls[li]
	if !l.touched && !rp.totals {
		l.touched = true
		rp.res.Touched = append(rp.res.Touched, li)
	}
	return &l.st
}

// hit counts a read hit on line li. A Replayer that keeps totals counts
// it in hits, a dense array, rather than in the line's record (which a
// hit does not otherwise read: a cache miss per access on the studies'
// machines, where most accesses are hits); Totals and Logged add them.
// (Small enough to inline: it runs for most requests.)
func (rp *Replayer) hit(li int32) {
	if rp.totals {
		rp.hits[li]++
		return
	}
	rp.hitRecord(li)
}

// hitRecord counts a read hit on line li in its record.
func (rp *Replayer) hitRecord(li int32) {
	st := rp.touch(li)
	st.Accesses++
	st.Ops[hwmodel.Read]++
}

// flushHits moves line li's hits into its record.
func (rp *Replayer) flushHits(li int) {
	st := &rp.ls[li].st
	st.Accesses += int(rp.hits[li])
	st.Ops[hwmodel.Read] += int(rp.hits[li])
	rp.hits[li] = 0
}

// schedule makes sure line li gets a serve event at time t.
func (rp *Replayer) schedule(li int, t int64) {
	l := &rp.ls[li]
	if l.pending && l.serveAt <= t {
		return
	}
	l.pending = true
	l.serveAt = t
	rp.push(mkEvent(t, evServe, int32(li)))
}

func (rp *Replayer) serve(li int, now int64) {
	l := &rp.ls[li]
	if !l.pending || now != l.serveAt {
		return // superseded by an earlier serve event
	}
	l.pending = false
	if len(l.waiters) == 0 {
		return
	}
	if now < l.freeAt {
		rp.schedule(li, l.freeAt)
		return
	}
	line := rp.lines[li]
	pick := -1
	owner := line.Owner()
	if at, due := rp.keeperDue(li, now); due {
		rp.schedule(li, at)
		return
	}
	keeper := int32(-1) // the owner while it Keeps the line
	if owner >= 0 && rp.m.Keeps(line, owner) {
		keeper = int32(owner)
	}
	held := l.holder != -1
	eligible := func(w *waiter) bool { return w.op != hwmodel.Lock || !held }
	var total uint64
	first := -1
	for i := range l.waiters {
		w := &l.waiters[i]
		if !eligible(w) {
			continue // a Lock is served only when the lock is free
		}
		if w.cpu == keeper {
			pick = i
			break
		}
		if first < 0 {
			first = i
		}
		total += presentRate(w, line)
	}
	switch {
	case pick >= 0:
	case first < 0:
		return // every waiter wants a held lock; the Unlock reschedules
	case total == 0:
		pick = first // only the owner waits
	default:
		// The free line goes to the first miss re-presented to the
		// home: each waiter with a chance in proportion to its
		// presentation rate, so the home's package wins it more often
		// than the far one (TestReplayHomeArbitration).
		x := splitmix64(uint64(now)^uint64(li)<<48) % total
		for i := range l.waiters {
			w := &l.waiters[i]
			if !eligible(w) {
				continue
			}
			r := presentRate(w, line)
			if x < r {
				pick = i
				break
			}
			x -= r
		}
		if l.waiters[pick].op == hwmodel.Lock {
			// A lock is handed over in its queue's order (the
			// qspinlock's MCS queue): the earliest locker.
			pick = l.earliestLock(false)
		}
	}
	w := l.waiters[pick]
	if n := len(l.waiters) - 1; pick == n {
		l.waiters = l.waiters[:n]
	} else {
		l.waiters = append(l.waiters[:pick], l.waiters[pick+1:]...)
	}
	if w.op == hwmodel.Lock {
		rp.nextHead(li, now)
	}
	rp.serveWaiter(li, w, now)
}

// nextHead makes the earliest Lock still waiting at line li, once the
// lock is handed over, the head of the lock's queue: a spinner that
// spins on the owner from now on (mutex_spin_on_owner(); behind it, on
// the osq). Its CPU's reports of the wait move to that tag.
func (rp *Replayer) nextHead(li int, now int64) {
	l := &rp.ls[li]
	for i := range l.waiters {
		// A Lock that queued while the lock was free (behind the
		// line's transaction) finds it taken now: its fast path's
		// cmpxchg fails and it spins reading the lock word from here
		// on (spinnerRead).
		if w := &l.waiters[i]; w.op == hwmodel.Lock {
			w.held = true
		}
	}
	h := l.earliestLock(false)
	if h < 0 || !l.waiters[h].spin || l.waiters[h].head >= 0 {
		return
	}
	w := &l.waiters[h]
	w.head = now
	if cpu := &rp.cpus[w.cpu]; cpu.waiting && cpu.blockedOn == -1 && int(cpu.waitLine) == li {
		cpu.headAt, cpu.queuedTag, cpu.waitTag = now, cpu.waitTag, rp.spin[w.tag].onOwner
	}
}

// lockBefore reports whether Lock a is ahead of Lock b in the lock's
// queue: the earlier arrival, then the lower CPU.
func lockBefore(a, b *waiter) bool {
	return a.arrive < b.arrive || a.arrive == b.arrive && a.cpu < b.cpu
}

// earliestLock is the index of the first Lock in the line's queue
// (lockBefore), of those that found the lock held if heldOnly, or -1 if
// none waits.
func (l *replayLine) earliestLock(heldOnly bool) int {
	h := -1
	for i := range l.waiters {
		if w := &l.waiters[i]; w.op == hwmodel.Lock && (w.held || !heldOnly) && (h < 0 || lockBefore(w, &l.waiters[h])) {
			h = i
		}
	}
	return h
}

// keeperDue reports whether line li, free at now, should wait for its
// owner's next request rather than be handed over, and until when. The
// burst effect needs the owner's next RMW to be ready when the line
// frees; a core issuing back to back is "ready" within one RMW latency
// (virtual time is integer ns, so logged gaps jitter by up to 1 ns).
func (rp *Replayer) keeperDue(li int, now int64) (int64, bool) {
	line := rp.lines[li]
	owner := line.Owner()
	if owner < 0 || owner >= len(rp.cpus) || !rp.m.Keeps(line, owner) {
		return 0, false
	}
	oc := &rp.cpus[owner]
	if oc.armed && oc.next < len(oc.reqs) && int(oc.reqs[oc.next].line) == li &&
		oc.nextAt > now && oc.nextAt <= now+rp.rmwPS+1000 {
		return oc.nextAt, true
	}
	return 0, false
}

// serveWaiter serves w, taken off line li's queue (or never queued: act
// serves a request that finds its line free and unqueued at once), at
// now: the line's state moves, the CPU is charged its stall and goes on.
func (rp *Replayer) serveWaiter(li int, w waiter, now int64) {
	l := &rp.ls[li]
	line := rp.lines[li]
	rp.npend--
	c := int(w.cpu)
	cpu := &rp.cpus[c]
	st := rp.touch(int32(li))
	st.Accesses++
	st.Ops[w.op]++
	spinPS := rp.spinnerRead(li, w)
	cost, costPS := rp.pr.Access(line, c, w.op)
	costPS += spinPS
	switch cost.Kind {
	case hwmodel.Transfer:
		st.Transfers[cost.Class]++
	case hwmodel.Invalidate:
		st.Invalidations += cost.Invalidated
	case hwmodel.Fill:
		st.Fills++
	}
	busy := costPS
	if w.op == hwmodel.RMW || w.op == hwmodel.Lock {
		busy += rp.rmwPS
	}
	if w.op == hwmodel.Read && (cost.Kind == hwmodel.Hit || cost.Kind == hwmodel.Transfer && cost.FromSharer) {
		// A hit, or a clean forward of a line already Shared: the line
		// is not being moved out of anyone's ownership, so concurrent
		// readers are served in parallel and only pay their own
		// latency, whatever the LLC's inclusion policy: an inclusive
		// LLC has its own copy, and a non-inclusive one keeps the lines
		// that several cores share (AMD documents it for its L3; the
		// hot read-mostly lines of the kernel would otherwise cost each
		// of 224 re-readers a serialized forward after every update,
		// which the ratelimited tg->load_avg on SPR does not show).
		busy = 0
	}
	l.freeAt = now + busy
	st.BusyPS += busy
	switch w.op {
	case hwmodel.Lock:
		if int(l.holder) == c {
			panic(fmt.Sprintf("weave: Replay: CPU %d takes lock line %d that it already holds", c, li))
		}
		l.holder, l.lockedAt = int32(c), now+costPS
	case hwmodel.Unlock:
		if int(l.holder) != c {
			panic(fmt.Sprintf("weave: Replay: CPU %d releases lock line %d held by %d", c, li, l.holder))
		}
		l.holder = -1
		st.HeldPS += now + costPS - l.lockedAt
		st.Releases++
	}
	finish := now + costPS
	if cost.Kind == hwmodel.Hit {
		// A store to a line the CPU owns, aged out of its L1: the
		// kernel's read-modify-write of a field waits for the refill
		// (not the line's transaction: it stays local).
		finish += rp.capPS[w.lvl]
	}
	if w.notify {
		rp.res.Notices = append(rp.res.Notices, Notice{CPU: int(w.cpu), T: psToNSUp(finish)})
	}
	switch {
	case w.store:
		rp.sbServed(c, w.out, finish)
	case w.out < 0:
		// The CPU's blocking request: the whole wait and the transfer
		// are its stall, less what accrue already reported; a spinning
		// Lock's wait up to now is its spin tag's (accrue charged the
		// part it reported there already).
		if w.spin {
			sp := rp.spin[w.tag]
			from := w.arrive + cpu.accrued // what accrue has not reported
			if w.head >= 0 && w.head > from {
				rp.charge(c, sp.queued, int32(li), min(w.head, now)-from)
				from = min(w.head, now)
			} else if w.head < 0 {
				rp.charge(c, sp.queued, int32(li), now-from)
				from = now
			}
			rp.charge(c, sp.onOwner, int32(li), now-from)
			cpu.accrued = now - w.arrive
		}
		rp.charge(c, w.tag, int32(li), finish-w.arrive-cpu.accrued)
		cpu.waiting, cpu.accrued = false, 0
		clearBit(rp.waitSet, c)
		cpu.doneAt = finish
		rp.resume(c, finish)
	default:
		// The CPU's reads in flight are numbered in issue order and
		// leave from the front, so this one is found by its number.
		live := cpu.out.live()
		if k := w.out - live[0].id; k >= 0 && k < int64(len(live)) && live[k].id == w.out {
			live[k].finish = finish
		} else {
			panic(fmt.Sprintf("weave: Replay: CPU %d's read %d served but not in flight", c, w.out))
		}
		if cpu.waiting && cpu.blockedOn == w.out {
			// The CPU stalled on this read: it resumes when the
			// data arrives.
			rp.charge(c, w.tag, int32(li), finish-cpu.waitSince-cpu.accrued)
			cpu.waiting, cpu.accrued, cpu.blockedOn = false, 0, -1
			clearBit(rp.waitSet, c)
			cpu.out.pop()
			cpu.doneAt = finish
			rp.resume(c, finish)
		}
	}
	if len(l.waiters) > 0 {
		rp.schedule(li, l.freeAt)
	}
}

// spinnerRead is what a lock's spinning waiter reads of its line, which
// the streams do not log. A waiter spins reading the lock word until it
// sees it released: qspinlock's pending waiter and the head of its MCS
// queue read lock->val (kernel/locking/qspinlock.c v6.6:
// queued_spin_lock_slowpath()'s atomic_cond_read_acquire()), a mutex's
// optimistic spinner reads lock->owner (kernel/locking/mutex.c v6.6:
// mutex_spin_on_owner(), __mutex_trylock_or_owner()); the waiters behind
// the head spin on their own MCS node. So the head holds a copy of the
// line while it waits:
//
//   - the holder's release (queued_spin_unlock()'s store of the locked
//     byte, __mutex_unlock_fast()'s cmpxchg of owner) finds the line
//     Shared and invalidates the head's copy, instead of hitting a line
//     it owns;
//   - the head, handed the lock, first reads the released word (a
//     transfer from the releaser), then takes it with its atomic (an
//     upgrade that invalidates the releaser's copy): two transactions
//     where a Lock of a free line is one. This returns the read's price
//     (ps), which serveWaiter adds to the Lock's.
//
// Simplified: only the release is priced as a store to a line the head
// shares (the holder's other stores to it, a pipe's wait-queue spinlocks
// on its mutex's line, come back to back, faster than the spinner's
// re-read); the waiters' own RMWs of the line as they arrive (a failed
// fast-path cmpxchg, the pending bit, osq_lock()'s or the MCS tail's
// xchg) and the MCS handover's store to the next waiter's node are not
// priced; the spinner's reads move the line's state and count as its
// transfers, not as accesses. A Lock is held (spins) from its arrival if
// the lock was taken then, or else from the handover that another Lock
// took ahead of it (nextHead).
func (rp *Replayer) spinnerRead(li int, w waiter) int64 {
	l := &rp.ls[li]
	line := rp.lines[li]
	reader := int32(-1)
	switch {
	case w.op == hwmodel.Lock && w.held:
		reader = w.cpu
	case w.op == hwmodel.Unlock && l.holder == w.cpu:
		// The queue's head (serve hands the lock over in that order).
		if h := l.earliestLock(true); h >= 0 {
			reader = l.waiters[h].cpu
		}
	}
	if reader < 0 || line.Holds(int(reader)) {
		return 0
	}
	cost, ps := rp.pr.Access(line, int(reader), hwmodel.Read)
	if cost.Kind == hwmodel.Transfer {
		l.st.Transfers[cost.Class]++
	}
	if reader != w.cpu {
		return 0 // the spinner's read, during its own wait
	}
	return ps
}

// checkDone panics if requests wait with no event left to serve them.
func (rp *Replayer) checkDone() {
	if rp.npend == 0 {
		return // every request served: no CPU waits or holds one back
	}
	var stuck []string
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		if cpu.waiting || cpu.next < len(cpu.reqs) || cpu.sb.unserved() {
			stuck = append(stuck, fmt.Sprintf("CPU %d waits on line %d (lock held by CPU %d)", c, cpu.waitLine, rp.ls[cpu.waitLine].holder))
		}
	}
	if len(stuck) > 0 {
		panic("weave: Replay: requests never served (a lock taken and not released in the streams): " + strings.Join(stuck, "; "))
	}
}
