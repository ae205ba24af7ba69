package weave

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/rqemu/rqemu/hwmodel"
)

// Req is one access to a shared line in one CPU's stream, stamped with the
// virtual time at which the CPU issued it on its own, uncontended timeline.
type Req struct {
	T    int64 // virtual ns
	Line int32 // index into the lines given to Replay
	Op   hwmodel.Op
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
	// Locked marks a Write or Unlock that is a locked instruction (a
	// lock cmpxchg or xchg, as mutex_unlock()'s): it drains the store
	// buffer like an RMW rather than entering it. RMW and Lock always do.
	Locked bool
	// Level is the cache level the line has aged to in the CPU's own
	// caches (hwmodel.Capacity.Level): a hit costs that level's latency.
	Level uint8
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

// LineCounts counts what happened to one line during a replay. (Its
// fields are in the order a request served reads them: see replayLine.)
type LineCounts struct {
	Accesses int
	StallNS  float64 // total stall paid on this line
	// BusyPS is the time the line spent serving transactions (a store,
	// RMW or transfer occupies it; reads of a shared copy do not), in ps.
	BusyPS        int64
	Transfers     [hwmodel.NumClasses]int // by distance class of the transfer
	Ops           [hwmodel.NumOps]int     // Accesses by op
	Invalidations int                     // copies invalidated by stores
	Fills         int                     // fills from DRAM
	LockWaits     int                     // Lock requests that found the lock held
	// HeldPS is, for a lock line, the time its lock was held: from each
	// Lock's completion to its Unlock's, in ps (a critical section's
	// length, counted when it ends); Releases counts those Unlocks.
	HeldPS   int64
	Releases int
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
	// Lines is what happened to each line in this call; empty for a
	// Replayer that KeepTotals (Totals has the running totals).
	Lines []LineCounts
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
func Replay(m *hwmodel.Machine, lines []*hwmodel.Line, streams [][]Req) *ReplayResult {
	rp := NewReplayer(m)
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
	m     *hwmodel.Machine
	lines []*hwmodel.Line
	cpus  []replayCPU
	ls    []replayLine
	// The pending events: a heap (internal/heap) and next, when
	// hasNext, the least of them, held out of the heap (see push).
	q       []event
	next    event
	hasNext bool
	now     int64 // ps: the replay's clock (the last event, or the last until)
	rmwPS   int64
	// windowPS and mlp: Lat.Window in ps and Lat.MLP (at least 1).
	windowPS int64
	mlp      int
	// rate[hr] is how often a waiting miss is re-presented to the line's
	// home (see serve), per ms: the inverse of its round trip to the home
	// agent, from the home's package (hr 0) or across the link (hr 1).
	rate [2]uint32
	// pr prices the accesses; capPS[lvl] a hit on a line aged to cache
	// level lvl (hwmodel.Capacity).
	pr    *hwmodel.Pricer
	capPS [hwmodel.NumLevels]int64
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
	// hits are, by line, the read hits not yet in the line's st, under
	// KeepTotals (hit).
	hits []uint64
	// spin[tag] are the tags a Lock of tag waits at while the lock is
	// held (SetLockSpin); set is false for a tag without.
	spin []spinTags
}

type spinTags struct {
	set             bool
	onOwner, queued int32
}

// SetLockSpin charges the wait of a Lock of tag lock that finds the lock
// held to onOwner, or to queued when another Lock already waits for the
// line, until the line starts serving it (Space's LockSpin).
func (rp *Replayer) SetLockSpin(lock, onOwner, queued int32) {
	for int(lock) >= len(rp.spin) {
		rp.spin = append(rp.spin, spinTags{})
	}
	rp.spin[lock] = spinTags{set: true, onOwner: onOwner, queued: queued}
}

// spinTag is the tag a Lock of tag that finds the lock of line l held
// waits at (the head's, when no other Lock waits: mutex_spin_on_owner();
// else the queue's, osq_lock()), or -1 for a tag without spin tags.
func (rp *Replayer) spinTag(tag int32, l *replayLine) int32 {
	if int(tag) >= len(rp.spin) || !rp.spin[tag].set {
		return -1
	}
	for i := range l.waiters {
		if l.waiters[i].op == hwmodel.Lock {
			return rp.spin[tag].queued
		}
	}
	return rp.spin[tag].onOwner
}

// KeepTotals makes the Replayer keep running totals of the lines'
// statistics over all calls (Totals) rather than hand out each call's
// own: ReplayResult.Lines and Touched stay empty, and a caller that sums
// the lines' statistics anyway is spared a pass over every line a call
// touched (thousands per call on the studies' machines). Call it before
// the first Advance.
func (rp *Replayer) KeepTotals() { rp.totals = true }

// Logged returns, by line and op, every request added so far: those
// served (Totals' Ops) and those not yet, whether still to be issued or
// waiting at their line; only for a Replayer that KeepTotals.
func (rp *Replayer) Logged() [][hwmodel.NumOps]int64 {
	if !rp.totals {
		panic("weave: Replayer.Logged without KeepTotals")
	}
	out := make([][hwmodel.NumOps]int64, len(rp.ls))
	for li := range rp.ls {
		rp.flushHits(li)
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
		for _, e := range cpu.sb.live() {
			if !e.issued {
				out[e.line][e.op]++
			}
		}
	}
	return out
}

// LineTotal is one line's entries of Totals and Logged, without a pass
// over every line (a measurement window reads one line at each of its
// boundaries); ok is false for a line the replay has not seen.
func (rp *Replayer) LineTotal(li int) (st LineCounts, logged [hwmodel.NumOps]int64, ok bool) {
	if !rp.totals {
		panic("weave: Replayer.LineTotal without KeepTotals")
	}
	if li < 0 || li >= len(rp.ls) {
		return LineCounts{}, logged, false
	}
	rp.flushHits(li)
	l := &rp.ls[li]
	for op, n := range l.st.Ops {
		logged[op] = int64(n)
	}
	for _, w := range l.waiters {
		logged[w.op]++
	}
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		for _, p := range cpu.reqs[cpu.next:] {
			if int(p.line) == li {
				logged[p.op]++
			}
		}
		for _, e := range cpu.sb.live() {
			if !e.issued && int(e.line) == li {
				logged[e.op]++
			}
		}
	}
	return l.st, logged, true
}

// Totals returns the per-line statistics summed over every call so far,
// by line; only for a Replayer that KeepTotals. Valid until the next call.
func (rp *Replayer) Totals() []LineCounts {
	if !rp.totals {
		panic("weave: Replayer.Totals without KeepTotals")
	}
	// Filled only here: a Replayer that keeps totals never hands out
	// each call's Lines, so it does not grow them with every new line.
	out := slices.Grow(rp.res.Lines[:0], len(rp.ls))[:len(rp.ls)]
	for li := range rp.ls {
		rp.flushHits(li)
		out[li] = rp.ls[li].st
	}
	rp.res.Lines = out
	return out
}

// NewReplayer returns a Replayer for the machine, with every line free
// and no request pending.
func NewReplayer(m *hwmodel.Machine) *Replayer {
	rp := &Replayer{m: m, rmwPS: hwmodel.PS(m.Lat.RMWLocal), windowPS: hwmodel.PS(m.Lat.Window), mlp: max(m.Lat.MLP, 1),
		pr: m.NewPricer(), rate: retryRates(m)}
	if c, ok := m.Capacity(); ok {
		rp.capPS = c.PS
	}
	return rp
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
//   - with a store buffer (Lat.StoreBuffer, x86), a plain store (Write,
//     an Unlock not marked Locked) does not stall the CPU: it goes to its
//     line and the CPU goes on, until a locked request (RMW, Lock, or
//     Locked) drains the buffer or the buffer is full; a load of a line
//     with a buffered store is forwarded (replay_store.go);
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
func (rp *Replayer) Advance(lines []*hwmodel.Line, streams [][]Req, until int64) *ReplayResult {
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
func (rp *Replayer) AdvanceCPUs(lines []*hwmodel.Line, streams [][]Req, cpus []int, until int64) *ReplayResult {
	rp.begin(lines, len(streams))
	for k, c := range cpus {
		s := streams[c]
		if len(s) == 0 || k > 0 && c <= cpus[k-1] {
			panic(fmt.Sprintf("weave: Replay: CPU %d listed with an empty stream or out of order (AdvanceCPUs)", c))
		}
		cpu := &rp.cpus[c]
		for i, q := range s {
			if i > 0 && q.T < s[i-1].T {
				panic(fmt.Sprintf("weave: Replay: CPU %d stream not sorted at request %d (t=%d after t=%d)", c, i, q.T, s[i-1].T))
			}
			if int(q.Line) < 0 || int(q.Line) >= len(lines) {
				panic(fmt.Sprintf("weave: Replay: CPU %d request %d names line %d of %d", c, i, q.Line, len(lines)))
			}
			rp.npend++
			cpu.reqs = append(cpu.reqs, pend{at: q.T*1000 - cpu.base, line: q.Line, op: q.Op, indep: q.Indep && q.Op == hwmodel.Read, notify: q.Notify,
				locked: q.Locked && (q.Op == hwmodel.Write || q.Op == hwmodel.Unlock), tag: q.Tag, lvl: min(q.Level, hwmodel.LevelMem)})
		}
		rp.issue(c)
	}
	return rp.run(until)
}

// A call is begin, then each CPU's new requests appended to its reqs
// (with the CPU's base, counted in npend) and issue, then run:
// AdvanceCPUs from Reqs, Space.WeaveUntil from its Logs without them.

// begin starts a call on lines for ncpus CPUs: it makes room for new
// lines and CPUs and resets what the last call reported.
func (rp *Replayer) begin(lines []*hwmodel.Line, ncpus int) {
	if len(lines) < len(rp.lines) {
		panic(fmt.Sprintf("weave: Replayer: %d lines after %d; lines may only be added", len(lines), len(rp.lines)))
	}
	rp.lines = lines
	res := &rp.res
	for _, li := range res.Touched {
		res.Lines[li] = LineCounts{}
		rp.ls[li].touched = false
	}
	res.Touched = res.Touched[:0]
	if n := len(lines) - len(rp.ls); n > 0 {
		rp.ls = slices.Grow(rp.ls, n)
		for _, line := range lines[len(rp.ls):] {
			rp.ls = append(rp.ls, replayLine{holder: -1, home: int32(line.Home)})
		}
		if rp.totals {
			rp.hits = append(rp.hits, make([]uint64, n)...)
		}
		if !rp.totals {
			res.Lines = append(res.Lines, make([]LineCounts, len(lines)-len(res.Lines))...)
		}
	}
	for len(rp.cpus) < ncpus {
		rp.cpus = append(rp.cpus, replayCPU{sbCap: sbCap(rp.m, len(rp.cpus))})
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
}

// issue lets CPU c go on with the requests just added, unless it waits.
func (rp *Replayer) issue(c int) {
	if !rp.cpus[c].waiting {
		rp.resume(c, 0)
	}
}

// run replays up to until (ns, exclusive) and returns the call's result.
func (rp *Replayer) run(until int64) *ReplayResult {
	res := &rp.res
	untilPS := int64(math.MaxInt64)
	if until < math.MaxInt64/1000 {
		untilPS = until * 1000
	}
	for rp.pending() && rp.nextT() < untilPS {
		e := rp.pop()
		rp.now = max(rp.now, e.T)
		who := int(evWho(&e))
		switch evKind(&e) {
		case evArrive:
			if cpu := &rp.cpus[who]; cpu.armed && cpu.nextAt == e.T {
				rp.act(who, e.T)
			}
		case evServe:
			rp.serve(who, e.T)
		default:
			rp.sbRelease(who, e.T)
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
		res.Lines[li], l.st = l.st, LineCounts{}
	}
	return res
}

// psToNSUp is ps in whole ns, rounded up.
func psToNSUp(ps int64) int64 { return (ps + 999) / 1000 }

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
// requests not yet issued (Behind), a request waiting at its line,
// independent reads in flight, whose wait is charged when the CPU blocks
// on them (at the latest when its reorder window runs out), or buffered
// stores not yet served (a drain waits for them). A caller that
// hands out the charges must keep such a CPU in view.
func (rp *Replayer) Owes(c int) bool {
	if c >= len(rp.cpus) {
		return false
	}
	cpu := &rp.cpus[c]
	return rp.Behind(c) || cpu.waiting || cpu.out.len() > 0 || cpu.sb.unserved()
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
