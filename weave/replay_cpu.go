package weave

import (
	"math"
	"math/bits"

	"github.com/rqemu/rqemu/hwmodel"
)

func setBit(b []uint64, i int)   { b[i/64] |= 1 << (i % 64) }
func clearBit(b []uint64, i int) { b[i/64] &^= 1 << (i % 64) }

// accrue reports, for every CPU whose request is still waiting at a line
// at time t, the wait so far: the CPU is stalled up to t whatever happens
// next, so the caller charges it now (the CPU does not run on while it
// waits), and the serve reports only the rest.
func (rp *Replayer) accrue(t int64) {
	for wi, x := range rp.waitSet {
		for ; x != 0; x &= x - 1 {
			rp.accrueCPU(wi*64+bits.TrailingZeros64(x), t)
		}
	}
}

func (rp *Replayer) accrueCPU(c int, t int64) {
	cpu := &rp.cpus[c]
	from := cpu.waitSince + cpu.accrued
	if t <= from {
		return
	}
	if cpu.headAt > from {
		// The part of the wait before the Lock became its queue's
		// head was spent on the osq.
		rp.accruePart(c, cpu.queuedTag, min(cpu.headAt, t)-from)
		from = min(cpu.headAt, t)
	}
	rp.accruePart(c, cpu.waitTag, t-from)
}

// accruePart reports d ps more of CPU c's wait, at tag.
func (rp *Replayer) accruePart(c int, tag int32, d int64) {
	if d <= 0 {
		return
	}
	cpu := &rp.cpus[c]
	cpu.accrued += d
	cpu.shift += d
	if len(rp.res.Served[c]) == 0 {
		setBit(rp.dirty, c)
	}
	rp.res.Served[c] = append(rp.res.Served[c], Served{Tag: tag, Line: cpu.waitLine, StallPS: d, Partial: true})
	sns := float64(d) / 1000
	rp.res.CPUStall[c] += sns
	rp.touch(cpu.waitLine).StallNS += sns
}

// pend is a request not yet served.
type pend struct {
	// at is the logged time on the caller's timeline (ps) less the
	// CPU's base when the caller logged it: the request is due at
	// at + shift. (One field, not two: a pend is 24 bytes.)
	at     int64
	line   int32
	tag    int32
	op     hwmodel.Op
	indep  bool
	notify bool
	locked bool // a Write or Unlock that is a locked instruction (Req.Locked)
	// lvl is the cache level a line the CPU holds has aged to
	// (capacityAges): a hit there costs Replayer.capPS[lvl].
	lvl uint8
}

// outRead is an Indep read the CPU has issued and not yet retired.
type outRead struct {
	id     int64
	tau    int64 // ps: its issue on the CPU's own timeline (physical - shift)
	finish int64 // ps: when its data arrived; 0 while it waits at its line
	line   int32
	tag    int32
}

// outQueue is a CPU's in-flight independent reads, oldest first.
type outQueue = fifo[outRead]

type replayCPU struct {
	reqs []pend // reqs[next:] are not yet issued
	next int
	// shift is the CPU's total stall so far, ps; base is its value at the
	// start of the current call (what the caller knew).
	shift, base int64
	// nextAt is when the CPU acts next, valid while armed.
	nextAt int64
	armed  bool // an evArrive for the CPU is pending at nextAt
	// out are the Indep reads in flight, oldest first; outSeq numbers
	// them.
	out    outQueue
	outSeq int64
	// waiting: the CPU is stalled on a request still queued at its line
	// (its own blocking request, or the outstanding read blockedOn >= 0)
	// since waitSince; accrued is the part of that wait already reported.
	waiting            bool
	blockedOn          int64
	waitSince, accrued int64
	waitTag, waitLine  int32
	// headAt: a spinning Lock became its queue's head then (ps), its
	// wait's tag moving from queuedTag to waitTag (Replayer.nextHead).
	headAt    int64
	queuedTag int32
	doneAt    int64 // ps: when its last blocking request completed
	// sb is the CPU's store buffer (replay_store.go), sbCap its entries
	// (0: none); sbSeq numbers the stores; sbWait: the CPU waits on the
	// oldest store in it.
	sb     storeBuffer
	sbSeq  int64
	sbCap  int32
	sbWait bool
}

