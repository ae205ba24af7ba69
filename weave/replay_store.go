package weave

import "github.com/rqemu/rqemu/hwmodel"

// The store buffer (x86 TSO). A plain store retires into the core's store
// buffer and the core goes on; the store's RFO still goes to its line,
// which moves and is busy as for any store, so other CPUs see the same
// transfers. The core stalls on its stores only:
//   - at a locked instruction (lock-prefixed RMW, xchg: every RMW and Lock,
//     and an access marked Locked such as mutex_unlock()'s cmpxchg), which
//     drains the buffer first (Intel SDM vol. 3, 9.2.2: locked
//     instructions have a total order and are not reordered with earlier
//     stores);
//   - when the buffer is full (Lat.StoreBuffer entries per core, shared
//     out among its hardware threads: Intel partitions it statically).
// A load of a line with a store still in the buffer is served from it
// (store-to-load forwarding; at line granularity the model cannot tell
// the address, so every such load is forwarded). A load of another line
// passes the buffered stores (TSO allows store-load reordering).
//
// Stores commit in program order. Simplified: a store's RFO and commit
// are one transaction at its line, served when the line serves it, and
// the RFOs of the buffered stores go out at once (the RFO prefetch) and
// may complete out of order; but a release (a plain Unlock,
// queued_spin_unlock()'s smp_store_release()) and a store the caller
// watches (Notify) reach their line only once every older store has
// completed, so no CPU sees the lock free, or the wakeup, before the
// stores that precede it. A stall at a drain or a full buffer is charged
// to the access that stalls (where perf puts it), at the line of the store
// it waits for.

// sbEntry is a store in a CPU's store buffer.
type sbEntry struct {
	id     int64
	finish int64 // ps: when its line served it; 0 while not yet
	line   int32
	tag    int32
	op     hwmodel.Op
	notify bool
	issued bool // its request is at its line (a release waits for the older stores first)
}

// storeBuffer is a CPU's buffered stores, oldest first.
type storeBuffer struct{ fifo[sbEntry] }

// retire drops the stores at the front that completed by now: they left
// the buffer in order.
func (q *storeBuffer) retire(now int64) {
	for q.len() > 0 && q.front().finish != 0 && q.front().finish <= now {
		q.pop()
	}
}

// holds reports whether a store to line li is in the buffer.
func (q *storeBuffer) holds(li int32) bool {
	live := q.live()
	for i := range live {
		if live[i].line == li {
			return true
		}
	}
	return false
}

// unserved reports whether a store in the buffer has not been served.
func (q *storeBuffer) unserved() bool {
	live := q.live()
	for i := range live {
		if live[i].finish == 0 {
			return true
		}
	}
	return false
}

// sbCap is CPU c's share of its core's store buffer; 0 without one.
func sbCap(m *hwmodel.Machine, c int) int32 {
	n := m.Lat.StoreBuffer
	if n <= 0 {
		return 0
	}
	if c < len(m.CPUs) && m.CPUs[c].Core < len(m.Cores) {
		n /= max(len(m.Cores[m.CPUs[c].Core]), 1)
	}
	return int32(max(n, 1))
}

// isStore reports whether p retires into the store buffer: a plain store.
func (p *pend) isStore() bool { return (p.op == hwmodel.Write || p.op == hwmodel.Unlock) && !p.locked }

// drains reports whether p is a locked instruction, which waits for the
// store buffer to drain.
func (p *pend) drains() bool { return p.op == hwmodel.RMW || p.op == hwmodel.Lock || p.locked }

