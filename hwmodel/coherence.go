package hwmodel

import "math/bits"

// Op is the kind of an access to a shared cache line.
type Op uint8

const (
	// Read is a load. It is free on a line the CPU already holds.
	Read Op = iota
	// Write is a plain store: it needs the line in Modified state.
	Write
	// RMW is a locked read-modify-write (atomic add, cmpxchg, xchg).
	RMW
	// Lock is a spinlock acquire: an RMW that also waits until the lock
	// is free. Waiters are served first come first served, as the
	// kernel's queued spinlock (MCS) hands the lock over.
	Lock
	// Unlock releases a lock taken with Lock (a store on the lock line).
	Unlock
	NumOps
)

var opNames = [NumOps]string{"read", "write", "rmw", "lock", "unlock"}

func (o Op) String() string {
	if o < NumOps {
		return opNames[o]
	}
	return "op?"
}

// AccessKind says how an access was satisfied.
type AccessKind uint8

const (
	Hit        AccessKind = iota // the CPU already held the line as needed
	Transfer                     // the line came from another core's cache
	Invalidate                   // a shared line was upgraded: other copies invalidated
	Fill                         // the line came from DRAM at its home node
)

// Line is the coherence state of one cache line, as a directory would
// track it: one owner in Modified/Exclusive state, or a set of sharers in
// Shared state, or nobody (in memory at its home node). It is a MESI
// simplification: a clean line read by several CPUs is forwarded by one of
// them (Intel's F and AMD's O states both forward), and a read fill with no
// other copy is Exclusive, so a following store is silent.
//
// A Line is owned by whoever replays accesses to it; it is not safe for
// concurrent use.
type Line struct {
	// Home is the NUMA node whose memory backs the line (first touch),
	// fixed when the line is made.
	Home int16
	// owner is the CPU holding M/E, or -1; nshare counts the CPUs
	// holding S; burst the consecutive stores/RMWs by owner since it took
	// the line, saturated at maxBurst. int16: a machine has at most 8192
	// CPUs (Layout.expand).
	owner, nshare, burst int16
	// inline holds the sharer bits (CPUs holding S) on machines of up to
	// 64*len(inline) CPUs, more on larger ones: the whole state is 64
	// bytes, one host cache line, so that a replay's hit check (Holds)
	// costs one host miss at most on runs with more lines than the host
	// caches hold (a pipe's buffer pages).
	inline [6]uint64
	more   *[]uint64
}

// maxBurst is where burst saturates: above every Lat.Burst (at most 256).
const maxBurst = 1<<15 - 1

// NewLine returns an uncached line homed at node.
func (m *Machine) NewLine(home int) *Line {
	l := &Line{Home: int16(home), owner: -1}
	if n := (len(m.CPUs) + 63) / 64; n > len(l.inline) {
		more := make([]uint64, n)
		l.more = &more
	}
	return l
}

// words are the sharer bits, a word per 64 CPUs (inline's spare words
// are zero).
func (l *Line) words() []uint64 {
	if l.more != nil {
		return *l.more
	}
	return l.inline[:]
}

// Owner is the CPU holding the line Modified or Exclusive, or -1.
func (l *Line) Owner() int { return int(l.owner) }

// Sharers is the number of CPUs holding the line Shared.
func (l *Line) Sharers() int { return int(l.nshare) }

// Holds reports whether cpu has the line in its cache, Modified, Exclusive
// or Shared: a load of it hits.
func (l *Line) Holds(cpu int) bool { return int(l.owner) == cpu || l.isSharer(cpu) }

func (l *Line) isSharer(cpu int) bool { return l.words()[cpu/64]&(1<<(cpu%64)) != 0 }

// ownerStore is a store or RMW by the line's owner, a hit: it extends the
// owner's burst (Keeps), saturating at maxBurst.
func (l *Line) ownerStore() {
	if l.burst < maxBurst {
		l.burst++
	}
}

func (l *Line) addSharer(cpu int) {
	if !l.isSharer(cpu) {
		l.words()[cpu/64] |= 1 << (cpu % 64)
		l.nshare++
	}
}

func (l *Line) clearSharers() {
	clear(l.words())
	l.nshare = 0
}

// forEachSharer calls f for each sharer in CPU order.
func (l *Line) forEachSharer(f func(cpu int)) {
	for w, bitsw := range l.words() {
		for bitsw != 0 {
			b := bits.TrailingZeros64(bitsw)
			f(w*64 + b)
			bitsw &^= 1 << b
		}
	}
}

// AccessCost is the price of one access beyond an L1 hit (and, for RMWs,
// beyond the uncontended RMWLocal that the CPU already charged itself).
type AccessCost struct {
	NS          float64
	Kind        AccessKind
	Class       Class // distance class of the transfer; ClassSelf for hits and fills
	Invalidated int   // copies invalidated by a store
	// FromSharer: a read served by a clean forward from a Shared copy
	// (no owner had to give the line up).
	FromSharer bool
}