// wake schedules CPU c to act at time t (never before now).
func (rp *Replayer) wake(c int, t int64) {
	cpu := &rp.cpus[c]
	cpu.nextAt = max(t, rp.now)
	cpu.armed = true
	rp.push(mkEvent(cpu.nextAt, evArrive, int32(c)))
}

// resume schedules CPU c's next act once it is free at time t: at its next
// request's issue time when no read is in flight (a single event per
// request on the common path), else at t. Nothing when it has nothing to
// do; a pending wake-up no later than that stands.
func (rp *Replayer) resume(c int, t int64) {
	cpu := &rp.cpus[c]
	if cpu.out.len() == 0 {
		if cpu.next >= len(cpu.reqs) {
			return
		}
		p := &cpu.reqs[cpu.next]
		t = max(t, p.at+cpu.shift, cpu.doneAt)
	}
	if cpu.armed && cpu.nextAt <= max(t, rp.now) {
		return
	}
	rp.wake(c, t)
}

// charge adds d ps of stall to CPU c, paid at (tag, line).
func (rp *Replayer) charge(c int, tag, line int32, d int64) {
	if d == 0 {
		return
	}
	cpu := &rp.cpus[c]
	cpu.shift += d
	if len(rp.res.Served[c]) == 0 {
		setBit(rp.dirty, c)
	}
	rp.res.Served[c] = append(rp.res.Served[c], Served{Tag: tag, Line: line, StallPS: d})
	sns := float64(d) / 1000
	rp.res.CPUStall[c] += sns
	rp.touch(line).StallNS += sns
}

