package eevdf

// Defaults for a Queue's tunables.
const (
	// DefaultBaseSlice is sysctl_sched_base_slice on a machine with ≥ 8
	// CPUs in v6.6–v6.14: 0.75 ms × (1 + ilog2(8)) = 3 ms.
	DefaultBaseSlice = 3_000_000
	// DefaultTickNsec is TICK_NSEC at HZ=250 (Debian's default config).
	DefaultTickNsec = 4_000_000
	// InitMinVruntime is the min_vruntime init_cfs_rq() starts from,
	// (u64)(-(1LL << 20)): close below the wrap so that wraparound paths
	// run from the first millisecond.
	InitMinVruntime = ^uint64(1<<20 - 1)
)

// Queue is the timeline part of struct cfs_rq (v6.6): the tasks_timeline
// tree with its leftmost cache, curr, the avg_vruntime sums and
// min_vruntime.
//
// Invariants (checked by Check):
//   - Curr is never in the tree; every entity in the tree has OnRQ set;
//   - NrRunning = entities in the tree + 1 if Curr is set and OnRQ;
//   - AvgVruntime = Σ (v_i − MinVruntime)·scale_load_down(w_i) and
//     AvgLoad = Σ scale_load_down(w_i) over the tree (Curr excluded);
//   - MinDeadline of every tree node is its subtree's earliest Deadline.
//
// A Queue is not safe for concurrent use; the emulator's runqueue lock
// guards it. The zero value is an empty queue with MinVruntime 0 and no
// slice or tick configured; NewQueue gives the kernel's initial state.
type Queue struct {
	root     *Entity
	leftmost *Entity
	nrQueued int

	// Curr is cfs_rq->curr: the running entity, kept out of the tree.
	Curr *Entity

	// AvgVruntime is cfs_rq->avg_vruntime: Σ key_i·w_i over the tree,
	// key_i = v_i − MinVruntime, w_i unscaled (scale_load_down()).
	AvgVruntime int64
	// AvgLoad is cfs_rq->avg_load: Σ w_i (unscaled) over the tree.
	AvgLoad int64
	// MinVruntime is cfs_rq->min_vruntime: v0 for the keys, monotonic.
	MinVruntime uint64
	// NrRunning is cfs_rq->nr_running: queued entities plus Curr if on_rq.
	NrRunning int

	// BaseSlice is sysctl_sched_base_slice (ns): the request size
	// PlaceEntity and UpdateDeadline give every entity (v6.6 has no
	// per-task slice).
	BaseSlice uint64
	// TickNsec is TICK_NSEC (ns), the lower bound of the lag clamp.
	TickNsec uint64

	// PickFallbacks counts pick_eevdf()'s "EEVDF scheduling fail, picking
	// leftmost" path, which correct sums never take.
	PickFallbacks uint64
}

// NewQueue returns an empty queue in init_cfs_rq()'s state, with the
// default slice and tick.
func NewQueue() *Queue {
	return &Queue{
		MinVruntime: InitMinVruntime,
		BaseSlice:   DefaultBaseSlice,
		TickNsec:    DefaultTickNsec,
	}
}

// Len is the number of entities in the tree (Curr excluded).
func (q *Queue) Len() int { return q.nrQueued }

// Root is __pick_root_entity(): the tree's root, or nil.
func (q *Queue) Root() *Entity { return q.root }

// PickFirst is __pick_first_entity(): the leftmost (smallest vruntime)
// entity in the tree, or nil. Legacy CFS runs it (see PickCFS).
func (q *Queue) PickFirst() *Entity { return q.leftmost }

// PickLast is __pick_last_entity(): the rightmost entity, or nil.
func (q *Queue) PickLast() *Entity {
	n := q.root
	if n == nil {
		return nil
	}
	for n.right != nil {
		n = n.right
	}
	return n
}

// Next is __pick_next_entity(): se's in-order successor in the tree.
func (q *Queue) Next(se *Entity) *Entity { return next(se) }

// Walk calls f on the tree's entities in vruntime order until f returns
// false. f must not modify the queue.
func (q *Queue) Walk(f func(*Entity) bool) {
	for n := q.leftmost; n != nil; n = next(n) {
		if !f(n) {
			return
		}
	}
}

// entityKey mirrors fair.c: entity_key(): v relative to min_vruntime.
func (q *Queue) entityKey(se *Entity) int64 {
	return int64(se.Vruntime - q.MinVruntime)
}

