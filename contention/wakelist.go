package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"sync/atomic"

	"github.com/rqemu/rqemu/hwmodel"
)

// WakeEntry is a queued wakeup: the llist_node p->wake_entry.llist that
// core.c: __ttwu_queue_wakelist() puts on the target CPU's queue. The
// emulator embeds one in each task and sets Task.
type WakeEntry struct {
	// Task is the emulator's task, opaque here. Set it before the first
	// Push; the drainer reads it after Drain.
	Task any
	// next is the llist link. Written by the pusher before the CAS that
	// publishes the entry, read and cleared by the drainer after its xchg
	// took the list; never touched while another CPU may.
	next *WakeEntry
	// queued is set by Push and cleared by Drain (atomic), to catch an
	// entry pushed twice.
	queued atomic.Bool
}

// Queued reports whether the entry is on a list (pushed and not drained).
func (e *WakeEntry) Queued() bool { return e.queued.Load() }

// wakeHead is the per-CPU call_single_queue (struct llist_head { struct
// llist_node *first; }): one pointer, the only word of its line that
// wakers write.
type wakeHead struct {
	first atomic.Pointer[WakeEntry] // Atomic: CAS by pushers, xchg by the owner.
}

// WakeList is a CPU's wake list: its call_single_queue, a lock-free LIFO
// llist that remote wakers add to with cmpxchg and the owner empties with
// xchg, plus the rq's ttwu_pending flag that the wakers set first.
//
// Kernel: core.c: __ttwu_queue_wakelist() does WRITE_ONCE(rq->ttwu_pending,
// 1), then __smp_call_single_queue() → llist_add(), and sends the IPI only
// if llist_add() found the list empty (smp.c: __smp_call_single_queue());
// the target's smp.c: __flush_smp_call_function_queue() takes the whole
// list with llist_del_all() (xchg), llist_reverse_order() restores push
// order, and core.c: sched_ttwu_pending() activates the tasks and clears
// ttwu_pending. core.c: idle_cpu() reads ttwu_pending remotely
// (kernel-mechanisms.md 2, 6.2).
//
// Modeled layout: two lines. The list head is the per-CPU
// call_single_queue's line; ttwu_pending sits on rq line 1 (with nohz_csd,
// nohz_flags, nr_switches), a different line from the rq lock. PendingLine
// is exposed so that the emulator can log the other rq line 1 traffic
// (the owner's nr_switches++ on every context switch). Host layout: each
// word on its own padded block, unless made by a Pack.
type WakeList struct {
	head     *wakeHead      // hot: call_single_queue
	pending  *atomic.Uint32 // hot: rq->ttwu_pending. Atomic: stored by wakers and the owner, read by anyone.
	listLine weave.LineID   // read-only after set-up
	pendLine weave.LineID   // read-only after set-up
	name     string         // read-only after set-up
}

// NewWakeList returns the empty wake list of a CPU on NUMA node home.
func NewWakeList(s *weave.Space, name string, home int) *WakeList {
	return &WakeList{
		head:     &new(padded[wakeHead]).v,
		pending:  alignedHot[atomic.Uint32](),
		listLine: s.NewKindLine(name+".call_single_queue", home, weave.KindWakeList),
		pendLine: s.NewKindLine(name+".ttwu_pending", home, weave.KindWakeList),
		name:     name,
	}
}

// WakeList returns a WakeList packed with the Pack's other members: the
// heads next to each other on the Pack's first line, the pending flags on
// its second.
func (p *Pack) WakeList(name string) *WakeList {
	return &WakeList{
		head:     packSlot[wakeHead](p),
		pending:  packSlot[atomic.Uint32](p),
		listLine: p.line(0, weave.KindWakeList),
		pendLine: p.line(1, weave.KindWakeList),
		name:     name,
	}
}

// ListLine is the modeled line of the llist head (call_single_queue).
func (w *WakeList) ListLine() weave.LineID { return w.listLine }

// PendingLine is the modeled line of ttwu_pending (rq line 1).
func (w *WakeList) PendingLine() weave.LineID { return w.pendLine }

