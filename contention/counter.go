package contention

import (
	"github.com/rqemu/rqemu/weave"
	"sync/atomic"

	"github.com/rqemu/rqemu/hwmodel"
)

// Counter is tg->load_avg: one atomic long that every CPU with a cfs_rq of
// the task group adds its load delta to, and reads on every enqueue,
// dequeue and tick at each group level.
//
// Kernel: struct task_group { ... atomic_long_t load_avg
// ____cacheline_aligned; } (kernel/sched/sched.h), written by
// atomic_long_add() in fair.c: update_tg_load_avg() (at most once per ms
// per cfs_rq since v6.7) and read by atomic_long_read() in fair.c:
// calc_group_shares(), not ratelimited (kernel-mechanisms.md 4).
//
// Modeled layout: the word alone on one line (____cacheline_aligned).
// Host layout: the word alone on a 128-byte aligned, 128-byte padded block
// (alignedHot), unless made by a Pack.
type Counter struct {
	v    *atomic.Int64 // the hot word. Atomic; written and read by every CPU.
	line weave.LineID  // read-only after set-up
	name string        // read-only after set-up
}

// NewCounter returns a zero Counter on its own modeled line, homed at NUMA
// node home (where the kernel allocated the task group).
func NewCounter(s *weave.Space, name string, home int) *Counter {
	return &Counter{v: alignedHot[atomic.Int64](), line: s.NewKindLine(name, home, weave.KindCounter), name: name}
}

// Counter returns a Counter packed with the Pack's other members.
func (p *Pack) Counter(name string) *Counter {
	return &Counter{v: packSlot[atomic.Int64](p), line: p.line(0, weave.KindCounter), name: name}
}

// Line is the Counter's modeled line.
func (c *Counter) Line() weave.LineID { return c.line }

// Name is the name the Counter was made with.
func (c *Counter) Name() string { return c.name }

// Add atomically adds delta and returns the new value, logging an RMW:
// atomic_long_add(delta, &tg->load_avg) in fair.c: update_tg_load_avg().
// The value returned is the physical one, racing with the other CPUs.
func (c *Counter) Add(l *weave.Log, now int64, site weave.Site, delta int64) int64 {
	l.Record(now, c.line, hwmodel.RMW, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		v := c.v.Add(delta)
		l.Sampled(c.line, 1, t0)
		return v
	}
	return c.v.Add(delta)
}

// Load atomically reads the value, logging a Read:
// atomic_long_read(&tg->load_avg) in fair.c: calc_group_shares(). The
// value is the physical one, racing with the other CPUs' Adds; decisions
// use the engine's epoch snapshot instead.
func (c *Counter) Load(l *weave.Log, now int64, site weave.Site) int64 {
	l.Record(now, c.line, hwmodel.Read, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		v := c.v.Load()
		l.Sampled(c.line, 1, t0)
		return v
	}
	return c.v.Load()
}

// Value reads the value without logging, for checks (the conservation
// check at a barrier).
func (c *Counter) Value() int64 { return c.v.Load() }