// avgVruntimeAdd mirrors fair.c: avg_vruntime_add().
func (q *Queue) avgVruntimeAdd(se *Entity) {
	w := int64(ScaleLoadDown(se.Load.Weight))
	q.AvgVruntime += q.entityKey(se) * w
	q.AvgLoad += w
}

// avgVruntimeSub mirrors fair.c: avg_vruntime_sub().
func (q *Queue) avgVruntimeSub(se *Entity) {
	w := int64(ScaleLoadDown(se.Load.Weight))
	q.AvgVruntime -= q.entityKey(se) * w
	q.AvgLoad -= w
}

// avgVruntimeUpdate mirrors fair.c: avg_vruntime_update(): when v0 moves
// by delta every key shrinks by delta.
func (q *Queue) avgVruntimeUpdate(delta int64) {
	q.AvgVruntime -= q.AvgLoad * delta
}

// Enqueue mirrors fair.c: __enqueue_entity(): avg_vruntime_add() and the
// augmented insert. It does not touch OnRQ or NrRunning (account_entity_
// enqueue() does that in the kernel; see EnqueueEntity).
func (q *Queue) Enqueue(se *Entity) {
	q.avgVruntimeAdd(se)
	q.rbInsert(se)
}

// Dequeue mirrors fair.c: __dequeue_entity(): the augmented erase and
// avg_vruntime_sub(). It does not touch OnRQ or NrRunning.
func (q *Queue) Dequeue(se *Entity) {
	q.rbErase(se)
	q.avgVruntimeSub(se)
}

// currSums returns avg_vruntime and avg_load with Curr's contribution
// added when it is on_rq, as avg_vruntime() and entity_eligible() do.
func (q *Queue) currSums() (avg, load int64) {
	avg, load = q.AvgVruntime, q.AvgLoad
	if c := q.Curr; c != nil && c.OnRQ {
		w := int64(ScaleLoadDown(c.Load.Weight))
		avg += q.entityKey(c) * w
		load += w
	}
	return avg, load
}

// AvgVruntimeV mirrors fair.c: avg_vruntime(): the zero-lag virtual time
//
//	V = v0 + floor(Σ key_i·w_i / Σ w_i)
//
// over the tree and Curr (if on_rq). The division is biased left (floor,
// also for negative sums) so that an entity at exactly V is eligible. An
// empty queue returns MinVruntime.
func (q *Queue) AvgVruntimeV() uint64 {
	avg, load := q.currSums()
	if load != 0 {
		// sign flips effective floor / ceil
		if avg < 0 {
			avg -= load - 1
		}
		avg /= load
	}
	return q.MinVruntime + uint64(avg)
}

// VruntimeEligible mirrors fair.c: vruntime_eligible() (the v6.8 split of
// v6.6's entity_eligible()): would an entity at
// virtual time v have non-negative lag, V ≥ v? Evaluated without division
// as Σ key_i·w_i ≥ (v − v0)·Σ w_i, so it is exact.
func (q *Queue) VruntimeEligible(v uint64) bool {
	avg, load := q.currSums()
	return avg >= int64(v-q.MinVruntime)*load
}

// Eligible mirrors fair.c: entity_eligible(): lag_i = w_i·(V − v_i) ≥ 0.
func (q *Queue) Eligible(se *Entity) bool {
	return q.VruntimeEligible(se.Vruntime)
}

// UpdateMinVruntime mirrors fair.c: update_min_vruntime() (v6.6):
// min_vruntime follows min(curr, leftmost) but never moves backwards, and
// when it advances by Δ the key sum is compensated (__update_min_vruntime()
// + avg_vruntime_update()) so that V is unchanged.
func (q *Queue) UpdateMinVruntime() {
	se := q.leftmost
	curr := q.Curr
	v := q.MinVruntime

	if curr != nil {
		if curr.OnRQ {
			v = curr.Vruntime
		} else {
			curr = nil
		}
	}
	if se != nil {
		if curr == nil {
			v = se.Vruntime
		} else {
			v = minVruntime(v, se.Vruntime)
		}
	}

	// Open-coded max_vruntime() so the sums can be compensated.
	if delta := int64(v - q.MinVruntime); delta > 0 {
		q.avgVruntimeUpdate(delta)
		q.MinVruntime = v
	}
}
