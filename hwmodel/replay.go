package hwmodel

import (
	"fmt"
	"math"
	"strings"
)

// Req is one access to a shared line in one CPU's stream, stamped with the
// virtual time at which the CPU issued it on its own, uncontended timeline.
type Req struct {
	T    int64 // virtual ns
	Line int32 // index into the lines given to Replay
	Op   Op
	// Tag is the caller's label for the request (the weave's calling
	// site); the replay hands it back with the request's stall.
	Tag int32
	// Indep marks a Read the CPU does not wait for: an independent load
	// (a scan over other CPUs' runqueues) that overlaps with the CPU's
	// next requests, up to Lat.MLP outstanding and Lat.Window ns of its
	// own timeline (memory-level parallelism; see Advance).
	Indep bool
}

// Served is one request a replay finished serving, with its stall.
type Served struct {
	Tag  int32
	Line int32
	// StallPS is the request's delay beyond its uncontended cost, in ps:
	// waiting for the line (or the lock) plus the transfer.
	StallPS int64
	// Partial: the request is still waiting; StallPS is its wait up to
	// the end of the call. Its later entries report the rest.
	Partial bool
}

// LineStats counts what happened to one line during a replay.
type LineStats struct {
	Accesses      int
	Transfers     [NumClasses]int // by distance class of the transfer
	Invalidations int             // copies invalidated by stores
	Fills         int             // fills from DRAM
	LockWaits     int             // Lock requests that found the lock held
	StallNS       float64         // total stall paid on this line
	// BusyPS is the time the line spent serving transactions (a store,
	// RMW or transfer occupies it; reads of a shared copy do not), in ps.
	BusyPS int64
}

// ReplayResult is the outcome of a replay.
type ReplayResult struct {
	// Stall[c][i] is the delay of CPU c's i-th request beyond its
	// uncontended cost (UncontendedNS), in ns: waiting for the line (or
	// the lock) plus the transfer. Later requests of the same CPU are
	// issued that much later, so stalls propagate down the stream. Only
	// Machine.Replay, which serves every request, fills it.
	Stall [][]float64
	// Served[c] lists CPU c's requests served by this call, in the
	// order the CPU issued them, then the wait so far of its request
	// still waiting at the end of the call, if any (Replayer.Advance).
	Served [][]Served
	// CPUStall[c] is the stall of CPU c's requests served by this call.
	CPUStall []float64
	Lines    []LineStats
	// Touched lists the lines that served a request or saw one arrive in
	// this call (the only non-zero entries of Lines).
	Touched []int32
}

// Replay runs the CPUs' access streams against the lines through the
// coherence model, serving every request, and returns each access's stall.
// It is one Replayer.Advance to the end of time on a fresh Replayer: see
// Advance for the model. It panics if a request can never be served (a
// lock taken and not released in the streams).
func (m *Machine) Replay(lines []*Line, streams [][]Req) *ReplayResult {
	rp := m.NewReplayer()
	res := rp.Advance(lines, streams, math.MaxInt64)
	rp.checkDone()
	res.Stall = make([][]float64, len(streams))
	for c, sv := range res.Served {
		res.Stall[c] = make([]float64, len(sv))
		for i, x := range sv {
			res.Stall[c][i] = float64(x.StallPS) / 1000
		}
	}
	return res
}

// Replayer is the weave's discrete-event simulation of the shared lines.
// It keeps the machine's queues, not an epoch's: a line busy with a
// transaction at the end of one Advance is still busy in the next, its
// waiters keep their place in its queue, a lock held across the end stays
// held, and a CPU whose request is still waiting keeps waiting: its later
// requests, of this call or the next, are issued only once it is served.
// So over any window a line serves at most that window's worth of
// transactions, however the caller cuts time into epochs.
//
// Not safe for concurrent use. The result of a call is valid until the
// next call.
type Replayer struct {
	m     *Machine
	lines []*Line
	cpus  []replayCPU
	ls    []replayLine
	q     []event
	seq   uint64
	now   int64 // ps: the replay's clock (the last event, or the last until)
	rmwPS int64
	// windowPS and mlp: Lat.Window in ps and Lat.MLP (at least 1).
	windowPS int64
	mlp      int
	// serialForward: the LLC is non-inclusive (CacheSpec.LLCInclusion),
	// so clean forwards to one line are served one at a time.
	serialForward bool
	res           ReplayResult
}

