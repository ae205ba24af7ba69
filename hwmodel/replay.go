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
}

// LineStats counts what happened to one line during a replay.
type LineStats struct {
	Accesses      int
	Transfers     [NumClasses]int // by distance class of the transfer
	Invalidations int             // copies invalidated by stores
	Fills         int             // fills from DRAM
	LockWaits     int             // Lock requests that found the lock held
	StallNS       float64         // total stall paid on this line
}

// ReplayResult is the outcome of a replay.
type ReplayResult struct {
	// Stall[c][i] is the delay of CPU c's i-th request beyond its
	// uncontended cost (UncontendedNS), in ns: waiting for the line (or
	// the lock) plus the transfer. Later requests of the same CPU are
	// issued that much later, so stalls propagate down the stream.
	Stall [][]float64
	// CPUStall[c] is the sum of Stall[c].
	CPUStall []float64
	Lines    []LineStats
	// Touched lists the lines the streams used (the only non-zero
	// entries of Lines).
	Touched []int32
}

// Replay runs the CPUs' access streams against the lines through the
// coherence model and returns each access's stall. It is the "weave" of
// DESIGN.md: a discrete-event simulation in which
//
//   - each CPU's requests are sequential: request i+1 is issued at its
//     logged time plus every stall the CPU has suffered so far;
//   - each line serves one store/RMW/transfer at a time (RMWs serialize),
//     for the transfer latency plus the RMW's own latency;
//   - when a line frees, the owner's waiting request goes first while the
//     owner Keeps the line (the burst effect), else the earliest waiter,
//     ties broken by the lowest CPU;
//   - a Lock waits until the lock is free, then is served first come
//     first served like a queued spinlock hand-over;
//   - requests arriving at the same instant are all queued before any is
//     served.
//
// Streams must be sorted by time. Lines keep their coherence state across
// replays (owner, sharers); occupancy and queues start empty each time.
// The result depends only on the inputs: time is kept in integer
// picoseconds and every tie has a fixed order.
//
// Replay allocates its working state each call; a caller that replays
// repeatedly (the weave, every epoch) keeps a Replayer instead.
func (m *Machine) Replay(lines []*Line, streams [][]Req) *ReplayResult {
	return m.NewReplayer().Replay(lines, streams)
}

// Replayer runs Replay with reusable scratch memory. Not safe for
// concurrent use. The result of a call is valid until the next call.
type Replayer struct {
	r       replay
	res     ReplayResult
	touched []int32 // lines used by the last replay
}

// NewReplayer returns a Replayer for the machine.
func (m *Machine) NewReplayer() *Replayer { return &Replayer{r: replay{m: m}} }