// act lets CPU c, free at time now (an evArrive), retire the reads that
// have arrived and issue what it can.
func (rp *Replayer) act(c int, now int64) {
	cpu := &rp.cpus[c]
	cpu.armed = false
	w := rp.windowPS
	for {
		for cpu.out.len() > 0 && cpu.out.front().finish != 0 && cpu.out.front().finish <= now {
			cpu.out.pop()
		}
		deadline := int64(math.MaxInt64)
		if cpu.out.len() > 0 {
			// The reorder buffer fills Window ns of the CPU's own
			// timeline after the oldest read was issued.
			deadline = cpu.out.front().tau + w + cpu.shift
			if deadline <= now {
				rp.block(c, now)
				return
			}
		}
		if cpu.next >= len(cpu.reqs) {
			if deadline != math.MaxInt64 {
				rp.wake(c, deadline)
			}
			return
		}
		p := &cpu.reqs[cpu.next]
		if want := max(p.at+cpu.shift, cpu.doneAt); want > now {
			rp.wake(c, min(want, deadline))
			return
		}
		if cpu.out.len() > 0 && (!p.indep || cpu.out.len() >= rp.mlp) {
			rp.block(c, now)
			return
		}
		if cpu.sbCap > 0 {
			blocked, buffered := rp.sbStep(c, p, now)
			if blocked {
				return
			}
			if buffered {
				continue
			}
		}
		setBit(rp.dirty, c) // its queue moves: compacted at a later call
		cpu.next++
		if held := rp.lines[p.line].Holds(c); p.op == hwmodel.Read && (held || cpu.sbCap > 0 && cpu.sb.holds(p.line)) {
			// A load that hits in the CPU's own cache completes at
			// once: it never reaches the line's home, so it neither
			// waits behind the line's transactions nor takes part in
			// the draw (serve). The line's state is as the
			// transactions served before now left it. So does one
			// served from the CPU's store buffer (forwarding).
			rp.hit(p.line)
			rp.npend--
			if p.lvl != hwmodel.LevelL1 && held {
				// An aged line's hit costs its level (a load forwarded
				// from the store buffer does not reach the cache).
				if rp.capacityMiss(c, p, now) {
					continue
				}
				return
			}
			cpu.doneAt = max(cpu.doneAt, now)
			if p.notify {
				rp.res.Notices = append(rp.res.Notices, Notice{CPU: c, T: psToNSUp(now)})
			}
			continue
		}
		l := &rp.ls[p.line]
		st := rp.touch(p.line)
		spin := int32(-1)
		if p.op == hwmodel.Lock && l.holder != -1 {
			st.LockWaits++
			spin = rp.spinTag(p.tag, l)
		}
		wt := waiter{cpu: int32(c), rate: rp.rate[rp.pr.HomeRemote(c, int(l.home))], arrive: now, op: p.op, notify: p.notify, tag: p.tag, out: -1,
			spin: spin >= 0, head: -1, lvl: p.lvl, held: p.op == hwmodel.Lock && l.holder != -1}
		if spin >= 0 && spin == rp.spin[p.tag].onOwner {
			wt.head = now // the first waiter: it spins on the owner at once
		}
		if p.indep {
			cpu.outSeq++
			wt.out = cpu.outSeq
			cpu.out.push(outRead{id: cpu.outSeq, tau: now - cpu.shift, line: p.line, tag: p.tag})
		} else {
			cpu.waiting, cpu.blockedOn = true, -1
			setBit(rp.waitSet, c)
			cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, p.tag, p.line
			cpu.headAt = -1
			if spin >= 0 {
				cpu.waitTag = spin // accrue's reports while it spins
			}
		}
		if len(l.waiters) == 0 && l.freeAt <= now && (p.op != hwmodel.Lock || l.holder == -1) {
			if _, due := rp.keeperDue(int(p.line), now); !due {
				// A free line nobody queues for serves the request
				// at once.
				rp.serveWaiter(int(p.line), wt, now)
				if !p.indep {
					return
				}
				continue
			}
		}
		l.waiters = append(l.waiters, wt)
		rp.schedule(int(p.line), max(now, l.freeAt))
		if !p.indep {
			return
		}
	}
}

// block stalls CPU c at now on its oldest outstanding read.
func (rp *Replayer) block(c int, now int64) {
	cpu := &rp.cpus[c]
	o := *cpu.out.front()
	if o.finish != 0 {
		// Its data is on the way: the wait is known.
		cpu.out.pop()
		rp.charge(c, o.tag, o.line, o.finish-now)
		cpu.doneAt = o.finish
		rp.resume(c, o.finish)
		return
	}
	cpu.waiting, cpu.blockedOn = true, o.id
	setBit(rp.waitSet, c)
	cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, o.tag, o.line
	cpu.headAt = -1
}

// capacityMiss serves CPU c's load p of a line it holds that has aged out
// of its L1 (pend.lvl), at now: the data comes from that level after its
// latency, without reaching the line's home (no queue, no transfer). An
// independent load goes in flight with its finish known, and the CPU goes
// on (true); a blocking one stalls the CPU for the latency (false: it
// resumes then).
func (rp *Replayer) capacityMiss(c int, p *pend, now int64) bool {
	cpu := &rp.cpus[c]
	finish := now + rp.capPS[p.lvl]
	if p.notify {
		rp.res.Notices = append(rp.res.Notices, Notice{CPU: c, T: psToNSUp(finish)})
	}
	if p.indep {
		cpu.outSeq++
		cpu.out.push(outRead{id: cpu.outSeq, tau: now - cpu.shift, finish: finish, line: p.line, tag: p.tag})
		return true
	}
	rp.charge(c, p.tag, p.line, finish-now)
	cpu.doneAt = max(cpu.doneAt, finish)
	rp.resume(c, finish)
	return false
}