// NewReplayer returns a Replayer for the machine, with every line free
// and no request pending.
func (m *Machine) NewReplayer() *Replayer {
	return &Replayer{m: m, rmwPS: ps(m.Lat.RMWLocal), windowPS: ps(m.Lat.Window), mlp: max(m.Lat.MLP, 1),
		serialForward: m.Caches.LLCInclusion == LLCNonInclusive}
}

// Advance adds each CPU's new requests to what the replay has pending and
// runs the simulation up to virtual time until (ns, exclusive): events
// before until are processed, later ones wait for the next call. It
// returns the requests served in this call, per CPU, with their stalls.
//
// The model:
//
//   - a CPU issues its requests in order, each at its logged time plus
//     the stall its CPU has suffered since the caller last learned of the
//     CPU's stalls (the end of the previous call: the caller adds what
//     the calls reported, in whole ns, to the CPU's clock, so the next
//     stream's times include it);
//   - a request waits for the CPU's previous one to complete (its stall
//     is the CPU's), except an Indep read: an out-of-order core keeps
//     executing past a load miss, so the CPU goes on issuing while up to
//     Lat.MLP Indep reads are outstanding (the L1D miss buffers). It
//     stalls on the oldest outstanding read when it issues one more, when
//     it issues a request that is not an Indep read (the code consumes
//     what it loaded; a locked RMW also drains the load queue), or when
//     its own timeline has run Lat.Window ns past the read's issue (the
//     reorder buffer is full). That wait is charged to the read;
//   - each line serves one store/RMW/transfer at a time (RMWs serialize),
//     for the transfer latency plus the RMW's own latency; reads of a
//     shared copy are served in parallel;
//   - when a line frees, the owner's waiting request goes first while the
//     owner Keeps the line (the burst effect), else the earliest waiter,
//     ties broken by the lowest CPU;
//   - a Lock waits until the lock is free, then is served first come
//     first served like a queued spinlock hand-over;
//   - requests arriving at the same instant are all queued before any is
//     served.
//
// Each CPU's new stream must be sorted by time. Lines keep their
// coherence state (owner, sharers) and their queues across calls; lines
// must only be appended to between calls. The result depends only on the
// inputs and the Replayer's state: time is kept in integer picoseconds
// and every tie has a fixed order. Advance panics if requests wait with
// nothing left that could serve them (a lock cycle).
func (rp *Replayer) Advance(lines []*Line, streams [][]Req, until int64) *ReplayResult {
	if len(lines) < len(rp.lines) {
		panic(fmt.Sprintf("hwmodel: Replayer: %d lines after %d; lines may only be added", len(lines), len(rp.lines)))
	}
	rp.lines = lines
	res := &rp.res
	for _, li := range res.Touched {
		res.Lines[li] = LineStats{}
		rp.ls[li].touched = false
	}
	res.Touched = res.Touched[:0]
	for len(rp.ls) < len(lines) {
		rp.ls = append(rp.ls, replayLine{holder: -1})
	}
	for len(res.Lines) < len(lines) {
		res.Lines = append(res.Lines, LineStats{})
	}
	for len(rp.cpus) < len(streams) {
		rp.cpus = append(rp.cpus, replayCPU{})
	}
	for len(res.Served) < len(rp.cpus) {
		res.Served = append(res.Served, nil)
		res.CPUStall = append(res.CPUStall, 0)
	}
	for c := range rp.cpus {
		res.Served[c] = res.Served[c][:0]
		res.CPUStall[c] = 0
		cpu := &rp.cpus[c]
		// What the caller has been told so far: the stall in whole
		// ns (contention.Space hands out whole ns and carries the
		// fraction), so the new stream's times include exactly that.
		cpu.base = cpu.shift - cpu.shift%1000
		if cpu.next > 0 {
			n := copy(cpu.reqs, cpu.reqs[cpu.next:])
			cpu.reqs = cpu.reqs[:n]
			cpu.next = 0
		}
	}
	for c, s := range streams {
		if len(s) == 0 {
			continue
		}
		cpu := &rp.cpus[c]
		for i, q := range s {
			if i > 0 && q.T < s[i-1].T {
				panic(fmt.Sprintf("hwmodel: Replay: CPU %d stream not sorted at request %d (t=%d after t=%d)", c, i, q.T, s[i-1].T))
			}
			if int(q.Line) < 0 || int(q.Line) >= len(lines) {
				panic(fmt.Sprintf("hwmodel: Replay: CPU %d request %d names line %d of %d", c, i, q.Line, len(lines)))
			}
			cpu.reqs = append(cpu.reqs, pend{t: q.T * 1000, base: cpu.base, line: q.Line, op: q.Op, indep: q.Indep && q.Op == Read, tag: q.Tag})
		}
		if !cpu.waiting {
			rp.resume(c, 0)
		}
	}
	untilPS := int64(math.MaxInt64)
	if until < math.MaxInt64/1000 {
		untilPS = until * 1000
	}
	for len(rp.q) > 0 && rp.q[0].t < untilPS {
		e := rp.pop()
		rp.now = max(rp.now, e.t)
		if e.kind == evArrive {
			if cpu := &rp.cpus[e.who]; cpu.armed && cpu.nextAt == e.t {
				rp.act(int(e.who), e.t)
			}
		} else {
			rp.serve(int(e.who), e.t)
		}
	}
	if untilPS != math.MaxInt64 {
		rp.now = max(rp.now, untilPS)
		rp.accrue(untilPS)
	}
	if len(rp.q) == 0 {
		rp.checkDone()
	}
	return res
}