// Replay is Machine.Replay reusing the Replayer's memory.
func (rp *Replayer) Replay(lines []*Line, streams [][]Req) *ReplayResult {
	r := &rp.r
	res := &rp.res
	r.lines = lines
	r.res = res
	// Reset what the last replay touched; grow to the line count.
	for _, li := range rp.touched {
		if int(li) < len(r.ls) {
			r.ls[li] = replayLine{holder: -1}
		}
		if int(li) < len(res.Lines) {
			res.Lines[li] = LineStats{}
		}
	}
	rp.touched = rp.touched[:0]
	for len(r.ls) < len(lines) {
		r.ls = append(r.ls, replayLine{holder: -1})
	}
	for len(res.Lines) < len(lines) {
		res.Lines = append(res.Lines, LineStats{})
	}
	res.Lines = res.Lines[:len(lines)]
	if cap(r.cpus) < len(streams) {
		r.cpus = make([]replayCPU, len(streams))
		res.Stall = make([][]float64, len(streams))
		res.CPUStall = make([]float64, len(streams))
	}
	r.cpus = r.cpus[:len(streams)]
	res.Stall = res.Stall[:len(streams)]
	res.CPUStall = res.CPUStall[:len(streams)]
	r.q = r.q[:0]
	r.seq = 0
	for c, s := range streams {
		r.cpus[c] = replayCPU{reqs: s}
		res.CPUStall[c] = 0
		if cap(res.Stall[c]) < len(s) {
			res.Stall[c] = make([]float64, len(s))
		}
		res.Stall[c] = res.Stall[c][:len(s)]
		clear(res.Stall[c])
		for i := 1; i < len(s); i++ {
			if s[i].T < s[i-1].T {
				panic(fmt.Sprintf("hwmodel: Replay: CPU %d stream not sorted at request %d (t=%d after t=%d)", c, i, s[i].T, s[i-1].T))
			}
		}
		for _, q := range s {
			if int(q.Line) >= 0 && int(q.Line) < len(lines) && !r.ls[q.Line].used {
				r.ls[q.Line].used = true
				rp.touched = append(rp.touched, q.Line)
			}
		}
		if len(s) > 0 {
			r.cpus[c].nextAt = s[0].T * 1000
			r.push(event{t: s[0].T * 1000, kind: evArrive, who: int32(c)})
		}
	}
	r.rmwPS = ps(r.m.Lat.RMWLocal)
	for len(r.q) > 0 {
		e := r.pop()
		if e.kind == evArrive {
			r.arrive(int(e.who), e.t)
		} else {
			r.serve(int(e.who), e.t)
		}
	}
	r.checkDone()
	res.Touched = rp.touched
	return res
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

type replayCPU struct {
	reqs  []Req
	next  int
	shift int64 // ps of stall so far
	// nextAt is when the CPU issues reqs[next], valid while an arrive
	// event for it is pending (the CPU is not waiting on a line).
	nextAt int64
	queued bool // reqs[next] is in some line's waiters
}

type waiter struct {
	cpu    int32
	arrive int64
}

type replayLine struct {
	freeAt  int64 // the line is busy with a transaction until then
	serveAt int64 // time of the pending evServe when pending
	pending bool
	holder  int // lock holder, or -1
	waiters []waiter
	used    bool // touched by this replay
}

type replay struct {
	m     *Machine
	lines []*Line
	cpus  []replayCPU
	ls    []replayLine
	q     []event
	seq   uint64
	rmwPS int64
	res   *ReplayResult
}

func (r *replay) arrive(c int, t int64) {
	cpu := &r.cpus[c]
	req := cpu.reqs[cpu.next]
	if int(req.Line) < 0 || int(req.Line) >= len(r.lines) {
		panic(fmt.Sprintf("hwmodel: Replay: CPU %d request %d names line %d of %d", c, cpu.next, req.Line, len(r.lines)))
	}
	cpu.queued = true
	l := &r.ls[req.Line]
	if req.Op == Lock && l.holder != -1 {
		r.res.Lines[req.Line].LockWaits++
	}
	l.waiters = append(l.waiters, waiter{cpu: int32(c), arrive: t})
	r.schedule(int(req.Line), max(t, l.freeAt))
}

// schedule makes sure line li gets a serve event at time t.
func (r *replay) schedule(li int, t int64) {
	l := &r.ls[li]
	if l.pending && l.serveAt <= t {
		return
	}
	l.pending = true
	l.serveAt = t
	r.push(event{t: t, kind: evServe, who: int32(li)})
}

func (r *replay) serve(li int, now int64) {
	l := &r.ls[li]
	if !l.pending || now != l.serveAt {
		return // superseded by an earlier serve event
	}
	l.pending = false
	if len(l.waiters) == 0 {
		return
	}
	if now < l.freeAt {
		r.schedule(li, l.freeAt)
		return
	}
	line := r.lines[li]
	pick := -1
	owner := line.Owner()
	if owner >= 0 && r.m.Keeps(line, owner) {
		// The burst effect needs the owner's next RMW to be ready when
		// the line frees; a core issuing back to back is "ready" within
		// one RMW latency (virtual time is integer ns, so logged gaps
		// jitter by up to 1 ns). If it is about to issue to this line,
		// wait for it rather than hand the line over.
		oc := &r.cpus[owner]
		if !oc.queued && oc.next < len(oc.reqs) && int(oc.reqs[oc.next].Line) == li &&
			oc.nextAt > now && oc.nextAt <= now+r.rmwPS+1000 {
			r.schedule(li, oc.nextAt)
			return
		}
	}
	for i, w := range l.waiters {
		if !r.eligible(l, int(w.cpu)) {
			continue
		}
		if int(w.cpu) == owner && r.m.Keeps(line, owner) {
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
	cpu := &r.cpus[c]
	req := cpu.reqs[cpu.next]
	st := &r.res.Lines[li]
	st.Accesses++
	cost := r.m.Access(line, c, req.Op)
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
	if req.Op == RMW || req.Op == Lock {
		busy += r.rmwPS
	}
	if req.Op == Read && (cost.Kind == Hit || cost.Kind == Transfer && cost.FromSharer) {
		// A hit, or a clean forward of a line already Shared: the
		// line is not being moved out of anyone's ownership, so
		// concurrent readers are served in parallel and only pay
		// their own latency.
		busy = 0
	}
	l.freeAt = now + busy
	switch req.Op {
	case Lock:
		if l.holder == c {
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d takes lock line %d that it already holds (request %d)", c, li, cpu.next))
		}
		l.holder = c
	case Unlock:
		if l.holder != c {
			panic(fmt.Sprintf("hwmodel: Replay: CPU %d releases lock line %d held by %d (request %d)", c, li, l.holder, cpu.next))
		}
		l.holder = -1
	}
	stall := now - w.arrive + costPS
	cpu.shift += stall
	sns := float64(stall) / 1000
	r.res.Stall[c][cpu.next] = sns
	r.res.CPUStall[c] += sns
	st.StallNS += sns
	cpu.next++
	cpu.queued = false
	if cpu.next < len(cpu.reqs) {
		cpu.nextAt = cpu.reqs[cpu.next].T*1000 + cpu.shift
		r.push(event{t: cpu.nextAt, kind: evArrive, who: int32(c)})
	}
	if len(l.waiters) > 0 {
		r.schedule(li, l.freeAt)
	}
}

// eligible: a Lock request may be served only when the lock is free.
func (r *replay) eligible(l *replayLine, c int) bool {
	cpu := &r.cpus[c]
	return cpu.reqs[cpu.next].Op != Lock || l.holder == -1
}

func (r *replay) checkDone() {
	var stuck []string
	for c := range r.cpus {
		cpu := &r.cpus[c]
		if cpu.next < len(cpu.reqs) {
			req := cpu.reqs[cpu.next]
			stuck = append(stuck, fmt.Sprintf("CPU %d waits on line %d (%v, lock held by CPU %d)", c, req.Line, req.Op, r.ls[req.Line].holder))
		}
	}
	if len(stuck) > 0 {
		panic("hwmodel: Replay: requests never served (a lock taken and not released in the streams): " + strings.Join(stuck, "; "))
	}
}

func (r *replay) push(e event) {
	r.seq++
	e.seq = r.seq
	r.q = append(r.q, e)
	i := len(r.q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !r.q[i].less(&r.q[p]) {
			break
		}
		r.q[i], r.q[p] = r.q[p], r.q[i]
		i = p
	}
}

func (r *replay) pop() event {
	top := r.q[0]
	n := len(r.q) - 1
	r.q[0] = r.q[n]
	r.q = r.q[:n]
	i := 0
	for {
		l, rr, s := 2*i+1, 2*i+2, i
		if l < n && r.q[l].less(&r.q[s]) {
			s = l
		}
		if rr < n && r.q[rr].less(&r.q[s]) {
			s = rr
		}
		if s == i {
			break
		}
		r.q[i], r.q[s] = r.q[s], r.q[i]
		i = s
	}
	return top
}
