package contention

import (
	"github.com/rqemu/rqemu/weave"
	"sync/atomic"

	"github.com/rqemu/rqemu/hwmodel"
)

// llcSharedLine mirrors struct sched_domain_shared
// (include/linux/sched/topology.h), a 16-byte kzalloc'd object per LLC,
// all of it on one line:
//
//	atomic_t ref;            // offset 0 (not modeled: set-up only)
//	atomic_t nr_busy_cpus;   // offset 4
//	int      has_idle_cores; // offset 8
//	int      nr_idle_scan;   // offset 12
//
// has_idle_cores and nr_idle_scan are plain ints that the kernel accesses
// with READ_ONCE/WRITE_ONCE; Go needs atomics for racy access, and a Go
// atomic store is an XCHG on amd64, heavier on the host than the kernel's
// plain MOV (the modeled op stays a Write).
type llcSharedLine struct {
	_            atomic.Int32 // ref: the kernel's layout, not modeled
	nrBusyCPUs   atomic.Int32 // Atomic: inc/dec by CPUs of the LLC leaving/entering nohz idle.
	hasIdleCores atomic.Int32 // Atomic (READ_ONCE/WRITE_ONCE): set by CPUs going idle, cleared by wakers.
	nrIdleScan   atomic.Int32 // Atomic (READ_ONCE/WRITE_ONCE): written by periodic LB at the LLC domain.
}

// LLCShared is sd_llc_shared, the per-LLC line that every wakeup's
// select_idle_sibling() reads (kernel-mechanisms.md 2, 6.3, 11):
//
//   - has_idle_cores: fair.c: test_idle_cores() reads it on each wakeup;
//     fair.c: __update_idle_core() sets it when a whole SMT core goes idle
//     (from the idle entry); fair.c: select_idle_cpu() clears it via
//     set_idle_cores(target, false) when its scan found no idle core.
//   - nr_idle_scan: fair.c: select_idle_cpu() reads the SIS_UTIL budget;
//     fair.c: update_idle_cpu_scan() writes it during periodic load
//     balancing at the LLC level, only when it changed.
//   - nr_busy_cpus: fair.c: set_cpu_sd_state_busy() / set_cpu_sd_state_idle()
//     atomic_inc/atomic_dec on nohz tick stop/start; nohz_balancer_kick()
//     reads it.
//
// Modeled layout: one line. Host layout: the 16 bytes on a 128-byte
// aligned, 128-byte padded block, unless made by a Pack (in the kernel
// these are 16-byte kzalloc objects, so two LLCs' objects may well share a
// slab line: a Pack models that).
type LLCShared struct {
	h    *llcSharedLine // hot words, atomic
	line weave.LineID   // read-only after set-up
	name string         // read-only after set-up
}

// NewLLCShared returns the zeroed sd_llc_shared of an LLC on NUMA node home.
func NewLLCShared(s *weave.Space, name string, home int) *LLCShared {
	return &LLCShared{h: alignedHot[llcSharedLine](), line: s.NewKindLine(name, home, weave.KindLLCShared), name: name}
}

// Init sets the words as they stand before the run (an unlogged set-up
// store, before any CPU goroutine runs).
func (c *LLCShared) Init(hasIdleCores bool, nrIdleScan int) {
	var x int32
	if hasIdleCores {
		x = 1
	}
	c.h.hasIdleCores.Store(x)
	c.h.nrIdleScan.Store(int32(nrIdleScan))
}

// LLCShared returns an LLCShared packed with the Pack's other members.
func (p *Pack) LLCShared(name string) *LLCShared {
	return &LLCShared{h: packSlot[llcSharedLine](p), line: p.line(0, weave.KindLLCShared), name: name}
}

// Line is the modeled line.
func (c *LLCShared) Line() weave.LineID { return c.line }

// Name is the name the object was made with.
func (c *LLCShared) Name() string { return c.name }

func (c *LLCShared) access(l *weave.Log, now int64, site weave.Site, op hwmodel.Op, f func() int32) int32 {
	l.Record(now, c.line, op, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		v := f()
		l.Sampled(c.line, 1, t0)
		return v
	}
	return f()
}

// HasIdleCores is test_idle_cores(): READ_ONCE(sds->has_idle_cores), a
// logged Read.
func (c *LLCShared) HasIdleCores(l *weave.Log, now int64, site weave.Site) bool {
	l.Record(now, c.line, hwmodel.Read, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		v := c.h.hasIdleCores.Load()
		l.Sampled(c.line, 1, t0)
		return v != 0
	}
	return c.h.hasIdleCores.Load() != 0
}

// SetHasIdleCores is set_idle_cores(): WRITE_ONCE(sds->has_idle_cores,
// val), a logged Write.
func (c *LLCShared) SetHasIdleCores(l *weave.Log, now int64, site weave.Site, v bool) {
	var x int32
	if v {
		x = 1
	}
	l.Record(now, c.line, hwmodel.Write, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		c.h.hasIdleCores.Store(x)
		l.Sampled(c.line, 1, t0)
		return
	}
	c.h.hasIdleCores.Store(x)
}

// NrIdleScan is READ_ONCE(sd_share->nr_idle_scan) in select_idle_cpu(), a
// logged Read.
func (c *LLCShared) NrIdleScan(l *weave.Log, now int64, site weave.Site) int {
	l.Record(now, c.line, hwmodel.Read, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		v := c.h.nrIdleScan.Load()
		l.Sampled(c.line, 1, t0)
		return int(v)
	}
	return int(c.h.nrIdleScan.Load())
}

// SetNrIdleScan is WRITE_ONCE(sd_share->nr_idle_scan, nr) in
// update_idle_cpu_scan(), a logged Write. (The kernel reads it first and
// writes only on change; the caller logs that read with NrIdleScan.)
func (c *LLCShared) SetNrIdleScan(l *weave.Log, now int64, site weave.Site, nr int) {
	l.Record(now, c.line, hwmodel.Write, site)
	if l.SampleDue() {
		t0 := weave.HostNow()
		c.h.nrIdleScan.Store(int32(nr))
		l.Sampled(c.line, 1, t0)
		return
	}
	c.h.nrIdleScan.Store(int32(nr))
}

// IncBusy is atomic_inc(&sd->shared->nr_busy_cpus) in
// set_cpu_sd_state_busy(), a logged RMW; it returns the new count.
func (c *LLCShared) IncBusy(l *weave.Log, now int64, site weave.Site) int {
	return int(c.access(l, now, site, hwmodel.RMW, func() int32 { return c.h.nrBusyCPUs.Add(1) }))
}

// DecBusy is atomic_dec(&sd->shared->nr_busy_cpus) in
// set_cpu_sd_state_idle(), a logged RMW; it returns the new count.
func (c *LLCShared) DecBusy(l *weave.Log, now int64, site weave.Site) int {
	return int(c.access(l, now, site, hwmodel.RMW, func() int32 { return c.h.nrBusyCPUs.Add(-1) }))
}

// NrBusy is atomic_read(&sds->nr_busy_cpus) in nohz_balancer_kick(), a
// logged Read.
func (c *LLCShared) NrBusy(l *weave.Log, now int64, site weave.Site) int {
	return int(c.access(l, now, site, hwmodel.Read, c.h.nrBusyCPUs.Load))
}

// Values reads has_idle_cores, nr_idle_scan and nr_busy_cpus without
// logging, for checks.
func (c *LLCShared) Values() (hasIdleCores bool, nrIdleScan, nrBusy int) {
	return c.h.hasIdleCores.Load() != 0, int(c.h.nrIdleScan.Load()), int(c.h.nrBusyCPUs.Load())
}