// accrue reports, for every CPU whose request is still waiting at a line
// at time t, the wait so far: the CPU is stalled up to t whatever happens
// next, so the caller charges it now (the CPU does not run on while it
// waits), and the serve reports only the rest.
func (rp *Replayer) accrue(t int64) {
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		if !cpu.waiting {
			continue
		}
		from := cpu.waitSince + cpu.accrued
		if t <= from {
			continue
		}
		d := t - from
		cpu.accrued += d
		cpu.shift += d
		rp.res.Served[c] = append(rp.res.Served[c], Served{Tag: cpu.waitTag, Line: cpu.waitLine, StallPS: d, Partial: true})
		sns := float64(d) / 1000
		rp.res.CPUStall[c] += sns
		rp.touch(cpu.waitLine).StallNS += sns
	}
}

// Pending is the number of requests issued or logged but not yet served.
func (rp *Replayer) Pending() int {
	n := 0
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		n += len(cpu.reqs) - cpu.next
		if cpu.waiting && cpu.blockedOn < 0 {
			n++ // its own request, issued and waiting
		}
		for _, o := range cpu.out.live() {
			if o.finish == 0 {
				n++
			}
		}
	}
	return n
}

// Behind reports whether CPU c has requests the replay has not yet issued:
// they queue behind one still waiting, so the CPU has not yet, physically,
// reached the point of its own timeline where it logged them.
func (rp *Replayer) Behind(c int) bool {
	if c >= len(rp.cpus) {
		return false
	}
	cpu := &rp.cpus[c]
	return cpu.next < len(cpu.reqs)
}

// Now is the replay's clock, in virtual ns: the until of the last call
// (or the last event served, after a call without bound).
func (rp *Replayer) Now() int64 { return rp.now / 1000 }

// BusyUntil is when line li finishes the transaction it is serving, in
// virtual ns (rounded up); 0 if it has never been busy.
func (rp *Replayer) BusyUntil(li int) int64 {
	if li >= len(rp.ls) {
		return 0
	}
	return (rp.ls[li].freeAt + 999) / 1000
}

func ps(ns float64) int64 { return int64(math.Round(ns * 1000)) }

const (
	evArrive = iota // a CPU issues its next request
	evServe         // a line may serve a waiter
)

type event struct {
	t    int64 // ps
	kind uint8
	who  int32 // CPU for evArrive, line for evServe
	seq  uint64
}

func (a *event) less(b *event) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	if a.who != b.who {
		return a.who < b.who
	}
	return a.seq < b.seq
}

// pend is a request not yet served.
type pend struct {
	t     int64 // ps: logged time on the caller's timeline
	base  int64 // the CPU's shift when the caller logged it
	line  int32
	op    Op
	indep bool
	tag   int32
}

// outRead is an Indep read the CPU has issued and not yet retired.
type outRead struct {
	id     int64
	tau    int64 // ps: its issue on the CPU's own timeline (physical - shift)
	finish int64 // ps: when its data arrived; 0 while it waits at its line
	line   int32
	tag    int32
}

