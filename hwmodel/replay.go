package hwmodel

import (
	"fmt"
	"math"
	"math/bits"
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
	// Notify asks for the time the request completes: the call that
	// serves it lists it in ReplayResult.Notices.
	Notify bool
}

// Notice is the completion of a Notify request: CPU c's request finished
// (its line or lock served it and the transfer arrived) at PS, in ps.
type Notice struct {
	CPU int32
	PS  int64
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
	Ops           [NumOps]int     // Accesses by op
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
	// Lines is what happened to each line in this call, or over every
	// call so far for a Replayer that KeepTotals.
	Lines []LineStats
	// Touched lists the lines that served a request or saw one arrive in
	// this call (the only non-zero entries of Lines); empty under
	// KeepTotals.
	Touched []int32
	// CPUs lists the CPUs with entries in Served (the only non-zero
	// entries of Served and CPUStall), in CPU order.
	CPUs []int32
	// Notices lists the Notify requests this call served, in the order
	// it served them.
	Notices []Notice
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
	// The pending events: those at the time of the event being
	// processed (cur) are keys in nowq, the later ones events in q (both
	// 4-ary min-heaps). No event is ever scheduled before cur, so the
	// next event is the least of nowq's and q's first.
	q    []event
	nowq []uint64
	// next, when hasNext, is the least pending event, held out of the
	// heaps (see push).
	next    event
	hasNext bool
	cur     int64
	now     int64 // ps: the replay's clock (the last event, or the last until)
	rmwPS   int64
	// windowPS and mlp: Lat.Window in ps and Lat.MLP (at least 1).
	windowPS int64
	mlp      int
	// rate[hr] is how often a waiting miss is re-presented to the line's
	// home (see serve), per ms: the inverse of its round trip to the home
	// agent, from the home's package (hr 0) or across the link (hr 1).
	rate [2]uint32
	// pr prices accesses from tables (nil: Machine.Access).
	pr *replayPrices
	// npend counts the requests added and not yet served.
	npend int
	// dirty marks the CPUs whose results, stall or queue moved in this
	// call (the next call resets only those); waitSet the CPUs waiting
	// (replayCPU.waiting). Bitsets over CPUs, walked in CPU order.
	dirty, waitSet []uint64
	res            ReplayResult
	withNew        []int // Advance's scratch: the CPUs with new requests
	// totals: Lines are running totals over the calls (KeepTotals).
	totals bool
}

// KeepTotals makes ReplayResult.Lines running totals over all calls of
// the Replayer rather than each call's own, and leaves
// ReplayResult.Touched empty: a caller that sums the lines' statistics
// anyway is spared a pass over every line a call touched (thousands per
// call on the studies' machines). Call it before the first Advance.
func (rp *Replayer) KeepTotals() { rp.totals = true }

// Logged returns, by line and op, every request added so far: those
// served (Totals' Ops) and those not yet, whether still to be issued or
// waiting at their line; only for a Replayer that KeepTotals.
func (rp *Replayer) Logged() [][NumOps]int64 {
	if !rp.totals {
		panic("hwmodel: Replayer.Logged without KeepTotals")
	}
	out := make([][NumOps]int64, len(rp.ls))
	for li := range rp.ls {
		l := &rp.ls[li]
		for op, n := range l.st.Ops {
			out[li][op] = int64(n)
		}
		for _, w := range l.waiters {
			out[li][w.op]++
		}
	}
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		for _, p := range cpu.reqs[cpu.next:] {
			out[p.line][p.op]++
		}
	}
	return out
}

// Totals returns the per-line statistics summed over every call so far,
// by line; only for a Replayer that KeepTotals. Valid until the next call.
func (rp *Replayer) Totals() []LineStats {
	if !rp.totals {
		panic("hwmodel: Replayer.Totals without KeepTotals")
	}
	for li := range rp.ls {
		rp.res.Lines[li] = rp.ls[li].st
	}
	return rp.res.Lines
}

// NewReplayer returns a Replayer for the machine, with every line free
// and no request pending.
func (m *Machine) NewReplayer() *Replayer {
	return &Replayer{m: m, rmwPS: ps(m.Lat.RMWLocal), windowPS: ps(m.Lat.Window), mlp: max(m.Lat.MLP, 1),
		pr: newReplayPrices(m), rate: retryRates(m)}
}

