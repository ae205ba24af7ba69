package hwmodel

import (
	"math"
	"math/bits"
	"slices"
)

// PS is ns in whole ps, rounded: the weave's unit of time.
func PS(ns float64) int64 { return int64(math.Round(ns * 1000)) }

// Pricer is Machine.Access for the weave's inner loop, priced in whole ps
// from tables made once per replay (Machine.NewPricer). The replay reads
// the machine's latencies once, when it is made, and so does this.
//
// A transfer's cost depends only on its distance class and on whether the
// line's home is on another package than the requester (TransferNS), not
// on which CPU sends it: so the nearest (or farthest) sharer of a line is
// the first class, in order of cost, that holds a sharer, and the sharers
// themselves are looked at only to break a tie between classes of equal
// cost (the lowest-numbered CPU wins, as in sharerByClass). Every price is
// PS() of the float64 that TransferNS or memNS returns, so the ps are the
// same bits Access and PS() give; TestReplayPrices holds the two paths
// together. A machine without topology tables (built by hand) is priced
// with Access itself.
type Pricer struct {
	m *Machine
	t *topoTables // nil: Access
	// xfer[hr][k] is PS(TransferNS) for class k, hr: the home is remote.
	xfer   [2][NumClasses]int64
	xferNS [2][NumClasses]float64
	mem    [2]int64 // PS(memNS): [hr]
	// order[(cpu*2+hr)*2+far] lists the classes ClassSMT..ClassRemote
	// that have CPUs for cpu, by cost, cheapest (far 0) or dearest (far
	// 1) first, cut into runs of equal cost.
	order []classOrder
	// span[cpu*NumClasses+k] is the range of words of classMask in which
	// class k of cpu has bits.
	span []wordSpan
}

type wordSpan struct{ lo, hi int32 }

// classOrder is a list of classes; end marks the last of each run.
type classOrder struct {
	k   [NumClasses]Class
	end [NumClasses]bool
	n   int
}

// NewPricer returns the machine's Pricer.
func (m *Machine) NewPricer() *Pricer {
	t := m.tables()
	p := &Pricer{m: m, t: t}
	if t == nil {
		return p
	}
	for hr := range 2 {
		for k := range NumClasses {
			ns := m.Lat.Transfer[k]
			if hr == 1 && k != ClassRemote && k != ClassSelf {
				ns += m.Lat.HomeRemote
			}
			p.xferNS[hr][k], p.xfer[hr][k] = ns, PS(ns)
		}
	}
	p.mem = [2]int64{PS(m.Lat.MemLocal), PS(m.Lat.MemRemote)}
	p.span = make([]wordSpan, len(t.classMask))
	for i, mask := range t.classMask {
		s := wordSpan{lo: int32(len(mask)), hi: 0}
		for w, x := range mask {
			if x != 0 {
				s.lo, s.hi = min(s.lo, int32(w)), int32(w)+1
			}
		}
		p.span[i] = s
	}
	n := len(m.CPUs)
	p.order = make([]classOrder, n*4)
	for cpu := 0; cpu < n; cpu++ {
		for hr := range 2 {
			for far := range 2 {
				o := &p.order[(cpu*2+hr)*2+far]
				for _, run := range p.runs(hr, far == 1) {
					for _, k := range run {
						if s := p.span[cpu*int(NumClasses)+int(k)]; s.lo < s.hi {
							o.k[o.n] = k
							o.n++
						}
					}
					if o.n > 0 {
						o.end[o.n-1] = true
					}
				}
			}
		}
	}
	return p
}

// runs orders the transfer classes by cost and cuts equal costs into runs.
func (p *Pricer) runs(hr int, far bool) [][]Class {
	ks := []Class{ClassSMT, ClassL2, ClassLLC, ClassSocket, ClassRemote}
	ns := &p.xferNS[hr]
	slices.SortStableFunc(ks, func(a, b Class) int {
		switch {
		case ns[a] == ns[b]:
			return 0
		case (ns[a] < ns[b]) != far:
			return -1
		}
		return 1
	})
	var out [][]Class
	for i, k := range ks {
		if i == 0 || ns[k] != ns[ks[i-1]] {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], k)
	}
	return out
}