// outQueue is a CPU's in-flight independent reads, oldest first: a FIFO
// over one reused buffer.
type outQueue struct {
	buf  []outRead
	head int
}

func (q *outQueue) len() int        { return len(q.buf) - q.head }
func (q *outQueue) front() *outRead { return &q.buf[q.head] }
func (q *outQueue) live() []outRead { return q.buf[q.head:] }
func (q *outQueue) push(o outRead)  { q.compact(); q.buf = append(q.buf, o) }
func (q *outQueue) pop()            { q.head++; q.compact() }
func (q *outQueue) compact() {
	if q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	} else if q.head > 0 && len(q.buf) == cap(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		q.buf, q.head = q.buf[:n], 0
	}
}

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
	doneAt             int64 // ps: when its last blocking request completed
}

type waiter struct {
	cpu    int32
	arrive int64
	op     Op
	tag    int32
	out    int64 // the outRead id of an Indep read, or -1
}

type replayLine struct {
	freeAt  int64 // ps: the line is busy with a transaction until then
	serveAt int64 // time of the pending evServe when pending
	pending bool
	holder  int // lock holder, or -1
	waiters []waiter
	touched bool // has stats in this call
}

// wake schedules CPU c to act at time t (never before now).
func (rp *Replayer) wake(c int, t int64) {
	cpu := &rp.cpus[c]
	cpu.nextAt = max(t, rp.now)
	cpu.armed = true
	rp.push(event{t: cpu.nextAt, kind: evArrive, who: int32(c)})
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
		t = max(t, p.t+cpu.shift-p.base, cpu.doneAt)
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
		if want := max(p.t+cpu.shift-p.base, cpu.doneAt); want > now {
			rp.wake(c, min(want, deadline))
			return
		}
		if cpu.out.len() > 0 && (!p.indep || cpu.out.len() >= rp.mlp) {
			rp.block(c, now)
			return
		}
		cpu.next++
		l := &rp.ls[p.line]
		st := rp.touch(p.line)
		if p.op == Lock && l.holder != -1 {
			st.LockWaits++
		}
		wt := waiter{cpu: int32(c), arrive: now, op: p.op, tag: p.tag, out: -1}
		if p.indep {
			cpu.outSeq++
			wt.out = cpu.outSeq
			cpu.out.push(outRead{id: cpu.outSeq, tau: now - cpu.shift, line: p.line, tag: p.tag})
		} else {
			cpu.waiting, cpu.blockedOn = true, -1
			cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, p.tag, p.line
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
	cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, o.tag, o.line
}

func (rp *Replayer) touch(li int32) *LineStats {
	if !rp.ls[li].touched {
		rp.ls[li].touched = true
		rp.res.Touched = append(rp.res.Touched, li)
	}
	return &rp.res.Lines[li]
}

// schedule makes sure line li gets a serve event at time t.
func (rp *Replayer) schedule(li int, t int64) {
	l := &rp.ls[li]
	if l.pending && l.serveAt <= t {
		return
	}
	l.pending = true
	l.serveAt = t
	rp.push(event{t: t, kind: evServe, who: int32(li)})
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
	if owner >= 0 && owner < len(rp.cpus) && rp.m.Keeps(line, owner) {
		// The burst effect needs the owner's next RMW to be ready when
		// the line frees; a core issuing back to back is "ready" within
		// one RMW latency (virtual time is integer ns, so logged gaps
		// jitter by up to 1 ns). If it is about to issue to this line,
		// wait for it rather than hand the line over.
		oc := &rp.cpus[owner]
		if oc.armed && oc.next < len(oc.reqs) && int(oc.reqs[oc.next].line) == li &&
			oc.nextAt > now && oc.nextAt <= now+rp.rmwPS+1000 {
			rp.schedule(li, oc.nextAt)
			return
		}
	}
	for i, w := range l.waiters {
		if w.op == Lock && l.holder != -1 {
			continue // a Lock is served only when the lock is free
		}
		if int(w.cpu) == owner && rp.m.Keeps(line, owner) {
			pick = i
			break
		}
		if pick < 0 || w.arrive < l.waiters[pick].arrive ||
			w.arrive == l.waiters[pick].arrive && w.cpu < l.waiters[pick].cpu {
			pick = i
		}
	}
	if pick < 0 {
		return // every waiter wants a held lock; the Unlock reschedules
	}
	w := l.waiters[pick]
	l.waiters = append(l.waiters[:pick], l.waiters[pick+1:]...)
	c := int(w.cpu)
	cpu := &rp.cpus[c]
	st := rp.touch(int32(li))
	st.Accesses++
	cost := rp.m.Access(line, c, w.op)
	costPS := ps(cost.NS)
	switch cost.Kind {
	case Transfer:
		st.Transfers[cost.Class]++
	case Invalidate:
		st.Invalidations += cost.Invalidated
	case Fill:
		st.Fills++
	}
	busy := costPS
	if w.op == RMW || w.op == Lock {
		busy += rp.rmwPS
	}
	if w.op == Read && (cost.Kind == Hit || cost.Kind == Transfer && cost.FromSharer && !rp.serialForward) {
		// A hit, or a clean forward of a line already Shared that an
		// inclusive LLC serves from its own copy: the line is not
		// being moved out of anyone's ownership, so concurrent
		// readers are served in parallel and only pay their own
		// latency. Under a non-inclusive LLC the Shared copies live
		// in the readers' L2s, and each new reader's miss is a snoop
		// of one of them that the line's home runs to completion
		// before it takes the next request to that address
		// (serialForward): a forward occupies the line like a
		// transfer out of Modified. Simplified: the occupancy is the
		// forward's whole latency, the requester's leg included.
		busy = 0
	}
	l.freeAt = now + busy
	st.BusyPS += busy
	switch w.op {
	case Lock:
		if l.holder == c {
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d takes lock line %d that it already holds", c, li))
		}
		l.holder = c
	case Unlock:
		if l.holder != c {
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d releases lock line %d held by %d", c, li, l.holder))
		}
		l.holder = -1
	}
	finish := now + costPS
	switch {
	case w.out < 0:
		// The CPU's blocking request: the whole wait and the transfer
		// are its stall, less what accrue already reported.
		rp.charge(c, w.tag, int32(li), finish-w.arrive-cpu.accrued)
		cpu.waiting, cpu.accrued = false, 0
		cpu.doneAt = finish
		rp.resume(c, finish)
	default:
		live := cpu.out.live()
		for k := range live {
			if live[k].id == w.out {
				live[k].finish = finish
				break
			}
		}
		if cpu.waiting && cpu.blockedOn == w.out {
			// The CPU stalled on this read: it resumes when the
			// data arrives.
			rp.charge(c, w.tag, int32(li), finish-cpu.waitSince-cpu.accrued)
			cpu.waiting, cpu.accrued, cpu.blockedOn = false, 0, -1
			cpu.out.pop()
			cpu.doneAt = finish
			rp.resume(c, finish)
		}
	}
	if len(l.waiters) > 0 {
		rp.schedule(li, l.freeAt)
	}
}

// checkDone panics if requests wait with no event left to serve them.
func (rp *Replayer) checkDone() {
	var stuck []string
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		if cpu.waiting || cpu.next < len(cpu.reqs) {
			stuck = append(stuck, fmt.Sprintf("CPU %d waits on line %d (lock held by CPU %d)", c, cpu.waitLine, rp.ls[cpu.waitLine].holder))
		}
	}
	if len(stuck) > 0 {
		panic("hwmodel: Replay: requests never served (a lock taken and not released in the streams): " + strings.Join(stuck, "; "))
	}
}

func (rp *Replayer) push(e event) {
	rp.seq++
	e.seq = rp.seq
	rp.q = append(rp.q, e)
	i := len(rp.q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !rp.q[i].less(&rp.q[p]) {
			break
		}
		rp.q[i], rp.q[p] = rp.q[p], rp.q[i]
		i = p
	}
}

func (rp *Replayer) pop() event {
	top := rp.q[0]
	n := len(rp.q) - 1
	rp.q[0] = rp.q[n]
	rp.q = rp.q[:n]
	i := 0
	for {
		l, rr, s := 2*i+1, 2*i+2, i
		if l < n && rp.q[l].less(&rp.q[s]) {
			s = l
		}
		if rr < n && rp.q[rr].less(&rp.q[s]) {
			s = rr
		}
		if s == i {
			break
		}
		rp.q[i], rp.q[s] = rp.q[s], rp.q[i]
		i = s
	}
	return top
}
