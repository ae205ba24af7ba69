package weave

import (
	"fmt"
	"math"

	"github.com/rqemu/rqemu/hwmodel"
)

// LineID names one modeled shared cache line of a Space: an index into the
// Space's lines, the Line of a Log entry and of a Req.
type LineID int32

// Site names a calling site, interned by Space.Site: a kernel symbol such as
// "update_load_avg", to which the weave charges the stall of every access
// made from it. Site 0 (NoSite) is "-", for accesses nobody attributed.
type Site uint16

// NoSite is the zero Site: unattributed accesses.
const NoSite Site = 0

// Kind is the kind of object a modeled line belongs to, for statistics and
// host sampling.
type Kind uint8

const (
	KindLine      Kind = iota // a bare line made with Space.NewLine
	KindCounter               // Counter: tg->load_avg
	KindSpinLock              // SpinLock: rq->__lock + rq->nr_running (rq line 0)
	KindWakeList              // WakeList: call_single_queue and rq->ttwu_pending
	KindUclamp                // UclampRQ: rq->uclamp[] lines A and B
	KindLLCShared             // LLCShared: sd_llc_shared
	KindRemoved               // Removed: cfs_rq->removed
	NumKinds
)

var kindNames = [NumKinds]string{"line", "counter", "spinlock", "wakelist", "uclamp", "llc_shared", "removed"}

func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Space is the registry of the modeled shared lines of one target machine:
// it owns one hwmodel.Line per LineID, whose coherence state (owner,
// sharers) persists from one weave to the next, the interned sites, the
// per-CPU fractional stall carried between weaves, and cumulative per-line,
// per-site and per-kind statistics.
//
// A Space is driven from one goroutine: lines, sites and objects are made
// at set-up time, and Weave, Stats and WriteStats run at epoch barriers,
// while no CPU goroutine is inside an object operation. The objects'
// operations never touch the Space itself (they only carry LineIDs), so CPU
// goroutines run them concurrently between barriers.
type Space struct {
	m *hwmodel.Machine

	lines    []*hwmodel.Line // by LineID; the replay's persistent state
	lineInfo []lineInfo      // by LineID

	sites   []string
	siteIdx map[string]Site
	// spins are the sites a lock's waits are charged to (SetLockSpin).
	spins []LockSpin

	// remPS is each CPU's stall not yet handed out as whole ns, in ps.
	remPS []int64

	sampleEvery uint32

	// Cumulative statistics, by LineID, Site and Kind.
	lineStats []lineAcc
	siteStats []siteAcc
	weaves    int64
	woven     int64 // log entries woven, over all weaves

	// Scratch reused by Weave (the result is valid until the next
	// Weave).
	rp    *Replayer
	res   WeaveResult
	byCPU []*Log // all nil between weaves
	// streamCPUs are the CPUs whose logs a weave adds to the replay, in
	// CPU order, and stallCPUs those the last weave charged (res.StallNS,
	// ExactNS): a weave clears only what the last one wrote, so that it
	// costs what its logs hold, not the machine's CPUs.
	streamCPUs []int
	stallCPUs  []int
	siteBuf    []int64               // stall per site of one CPU, ps
	uncPS      [hwmodel.NumOps]int64 // each op's uncontended cost in whole ps (NewSpace)
	siteHit    []Site
	// ages is the private-cache capacity model (capacity.go).
	ages capacityAges
}

type lineInfo struct {
	name string
	home int
	kind Kind
}

// NewSpace returns an empty Space for target machine m.
func NewSpace(m *hwmodel.Machine) *Space {
	s := &Space{
		m:       m,
		siteIdx: map[string]Site{},
		remPS:   make([]int64, m.NumCPUs()),
		byCPU:   make([]*Log, m.NumCPUs()),
	}
	for op := range hwmodel.NumOps {
		s.uncPS[op] = int64(math.Round(m.UncontendedNS(op) * 1000))
	}
	s.Site("-") // NoSite
	s.ages.cap, s.ages.on = m.Capacity()
	return s
}

// Machine returns the target machine the Space prices accesses for.
func (s *Space) Machine() *hwmodel.Machine { return s.m }

// NewLine registers a bare modeled line homed at NUMA node home (the node
// whose memory backs it: first touch). It is for set-up time only. Objects
// register their own lines; NewLine is for shared kernel memory that has no
// object here, whose accesses the emulator logs itself with Log.Record.
func (s *Space) NewLine(name string, home int) LineID {
	return s.NewKindLine(name, home, KindLine)
}