// Name is the name the list was made with.
func (w *WakeList) Name() string { return w.name }

// Push queues e on the list, as a remote waker's __ttwu_queue_wakelist()
// does: WRITE_ONCE(rq->ttwu_pending, 1) (logs a Write on the pending line),
// then llist_add() (logs an RMW on the list line: the cmpxchg, with the
// READ_ONCE of head->first before it folded in). It reports whether the
// list was empty, which is when the kernel sends the IPI. The answer is
// physical, decided by the race with other pushers and the drainer; the
// log does not depend on it, nor on the cmpxchg retries. Push panics if e is
// already queued.
func (w *WakeList) Push(l *weave.Log, now int64, site weave.Site, e *WakeEntry) (wasEmpty bool) {
	if !e.queued.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("contention: WakeList %q: CPU %d pushes an entry that is already queued (task %v)", w.name, l.CPU(), e.Task))
	}
	l.Record(now, w.pendLine, hwmodel.Write, site)
	l.Record(now, w.listLine, hwmodel.RMW, site)
	var t0 int64
	sample := l.SampleDue()
	if sample {
		t0 = weave.HostNow()
	}
	w.pending.Store(1)
	first := w.head.first.Load()
	for {
		e.next = first
		if w.head.first.CompareAndSwap(first, e) {
			break
		}
		first = w.head.first.Load()
	}
	if sample {
		l.Sampled(w.listLine, 2, t0)
	}
	return first == nil
}

// Drain takes every queued entry, as the owner's
// __flush_smp_call_function_queue() and sched_ttwu_pending() do:
// llist_del_all() (an xchg: logs an RMW on the list line), then clears
// ttwu_pending (logs a Write on the pending line). It returns the entries
// in push order (llist_reverse_order()), each no longer queued: an entry
// may be pushed again as soon as Drain returns, so the caller needs its own
// guarantee that nobody re-pushes it (rewriting its Task) before it is
// processed, as the kernel has (a task is not woken again before
// sched_ttwu_pending() has activated it). Both
// accesses are logged whether or not the list was empty, so that the log
// does not depend on the physical race; a caller that wants the idle
// loop's llist_empty() test first uses Empty.
func (w *WakeList) Drain(l *weave.Log, now int64, site weave.Site) []*WakeEntry {
	return w.AppendDrain(nil, l, now, site)
}

// AppendDrain is Drain appending the entries to dst.
func (w *WakeList) AppendDrain(dst []*WakeEntry, l *weave.Log, now int64, site weave.Site) []*WakeEntry {
	l.Record(now, w.listLine, hwmodel.RMW, site)
	l.Record(now, w.pendLine, hwmodel.Write, site)
	var t0 int64
	sample := l.SampleDue()
	if sample {
		t0 = weave.HostNow()
	}
	first := w.head.first.Swap(nil)
	n := 0
	for e := first; e != nil; e = e.next {
		n++
	}
	base := len(dst)
	dst = append(dst, make([]*WakeEntry, n)...)
	i := base + n - 1
	for e := first; e != nil; i-- {
		next := e.next
		e.next = nil
		dst[i] = e
		e.queued.Store(false) // after the last touch of e.next: e may be pushed again from here on
		e = next
	}
	w.pending.Store(0)
	if sample {
		l.Sampled(w.listLine, 2, t0)
	}
	return dst
}

// Pending reads ttwu_pending racily, as idle_cpu() does on a remote rq,
// logging a Read of the pending line.
func (w *WakeList) Pending(l *weave.Log, now int64, site weave.Site) bool {
	l.Record(now, w.pendLine, hwmodel.Read, site)
	return w.pending.Load() != 0
}

// Empty reads the list head, as llist_empty() in smp.c:
// flush_smp_call_function_queue() does before taking the list, logging a
// Read of the list line.
func (w *WakeList) Empty(l *weave.Log, now int64, site weave.Site) bool {
	l.Record(now, w.listLine, hwmodel.Read, site)
	return w.head.first.Load() == nil
}