// retryRates is Replayer.rate: a request reaches the line's home agent
// and hears back in the widest transfer class within the home's package
// (the mesh or ring of one LLC, or the IO die between CCXs), or in the
// remote class from another package.
func retryRates(m *Machine) [2]uint32 {
	present := m.ClassesPresent()
	local := m.Lat.Transfer[ClassLLC]
	for k := ClassSMT; k < ClassRemote; k++ {
		if present[k] {
			local = m.Lat.Transfer[k]
		}
	}
	remote := local
	if present[ClassRemote] {
		remote = m.Lat.Transfer[ClassRemote]
	}
	rate := func(ns float64) uint32 { return uint32(math.Round(1e6 / max(ns, 1))) }
	return [2]uint32{rate(local), rate(remote)}
}

// homeRemote is 1 if NUMA node home (a line's) is on another package
// than CPU c, else 0: from the price tables when the machine has them, so
// a request does not go through the lazily built tables' sync.OnceValue.
func (rp *Replayer) homeRemote(c, home int) int {
	if rp.pr != nil {
		return rp.pr.homeRemote(c, home)
	}
	if rp.m.homeIsRemote(c, home) {
		return 1
	}
	return 0
}

// presentRate is how often, relative to the others, waiter w presents
// its miss to line's home while it waits (see serve): the inverse of its
// round trip to the home. The owner past its burst (serve takes a keeper
// first) presents nothing: the snoop of the request the home serves next
// takes its copy, so it waits behind the others.
func presentRate(w *waiter, line *Line) uint64 {
	if line.owner == int(w.cpu) {
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
//   - a load of a line the CPU holds (Modified, Exclusive or Shared, as
//     the transactions served before it left the line) hits in its own
//     cache and completes at issue: it does not reach the line's home, so
//     it neither waits for the line nor joins its queue
//     (TestReplayHitNotQueued);
//   - each line serves one store/RMW/transfer at a time (RMWs serialize),
//     for the transfer latency plus the RMW's own latency; reads of a
//     shared copy are served in parallel;
//   - when a line frees, the owner's waiting request goes first while the
//     owner Keeps the line (the burst effect); else the line goes to the
//     first miss re-presented to the home: a waiting miss is retried
//     every round trip to the line's home agent (rate), so each waiter
//     wins with a chance in proportion to the inverse of its round trip,
//     drawn from a hash of the line and the instant. Requesters on the
//     home's package win the line more often than those across the link,
//     which is the per-node asymmetry measured on tg->load_avg
//     (TestReplayHomeArbitration). Simplified: the draw stands for the
//     retries' phases, and the line is handed over at once, without the
//     gap until the first retry;
//   - a Lock waits until the lock is free, then is served first come
//     first served like a queued spinlock hand-over (a Lock that wins the
//     draw hands the line to the earliest locker);
//   - a request that finds its line free, with nobody queued for it (and,
//     for a Lock, the lock free), is served at once, unless the owner
//     Keeps the line and is about to issue to it; requests that arrive
//     at the same instant are taken in CPU order, so of two arriving at
//     a free line the lower CPU is served and the other queues.
//
// Each CPU's new stream must be sorted by time. Lines keep their
// coherence state (owner, sharers) and their queues across calls; lines
// must only be appended to between calls. The result depends only on the
// inputs and the Replayer's state: time is kept in integer picoseconds
// and every tie has a fixed order. Advance panics if requests wait with
// nothing left that could serve them (a lock cycle).
func (rp *Replayer) Advance(lines []*Line, streams [][]Req, until int64) *ReplayResult {
	rp.withNew = rp.withNew[:0]
	for c, s := range streams {
		if len(s) > 0 {
			rp.withNew = append(rp.withNew, c)
		}
	}
	return rp.AdvanceCPUs(lines, streams, rp.withNew, until)
}

// AdvanceCPUs is Advance for a caller that knows which CPUs have new
// requests: cpus lists, in increasing order, every CPU whose stream is not
// empty (other streams are not looked at), so that a call costs what it
// replays, not the machine's CPUs.
func (rp *Replayer) AdvanceCPUs(lines []*Line, streams [][]Req, cpus []int, until int64) *ReplayResult {
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
		rp.ls = append(rp.ls, replayLine{holder: -1, home: int32(lines[len(rp.ls)].Home)})
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
	for len(rp.dirty)*64 < len(rp.cpus) {
		rp.dirty = append(rp.dirty, 0)
		rp.waitSet = append(rp.waitSet, 0)
	}
	// Only the CPUs the last call moved have anything to reset: the
	// others' results are empty, their shift and base unchanged.
	for wi, x := range rp.dirty {
		for ; x != 0; x &= x - 1 {
			c := wi*64 + bits.TrailingZeros64(x)
			res.Served[c] = res.Served[c][:0]
			res.CPUStall[c] = 0
			cpu := &rp.cpus[c]
			// What the caller has been told so far: the stall in
			// whole ns (contention.Space hands out whole ns and
			// carries the fraction), so the new stream's times
			// include exactly that.
			cpu.base = cpu.shift - cpu.shift%1000
			// Drop the issued requests once they are at least half
			// the queue, so that a CPU with a long backlog (stalled
			// behind a busy line) does not copy it at every call: each
			// request is copied O(1) times.
			if cpu.next > 0 && 2*cpu.next >= len(cpu.reqs) {
				n := copy(cpu.reqs, cpu.reqs[cpu.next:])
				cpu.reqs = cpu.reqs[:n]
				cpu.next = 0
			}
		}
		rp.dirty[wi] = 0
	}
	res.CPUs = res.CPUs[:0]
	res.Notices = res.Notices[:0]
	for k, c := range cpus {
		s := streams[c]
		if len(s) == 0 || k > 0 && c <= cpus[k-1] {
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d listed with an empty stream or out of order (AdvanceCPUs)", c))
		}
		cpu := &rp.cpus[c]
		for i, q := range s {
			if i > 0 && q.T < s[i-1].T {
				panic(fmt.Sprintf("hwmodel: Replay: CPU %d stream not sorted at request %d (t=%d after t=%d)", c, i, q.T, s[i-1].T))
			}
			if int(q.Line) < 0 || int(q.Line) >= len(lines) {
				panic(fmt.Sprintf("hwmodel: Replay: CPU %d request %d names line %d of %d", c, i, q.Line, len(lines)))
			}
			rp.npend++
			cpu.reqs = append(cpu.reqs, pend{t: q.T * 1000, base: cpu.base, line: q.Line, op: q.Op, indep: q.Indep && q.Op == Read, notify: q.Notify, tag: q.Tag})
		}
		if !cpu.waiting {
			rp.resume(c, 0)
		}
	}
	untilPS := int64(math.MaxInt64)
	if until < math.MaxInt64/1000 {
		untilPS = until * 1000
	}
	for rp.pending() && rp.nextT() < untilPS {
		e := rp.pop()
		rp.now = max(rp.now, e.t)
		if e.kind() == evArrive {
			if cpu := &rp.cpus[e.who()]; cpu.armed && cpu.nextAt == e.t {
				rp.act(int(e.who()), e.t)
			}
		} else {
			rp.serve(int(e.who()), e.t)
		}
	}
	if untilPS != math.MaxInt64 {
		rp.now = max(rp.now, untilPS)
		rp.accrue(untilPS)
	}
	if !rp.pending() {
		rp.checkDone()
	}
	for wi, x := range rp.dirty {
		for ; x != 0; x &= x - 1 {
			if c := wi*64 + bits.TrailingZeros64(x); len(res.Served[c]) > 0 {
				res.CPUs = append(res.CPUs, int32(c))
			}
		}
	}
	for _, li := range res.Touched {
		l := &rp.ls[li]
		res.Lines[li], l.st = l.st, LineStats{}
	}
	return res
}

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
	d := t - from
	cpu.accrued += d
	cpu.shift += d
	if len(rp.res.Served[c]) == 0 {
		setBit(rp.dirty, c)
	}
	rp.res.Served[c] = append(rp.res.Served[c], Served{Tag: cpu.waitTag, Line: cpu.waitLine, StallPS: d, Partial: true})
	sns := float64(d) / 1000
	rp.res.CPUStall[c] += sns
	rp.touch(cpu.waitLine).StallNS += sns
}

// Pending is the number of requests issued or logged but not yet served:
// every request added is served once, by one serve.
func (rp *Replayer) Pending() int { return rp.npend }

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

// Stalled reports whether CPU c is stalled at the end of the last call: a
// request of its own (or the independent read it blocked on) waits at
// its line. A CPU that is only Behind because its next requests lie past
// the call's end is not stalled: it has not got there yet.
func (rp *Replayer) Stalled(c int) bool { return c < len(rp.cpus) && rp.cpus[c].waiting }

// Owes reports whether a later call may still charge CPU c: it has
// requests not yet issued (Behind), a request waiting at its line, or
// independent reads in flight, whose wait is charged when the CPU blocks
// on them (at the latest when its reorder window runs out). A caller that
// hands out the charges must keep such a CPU in view.
func (rp *Replayer) Owes(c int) bool {
	if c >= len(rp.cpus) {
		return false
	}
	cpu := &rp.cpus[c]
	return rp.Behind(c) || cpu.waiting || cpu.out.len() > 0
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

// event is one pending event. Events are processed in the order of
// (t, kind, who); two events equal in all three are the same event
// pushed twice (a superseded wake-up or serve at the time of the live
// one), and whichever is popped first does the work, so no sequence
// number is needed to order them.
type event struct {
	t   int64  // ps
	key uint64 // kind<<32 | who: who is the CPU for evArrive, the line for evServe
}

func mkEvent(t int64, kind uint8, who int32) event {
	return event{t: t, key: uint64(kind)<<32 | uint64(uint32(who))}
}

func (e event) kind() uint8 { return uint8(e.key >> 32) }
func (e event) who() int32  { return int32(uint32(e.key)) }

func (a event) less(b event) bool { return a.t < b.t || a.t == b.t && a.key < b.key }

// pend is a request not yet served.
type pend struct {
	t      int64 // ps: logged time on the caller's timeline
	base   int64 // the CPU's shift when the caller logged it
	line   int32
	op     Op
	indep  bool
	notify bool
	tag    int32
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
	cpu int32
	// rate is rp.rate for this CPU and the line's home: how often the
	// miss is re-presented while it waits (presentRate), fixed at arrival.
	rate   uint32
	arrive int64
	op     Op
	notify bool
	tag    int32
	out    int64 // the outRead id of an Indep read, or -1
}

type replayLine struct {
	freeAt  int64 // ps: the line is busy with a transaction until then
	serveAt int64 // time of the pending evServe when pending
	pending bool
	holder  int   // lock holder, or -1
	home    int32 // the Line's Home, which never changes
	waiters []waiter
	touched bool // has stats in this call
	// st is what happened to the line: in this call, or over every call
	// under KeepTotals. It lives here, beside the queue every request
	// reads anyway, rather than in ReplayResult.Lines (filled from it).
	st LineStats
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
		if want := max(p.t+cpu.shift-p.base, cpu.doneAt); want > now {
			rp.wake(c, min(want, deadline))
			return
		}
		if cpu.out.len() > 0 && (!p.indep || cpu.out.len() >= rp.mlp) {
			rp.block(c, now)
			return
		}
		setBit(rp.dirty, c) // its queue moves: compacted at a later call
		cpu.next++
		l := &rp.ls[p.line]
		st := rp.touch(p.line)
		if p.op == Read && rp.lines[p.line].Holds(c) {
			// A load that hits in the CPU's own cache completes at
			// once: it never reaches the line's home, so it neither
			// waits behind the line's transactions nor takes part in
			// the draw (serve). The line's state is as the
			// transactions served before now left it.
			st.Accesses++
			st.Ops[Read]++
			rp.npend--
			cpu.doneAt = max(cpu.doneAt, now)
			if p.notify {
				rp.res.Notices = append(rp.res.Notices, Notice{CPU: int32(c), PS: now})
			}
			continue
		}
		if p.op == Lock && l.holder != -1 {
			st.LockWaits++
		}
		wt := waiter{cpu: int32(c), rate: rp.rate[rp.homeRemote(c, int(l.home))], arrive: now, op: p.op, notify: p.notify, tag: p.tag, out: -1}
		if p.indep {
			cpu.outSeq++
			wt.out = cpu.outSeq
			cpu.out.push(outRead{id: cpu.outSeq, tau: now - cpu.shift, line: p.line, tag: p.tag})
		} else {
			cpu.waiting, cpu.blockedOn = true, -1
			setBit(rp.waitSet, c)
			cpu.waitSince, cpu.accrued, cpu.waitTag, cpu.waitLine = now, 0, p.tag, p.line
		}
		if len(l.waiters) == 0 && l.freeAt <= now && (p.op != Lock || l.holder == -1) {
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
}

func (rp *Replayer) touch(li int32) *LineStats {
	l := &rp.ls[li]
	if !l.touched && !rp.totals {
		l.touched = true
		rp.res.Touched = append(rp.res.Touched, li)
	}
	return &l.st
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
	eligible := func(w *waiter) bool { return w.op != Lock || !held }
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
		if l.waiters[pick].op == Lock {
			// A lock is handed over in its queue's order (the
			// qspinlock's MCS queue): the earliest locker.
			for i := range l.waiters {
				w := &l.waiters[i]
				p := &l.waiters[pick]
				if w.op == Lock && (w.arrive < p.arrive || w.arrive == p.arrive && w.cpu < p.cpu) {
					pick = i
				}
			}
		}
	}
	w := l.waiters[pick]
	if n := len(l.waiters) - 1; pick == n {
		l.waiters = l.waiters[:n]
	} else {
		l.waiters = append(l.waiters[:pick], l.waiters[pick+1:]...)
	}
	rp.serveWaiter(li, w, now)
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
	var cost AccessCost
	var costPS int64
	if rp.pr != nil {
		cost, costPS = rp.pr.access(rp.m, line, c, w.op)
	} else {
		cost = rp.m.Access(line, c, w.op)
		costPS = ps(cost.NS)
	}
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
	if w.op == Read && (cost.Kind == Hit || cost.Kind == Transfer && cost.FromSharer) {
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
	if w.notify {
		rp.res.Notices = append(rp.res.Notices, Notice{CPU: w.cpu, PS: finish})
	}
	switch {
	case w.out < 0:
		// The CPU's blocking request: the whole wait and the transfer
		// are its stall, less what accrue already reported.
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
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d's read %d served but not in flight", c, w.out))
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

// checkDone panics if requests wait with no event left to serve them.
func (rp *Replayer) checkDone() {
	if rp.npend == 0 {
		return // every request served: no CPU waits or holds one back
	}
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

// pending reports whether any event is pending; nextT is the time of the
// next one.
func (rp *Replayer) pending() bool { return rp.hasNext || len(rp.nowq) > 0 || len(rp.q) > 0 }

func (rp *Replayer) nextT() int64 {
	switch {
	case rp.hasNext:
		return rp.next.t
	case len(rp.nowq) > 0:
		return rp.cur
	}
	return rp.q[0].t
}

// push queues e. An event that comes before everything queued (a serve of
// a free line, a CPU going on at once: about half of all events) is kept
// in next and popped without a heap operation; the one it displaces goes
// to the heaps. Those hold the others: in nowq if at the current time,
// else in q.
func (rp *Replayer) push(e event) {
	switch {
	case rp.hasNext:
		if e.less(rp.next) {
			e, rp.next = rp.next, e
		}
	case rp.beforeQueued(e):
		rp.next, rp.hasNext = e, true
		return
	}
	if e.t == rp.cur {
		rp.nowq = pushKey(rp.nowq, e.key)
		return
	}
	rp.q = pushEvent(rp.q, e)
}

// beforeQueued reports whether e comes before every event in the heaps.
func (rp *Replayer) beforeQueued(e event) bool {
	return (len(rp.nowq) == 0 || e.less(event{t: rp.cur, key: rp.nowq[0]})) && (len(rp.q) == 0 || e.less(rp.q[0]))
}

// pop takes the next event: next if set (it comes before everything in
// the heaps), else the least of (t, key) over both heaps.
func (rp *Replayer) pop() event {
	if rp.hasNext {
		// Nothing queued is earlier, so nowq is empty unless next is at
		// cur: the clock may move to it.
		rp.hasNext = false
		rp.cur = rp.next.t
		return rp.next
	}
	if len(rp.nowq) > 0 && (len(rp.q) == 0 || rp.q[0].t > rp.cur || rp.q[0].key > rp.nowq[0]) {
		var k uint64
		rp.nowq, k = popKey(rp.nowq)
		return event{t: rp.cur, key: k}
	}
	var e event
	rp.q, e = popEvent(rp.q)
	rp.cur = e.t
	return e
}

// pushEvent and popEvent keep a 4-ary min-heap by event.less: half the
// depth of a binary heap, and a node's four children lie side by side.
func pushEvent(q []event, e event) []event {
	q = append(q, e)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.less(q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
	return q
}

func popEvent(q []event) ([]event, event) {
	top := q[0]
	n := len(q) - 1
	e := q[n]
	q = q[:n]
	if n == 0 {
		return q, top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q[k].less(q[m]) {
				m = k
			}
		}
		if !q[m].less(e) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = e
	return q, top
}

// pushKey and popKey are the same heap over bare keys.
func pushKey(q []uint64, k uint64) []uint64 {
	q = append(q, k)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if k >= q[p] {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = k
	return q
}

func popKey(q []uint64) ([]uint64, uint64) {
	top := q[0]
	n := len(q) - 1
	k := q[n]
	q = q[:n]
	if n == 0 {
		return q, top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < c+4 && j < n; j++ {
			if q[j] < q[m] {
				m = j
			}
		}
		if q[m] >= k {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = k
	return q, top
}
