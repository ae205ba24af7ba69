package weave

import (
	"sort"

	"github.com/rqemu/rqemu/hwmodel"
)

// The exact fast path (issue 41 item 1). A CPU's request whose service no
// other CPU can see or change is served when act reaches it, ahead of the
// replay's clock, instead of through an arrival event at its issue time:
// a CPU's run of such requests advances its clock in one pass of act. Per
// call (Advance), each line is classified by the requests pending on it:
//
//   - private: every request pending on it is one CPU's (pendCPU). No other
//     CPU touches it before the call ends, so its state, its queue and its
//     busy time move only with that CPU's requests: one that finds the
//     line free and unqueued is served at once (act's own rule) at a
//     price that depends on the CPU's own order only;
//   - read-only: no request pending on it but Reads (pendW == 0). A CPU
//     that holds it keeps it to the end of the call (another CPU's read
//     moves an owner to Shared, and it still hits): its reads hit;
//   - contended: the rest, served in time order through the event queue.
//
// Stays in the time-ordered replay: a miss on a read-only line (its price
// is the nearest sharer's, and the sharers are whoever read it first; a
// forward from an owner holds the line busy), any request that queues
// (the wait depends on the line's other traffic or the CPU's own earlier
// transaction), and a Notify request (the weave lists notices in the
// order served). act goes ahead only while every independent read the CPU
// has in flight has its data time known (a serve of its line would
// otherwise move it), and not to the call's end or past it.
//
// What other CPUs read of the CPU meanwhile is its place in its stream
// (keeperDue: is the owner about to issue to the line?): act keeps where it
// was due at each time it went on at (ahead), so that a serve at an
// earlier time sees the CPU as the ordered replay would have.

// aheadAt is one time act went on at: the CPU was due then, with request
// next.
type aheadAt struct {
	t    int64
	next int
}

// act lets CPU c, free at time now (an evArrive), retire the reads that
// have arrived and issue what it can; then, while only private requests
// are due, it goes on at the CPU's next time itself rather than through
// the event queue.
func (rp *Replayer) act(c int, now int64) {
	cpu := &rp.cpus[c]
	rp.acting, rp.ahead, rp.stop = c, false, false
	cpu.ahead = cpu.ahead[:0]
	for {
		cpu.armed = false
		rp.step(c, now)
		if !cpu.armed || rp.stop {
			break
		}
		t := cpu.nextAt
		if t == now && !rp.ahead {
			continue // due again at once: the next event in any case
		}
		if rp.ordered || !rp.canGoOn(c, t) {
			break
		}
		if t > rp.now {
			rp.ahead = true
			cpu.ahead = append(cpu.ahead, aheadAt{t: t, next: cpu.next})
		}
		now = t
	}
	rp.acting, rp.ahead = -1, false
	if cpu.armed {
		rp.push(mkEvent(cpu.nextAt, evArrive, int32(c)))
	}
}

// canGoOn reports whether act may go on with CPU c at time t, ahead of
// the replay's clock: before the call's end, with no read in flight whose
// data time a serve could still set, and with a next request it could
// serve there (else going on would only stop at it).
func (rp *Replayer) canGoOn(c int, t int64) bool {
	cpu := &rp.cpus[c]
	if t >= rp.untilPS || cpu.next < len(cpu.reqs) && !rp.private(c, &cpu.reqs[cpu.next], t) {
		return false
	}
	for _, o := range cpu.out.live() {
		if o.finish == 0 {
			return false
		}
	}
	return true
}

// private reports whether CPU c's request p, due at now, is served now
// whatever the other CPUs do before now: a hit on a line it holds that is
// private or read-only, or a request that finds its private line free and
// unqueued. It names the case act then takes, so that act serves it as it
// would in time order.
func (rp *Replayer) private(c int, p *pend, now int64) bool {
	if p.notify {
		return false
	}
	l := &rp.ls[p.line]
	mine := l.pendCPU == int32(c)
	if p.op == hwmodel.Read && (mine || l.pendW == 0) && rp.lines[p.line].Holds(c) {
		return true
	}
	return mine && len(l.waiters) == 0 && l.freeAt <= now && (p.op != hwmodel.Lock || l.holder == -1)
}

// dueAt is CPU c as the ordered replay would show it to the event being
// processed at time now (a serve, or the arrival of CPU rp.acting):
// whether an arrival of c is pending, at when, and its next request. It
// differs from c's own fields only while act has gone on past now: c
// passed a time it went on at if that time's arrival comes before the
// event in the order of (t, kind, who).
func (rp *Replayer) dueAt(c int, now int64) (armed bool, nextAt int64, next int) {
	cpu := &rp.cpus[c]
	self := rp.acting
	passed := func(t int64) bool { return t < now || t == now && (self < 0 || c <= self) }
	if n := len(cpu.ahead); n > 0 && !passed(cpu.ahead[n-1].t) {
		j := sort.Search(n, func(j int) bool { return !passed(cpu.ahead[j].t) })
		return true, cpu.ahead[j].t, cpu.ahead[j].next
	}
	return cpu.armed, cpu.nextAt, cpu.next
}

// added counts CPU c's new request on line li as pending.
func (rp *Replayer) added(c int, li int32, op hwmodel.Op) {
	rp.npend++
	l := &rp.ls[li]
	switch {
	case l.pendN == 0:
		l.pendCPU = int32(c)
	case l.pendCPU != int32(c):
		l.pendCPU = -2
	}
	l.pendN++
	if op != hwmodel.Read {
		l.pendW++
	}
}

// served counts a request on line li as served.
func (rp *Replayer) served(li int32, op hwmodel.Op) {
	rp.npend--
	l := &rp.ls[li]
	l.pendN--
	if op != hwmodel.Read {
		l.pendW--
	}
	if l.pendN == 0 {
		l.pendCPU = -1
	}
}