// HomeRemote is 1 if NUMA node home (a line's) is on another package
// than cpu, else 0: from the tables when the machine has them, so that a
// request does not go through the lazily built tables' sync.OnceValue.
func (p *Pricer) HomeRemote(cpu, home int) int {
	if p.t == nil {
		if p.m.homeIsRemote(cpu, home) {
			return 1
		}
		return 0
	}
	if home < 0 || home >= p.t.nodes || !p.t.homeRemote[cpu*p.t.nodes+home] {
		return 0
	}
	return 1
}

// firstIn is the lowest sharer of l in class k of cpu, or -1.
func (p *Pricer) firstIn(l *Line, cpu int, k Class) int {
	i := cpu*int(NumClasses) + int(k)
	mask, s, words := p.t.classMask[i], p.span[i], l.words()
	for w := s.lo; w < s.hi; w++ {
		if y := words[w] & mask[w]; y != 0 {
			return int(w)*64 + bits.TrailingZeros64(y)
		}
	}
	return -1
}

// sharer is sharerByClass: the class of the cheapest (far false) or
// dearest (far true) sharer of l other than cpu, and its cost in ps.
func (p *Pricer) sharer(l *Line, cpu, hr int, far bool) (k Class, costPS int64, ok bool) {
	i := (cpu*2 + hr) * 2
	if far {
		i++
	}
	o := &p.order[i]
	from := -1
	for j := 0; j < o.n; j++ {
		c := o.k[j]
		if f := p.firstIn(l, cpu, c); f >= 0 && (from < 0 || f < from) {
			from, k = f, c
		}
		if o.end[j] && from >= 0 {
			return k, p.xfer[hr][k], true
		}
	}
	return 0, 0, false
}

// Access is m.Access(l, cpu, op) with its cost in ps: the same state
// change, kind, class, invalidations and sharer flag, and PS(cost.NS);
// from the tables, the AccessCost's NS is left zero.
func (p *Pricer) Access(l *Line, cpu int, op Op) (AccessCost, int64) {
	m := p.m
	if p.t == nil {
		c := m.Access(l, cpu, op)
		return c, PS(c.NS)
	}
	hr := p.HomeRemote(cpu, int(l.Home))
	switch op {
	case Read:
		if l.Holds(cpu) {
			return AccessCost{Kind: Hit}, 0
		}
		if l.owner >= 0 {
			from := int(l.owner)
			k := m.Class(cpu, from)
			l.owner = -1
			l.burst = 0
			l.addSharer(from)
			l.addSharer(cpu)
			return AccessCost{Kind: Transfer, Class: k}, p.xfer[hr][k]
		}
		if l.nshare > 0 {
			k, c, _ := p.sharer(l, cpu, hr, false)
			l.addSharer(cpu)
			return AccessCost{Kind: Transfer, Class: k, FromSharer: true}, c
		}
		l.owner = int16(cpu)
		l.burst = 0
		return AccessCost{Kind: Fill}, p.mem[hr]
	default:
		if int(l.owner) == cpu {
			l.ownerStore()
			return AccessCost{Kind: Hit}, 0
		}
		var c AccessCost
		var cps int64
		switch {
		case l.owner >= 0:
			k := m.Class(cpu, int(l.owner))
			c, cps = AccessCost{Kind: Transfer, Class: k}, p.xfer[hr][k]
		case l.nshare > 0:
			c.Kind = Invalidate
			c.Invalidated = int(l.nshare)
			if l.isSharer(cpu) {
				c.Invalidated--
			}
			if k, x, ok := p.sharer(l, cpu, hr, true); ok {
				c.Class, cps = k, x
			}
		default:
			c, cps = AccessCost{Kind: Fill}, p.mem[hr]
		}
		l.clearSharers()
		l.owner = int16(cpu)
		l.burst = 1
		return c, cps
	}
}