// TransferNS is the one-way latency of moving a line from CPU from to CPU
// to when the line is homed at node home: the distance class's latency,
// plus HomeRemote when the home node is on another socket than the
// requester and the transfer itself stays on one socket (the request goes
// through the home agent across the link; hardware.md C2).
func (m *Machine) TransferNS(to, from, home int) float64 {
	c := m.Class(to, from)
	ns := m.Lat.Transfer[c]
	if c != ClassRemote && c != ClassSelf && m.homeIsRemote(to, home) {
		ns += m.Lat.HomeRemote
	}
	return ns
}

func (m *Machine) homeIsRemote(cpu, home int) bool {
	if home < 0 || home >= len(m.Nodes) {
		return false
	}
	if t := m.tables(); t != nil {
		return t.homeRemote[cpu*t.nodes+home]
	}
	return m.homeIsRemoteSlow(cpu, home)
}

func (m *Machine) homeIsRemoteSlow(cpu, home int) bool {
	return m.CPUs[m.Nodes[home][0]].Package != m.CPUs[cpu].Package
}

// memNS is a fill from DRAM at the home node: local or across the link.
// Another node of the same package (SNC, NPS4) is priced as local.
func (m *Machine) memNS(cpu, home int) float64 {
	if m.homeIsRemote(cpu, home) {
		return m.Lat.MemRemote
	}
	return m.Lat.MemLocal
}

// Access prices cpu's access op to line l in its current state and moves
// the line to the state after the access. Lock and Unlock are priced as
// RMW and Write; waiting for a held lock is the replay's business.
func (m *Machine) Access(l *Line, cpu int, op Op) AccessCost {
	switch op {
	case Read:
		if l.Holds(cpu) {
			return AccessCost{Kind: Hit}
		}
		if l.owner >= 0 {
			// The owner forwards the line and keeps a Shared copy.
			from := int(l.owner)
			c := AccessCost{NS: m.TransferNS(cpu, from, int(l.Home)), Kind: Transfer, Class: m.Class(cpu, from)}
			l.owner = -1
			l.burst = 0
			l.addSharer(from)
			l.addSharer(cpu)
			return c
		}
		if l.nshare > 0 {
			// Clean forward from the nearest sharer.
			best, from := -1.0, -1
			if t := m.tables(); t != nil {
				best, from, _ = m.sharerByClass(t, l, cpu, false)
			} else {
				l.forEachSharer(func(s int) {
					if ns := m.TransferNS(cpu, s, int(l.Home)); best < 0 || ns < best {
						best, from = ns, s
					}
				})
			}
			l.addSharer(cpu)
			return AccessCost{NS: best, Kind: Transfer, Class: m.Class(cpu, from), FromSharer: true}
		}
		// Fill from memory; the only copy is Exclusive.
		l.owner = int16(cpu)
		l.burst = 0
		return AccessCost{NS: m.memNS(cpu, int(l.Home)), Kind: Fill}
	default: // Write, RMW, Lock, Unlock: need the line Modified.
		if int(l.owner) == cpu {
			l.ownerStore()
			return AccessCost{Kind: Hit}
		}
		var c AccessCost
		switch {
		case l.owner >= 0:
			c = AccessCost{NS: m.TransferNS(cpu, int(l.owner), int(l.Home)), Kind: Transfer, Class: m.Class(cpu, int(l.owner))}
		case l.nshare > 0:
			// Invalidate every other copy; the acks come back in
			// parallel, so the farthest sharer sets the latency.
			c.Kind = Invalidate
			if t := m.tables(); t != nil {
				c.Invalidated = int(l.nshare)
				if l.isSharer(cpu) {
					c.Invalidated--
				}
				if ns, from, ok := m.sharerByClass(t, l, cpu, true); ok {
					c.NS, c.Class = ns, m.Class(cpu, from)
				}
			} else {
				l.forEachSharer(func(s int) {
					if s == cpu {
						return
					}
					c.Invalidated++
					if ns := m.TransferNS(cpu, s, int(l.Home)); ns > c.NS {
						c.NS, c.Class = ns, m.Class(cpu, s)
					}
				})
			}
		default:
			c = AccessCost{NS: m.memNS(cpu, int(l.Home)), Kind: Fill}
		}
		l.clearSharers()
		l.owner = int16(cpu)
		l.burst = 1
		return c
	}
}

// Keeps reports whether the line's owner cpu retires another store or RMW
// before honouring a waiting request from another CPU: the burst effect
// (hardware.md C2). A core that holds a contended line completes up to
// Lat.Burst RMWs it has ready before the line moves on, which is why N
// writers on one line sustain far more than one RMW per transfer latency.
func (m *Machine) Keeps(l *Line, cpu int) bool {
	return cpu == int(l.owner) && int(l.burst) < m.Lat.Burst
}

// UncontendedNS is what a CPU charges itself for an access while it runs
// an epoch, before the replay knows who else touched the line: an L1 hit,
// plus the locked RMW's own latency for RMW and Lock.
func (m *Machine) UncontendedNS(op Op) float64 {
	if op == RMW || op == Lock {
		return m.Lat.RMWLocal
	}
	return 0
}