// NewKindLine registers a line of an object of kind kind (contention's
// objects register theirs with it), homed at NUMA node home. Set-up time
// only.
func (s *Space) NewKindLine(name string, home int, kind Kind) LineID {
	s.CheckHome(name, home)
	if len(s.lines) >= 1<<31-1 {
		panic("weave: too many lines")
	}
	id := LineID(len(s.lines))
	s.lines = append(s.lines, s.m.NewLine(home))
	s.lineInfo = append(s.lineInfo, lineInfo{name: name, home: home, kind: kind})
	s.lineStats = append(s.lineStats, lineAcc{})
	return id
}

// CheckHome panics, naming the line, if home is not a node of the machine.
func (s *Space) CheckHome(name string, home int) {
	if home < 0 || home >= len(s.m.Nodes) {
		panic(fmt.Sprintf("weave: line %q: home node %d, machine %s has nodes 0-%d", name, home, s.m.Name, len(s.m.Nodes)-1))
	}
}

// NumLines is the number of lines registered.
func (s *Space) NumLines() int { return len(s.lines) }

// LineName returns the name a line was registered with.
func (s *Space) LineName(id LineID) string { return s.lineInfo[id].name }

// LineKind returns the kind of object a line belongs to.
func (s *Space) LineKind(id LineID) Kind { return s.lineInfo[id].kind }

// LineHome returns a line's home NUMA node.
func (s *Space) LineHome(id LineID) int { return s.lineInfo[id].home }

// Line returns the coherence state of a line, for inspection between
// weaves. The caller must not change it.
func (s *Space) Line(id LineID) *hwmodel.Line { return s.lines[id] }

// Site interns a calling-site name (a kernel symbol) and returns its Site;
// the same name always gives the same Site. It is for set-up time only.
func (s *Space) Site(name string) Site {
	if id, ok := s.siteIdx[name]; ok {
		return id
	}
	if len(s.sites) > 0xffff {
		panic("weave: more than 65536 sites")
	}
	id := Site(len(s.sites))
	s.sites = append(s.sites, name)
	s.siteIdx[name] = id
	s.siteStats = append(s.siteStats, siteAcc{})
	return id
}

// SiteName returns the name of an interned site, or "site(N)" for a Site
// this Space never interned.
func (s *Space) SiteName(id Site) string {
	if int(id) < len(s.sites) {
		return s.sites[id]
	}
	return fmt.Sprintf("site(%d)", uint16(id))
}

// NumSites is the number of interned sites, NoSite included.
func (s *Space) NumSites() int { return len(s.sites) }

// LockSpin names where a sleeping lock's waits are charged: kernel/
// locking/mutex.c (v6.6) mutex_lock() tries its fast path (a Lock logged
// at site Lock), then __mutex_lock_common()'s mutex_optimistic_spin()
// spins while the owner runs: queued on the lock's osq (osq_lock())
// behind other waiters, and at its head on the owner
// (mutex_spin_on_owner()), which perf shows as functions of their own.
// A Lock of site Lock that finds the lock held is charged, until the
// line starts serving it, to Queued if another Lock already waits for
// the line, else to OnOwner (simplified: a waiter keeps the site it
// arrived with when it reaches the queue's head); the rest, the transfer
// that takes the lock, stays Lock's.
type LockSpin struct {
	Lock, OnOwner, Queued Site
}

// SetLockSpin charges the waits of sp.Lock's Locks to its spin sites.
func (s *Space) SetLockSpin(sp LockSpin) {
	s.spins = append(s.spins, sp)
	if s.rp != nil {
		s.rp.SetLockSpin(int32(sp.Lock), int32(sp.OnOwner), int32(sp.Queued))
	}
}

// CloneFor returns a fresh Space for target machine m with the same lines
// (same LineIDs, names, homes and kinds) and sites, in their initial state:
// uncached lines, no carried stall, no statistics. Logs recorded against s
// can be woven in the clone to price the same accesses on another target,
// provided their CPU ids exist on m. Every home must be a node of m.
func (s *Space) CloneFor(m *hwmodel.Machine) *Space {
	c := NewSpace(m)
	for _, li := range s.lineInfo {
		c.NewKindLine(li.name, li.home, li.kind)
	}
	for _, name := range s.sites[1:] {
		c.Site(name)
	}
	for _, sp := range s.spins {
		c.SetLockSpin(sp)
	}
	c.sampleEvery = s.sampleEvery
	return c
}

// NewLog returns a Log for modeled CPU cpu that samples host time at the
// Space's sampling rate (SetSampling).
func (s *Space) NewLog(cpu int) *Log {
	if cpu < 0 || cpu >= s.m.NumCPUs() {
		panic(fmt.Sprintf("weave: NewLog: CPU %d, machine %s has CPUs 0-%d", cpu, s.m.Name, s.m.NumCPUs()-1))
	}
	l := NewLog(cpu)
	l.SetSampling(int(s.sampleEvery))
	return l
}
