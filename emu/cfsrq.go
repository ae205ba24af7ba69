package emu

import (
	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
)

// CfsRq is struct cfs_rq: one per CPU for the root (rq->cfs) and one per
// CPU per task group. The timeline (tree, curr, avg_vruntime, avg_load,
// min_vruntime, nr_running) is an eevdf.Queue; the rest is PELT, group
// bookkeeping and buddies. Owned by its CPU (guarded by the rq lock in the
// kernel), as its RQ is: written by the engine at the barrier only through
// load balancing and a wakeup migration's removal (removed, removedModel).
type CfsRq struct {
	q *eevdf.Queue

	load       eevdf.LoadWeight // cfs_rq->load
	hNrRunning int              // h_nr_running (delayed tasks included)
	hNrDelayed int              // h_nr_delayed (v6.12 DELAY_DEQUEUE, 6.12.y)

	avg  pelt.Avg         // cfs_rq->avg
	prop pelt.Propagation // propagate + prop_runnable_sum

	// removed is cfs_rq->removed, the line remote CPUs write on a
	// wakeup migration (remove_entity_load_avg()): a real atomic, any
	// CPU. The physical object carries the traffic; removedModel is what
	// the owner acts on, added to at the barrier (claimWake's migration)
	// and taken by the owner at its next update_cfs_rq_load_avg().
	removed      *contention.Removed
	removedModel pelt.Removed

	tgLoadAvgContrib    uint64 // tg_load_avg_contrib
	lastUpdateTgLoadAvg int64  // last_update_tg_load_avg (ns)

	tg *TaskGroup
	rq *RQ

	curr             *SchedEntity // cfs_rq->curr
	next, last, skip *SchedEntity // buddies
}

func newCfsRq(rq *RQ, tg *TaskGroup, t Tunables) *CfsRq {
	q := eevdf.NewQueue()
	q.BaseSlice = t.BaseSlice
	q.TickNsec = uint64(t.TickNsec)
	name := "rq" + itoa(rq.cpu) + ".cfs." + tg.Name + ".removed"
	return &CfsRq{
		q:       q,
		removed: contention.NewRemoved(rq.sim.space, name, rq.node()),
		tg:      tg,
		rq:      rq,
	}
}

// NrRunning is cfs_rq->nr_running.
func (c *CfsRq) NrRunning() int { return c.q.NrRunning }

// isRoot reports whether this is a CPU's root cfs_rq (rq->cfs).
func (c *CfsRq) isRoot() bool { return c.tg.parent == nil }

func (c *CfsRq) setCurr(se *SchedEntity) {
	c.curr = se
}

// clearBuddies is fair.c: clear_buddies(): for each buddy pointer of this
// queue that is se, clear it on se and on every ancestor that points at
// se's path (__clear_buddies_next() and friends). v6.6 has only the next
// buddy; the legacy CFS profiles also have last and skip.
func (c *CfsRq) clearBuddies(se *SchedEntity) {
	field := func(q *CfsRq, which int) **SchedEntity {
		switch which {
		case 0:
			return &q.next
		case 1:
			return &q.last
		}
		return &q.skip
	}
	for which := 0; which < 3; which++ {
		if *field(c, which) != se {
			continue
		}
		for s := se; s != nil; s = s.parent {
			p := field(s.cfsRq, which)
			if *p != s {
				break
			}
			*p = nil
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}