// sbStep applies the store buffer to CPU c's next request p at now: it
// reports blocked when the CPU stalls on its buffer (a locked p with
// stores buffered, a store with the buffer full), buffered when p went
// into it. Neither: p is issued as before.
func (rp *Replayer) sbStep(c int, p *pend, now int64) (blocked, buffered bool) {
	cpu := &rp.cpus[c]
	cpu.sb.retire(now)
	if n := cpu.sb.len(); n > 0 && (p.drains() || p.isStore() && n >= int(cpu.sbCap)) {
		rp.sbBlock(c, now, p.tag)
		return true, false
	}
	if !p.isStore() {
		return false, false
	}
	setBit(rp.dirty, c)
	cpu.next++
	cpu.sbSeq++
	e := sbEntry{id: cpu.sbSeq, line: p.line, tag: p.tag, op: p.op, notify: p.notify}
	if (p.op == hwmodel.Unlock || p.notify) && cpu.sb.len() > 0 {
		// A release waits for the older stores (sbKick issues it).
		cpu.sb.push(e)
		rp.sbKick(c)
		return false, true
	}
	e.issued = true
	cpu.sb.push(e)
	rp.sbIssue(c, e, now)
	return false, true
}

// sbBlock stalls CPU c at now on the oldest store in its buffer, charged
// to tag (the access that cannot go on).
func (rp *Replayer) sbBlock(c int, now int64, tag int32) {
	cpu := &rp.cpus[c]
	e := cpu.sb.front()
	if e.finish != 0 {
		// Its line served it: the wait is known.
		rp.charge(c, tag, e.line, e.finish-now)
		cpu.doneAt = e.finish
		rp.resume(c, e.finish)
		return
	}
	cpu.waiting, cpu.sbWait, cpu.blockedOn = true, true, -1
	setBit(rp.waitSet, c)
	cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, tag, e.line
	cpu.headAt = -1
}

// sbIssue sends buffered store e of CPU c to its line at now.
func (rp *Replayer) sbIssue(c int, e sbEntry, now int64) {
	l := &rp.ls[e.line]
	wt := waiter{cpu: int32(c), rate: rp.rate[rp.pr.HomeRemote(c, int(l.home))], arrive: now, op: e.op, notify: e.notify, tag: e.tag,
		out: e.id, store: true, head: -1}
	if len(l.waiters) == 0 && l.freeAt <= now {
		if _, due := rp.keeperDue(int(e.line), now); !due {
			rp.serveWaiter(int(e.line), wt, now)
			return
		}
	}
	l.waiters = append(l.waiters, wt)
	rp.schedule(int(e.line), max(now, l.freeAt))
}

// sbKick schedules the issue of CPU c's oldest held-back release once
// every older store has completed.
func (rp *Replayer) sbKick(c int) {
	var at int64
	for _, e := range rp.cpus[c].sb.live() {
		if !e.issued {
			rp.push(mkEvent(max(at, rp.now), evStore, int32(c)))
			return
		}
		if e.finish == 0 {
			return
		}
		at = max(at, e.finish)
	}
}

// sbRelease (an evStore) issues CPU c's oldest held-back release if every
// older store has completed by now.
func (rp *Replayer) sbRelease(c int, now int64) {
	live := rp.cpus[c].sb.live()
	for i := range live {
		e := &live[i]
		if !e.issued {
			e.issued = true
			rp.sbIssue(c, *e, now)
			return
		}
		if e.finish == 0 || e.finish > now {
			return
		}
	}
}

// sbServed records that CPU c's buffered store id completes at finish
// (its line serves it), resumes the CPU if it stalled on it, and lets a
// held-back release go.
func (rp *Replayer) sbServed(c int, id, finish int64) {
	cpu := &rp.cpus[c]
	live := cpu.sb.live()
	k := id - live[0].id
	live[k].finish = finish
	if cpu.waiting && cpu.sbWait && k == 0 {
		rp.charge(c, cpu.waitTag, cpu.waitLine, finish-cpu.waitSince-cpu.accrued)
		cpu.waiting, cpu.sbWait, cpu.accrued = false, false, 0
		clearBit(rp.waitSet, c)
		cpu.doneAt = finish
		rp.resume(c, finish)
	}
	rp.sbKick(c)
}
