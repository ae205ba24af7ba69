package eevdf

import "fmt"

// Entity is the timeline part of struct sched_entity (v6.6). The emulator's
// own entity embeds or points to one and keeps PELT, statistics and the
// group hierarchy elsewhere.
//
// All virtual times are uint64 as in the kernel and are only ever compared
// through their signed difference, int64(a-b), so they may wrap.
type Entity struct {
	// Load is se->load: the scaled weight and its inverse.
	Load LoadWeight

	// Vruntime is se->vruntime, the entity's virtual time v_i: the
	// service it received, in ns scaled by NICE_0_LOAD/w.
	Vruntime uint64
	// Deadline is se->deadline, the virtual deadline vd_i = ve_i + r_i/w_i.
	Deadline uint64
	// Slice is se->slice, the request size r_i in ns.
	Slice uint64
	// Vlag is se->vlag. Off the queue it holds the virtual lag V - v_i
	// saved at dequeue (update_entity_lag()). While the entity runs, v6.6
	// stores a copy of Deadline here (set_next_entity()'s "HACK") and
	// RUN_TO_PARITY treats Vlag == int64(Deadline) as "still on the request
	// it was picked with".
	Vlag int64
	// MinDeadline is se->min_deadline, the augmented value: the earliest
	// Deadline in the entity's subtree. Only meaningful while queued.
	MinDeadline uint64
	// OnRQ is se->on_rq: the entity is runnable on its queue, either in the
	// tree or as the queue's Curr.
	OnRQ bool

	// CustomSlice is se->custom_slice (v6.12, sched_attr.sched_runtime):
	// Slice is the task's own request and place_entity() and
	// update_deadline() keep it instead of the base slice.
	CustomSlice bool
	// SchedDelayed is se->sched_delayed (v6.12, DELAY_DEQUEUE): the
	// entity went to sleep ineligible and stays queued (OnRQ, in the
	// tree) until it is picked or woken (the caller's rules).
	SchedDelayed bool
	// RelDeadline is se->rel_deadline (v6.12, PLACE_REL_DEADLINE):
	// Deadline holds deadline - vruntime, saved by a dequeue that was not
	// a sleep, and place_entity() adds the new vruntime back.
	RelDeadline bool

	// Owner is a back-pointer for the emulator; this package never reads it.
	Owner any

	// run_node: red-black tree links.
	left, right, parent *Entity
	red                 bool
	inTree              bool
}

// InTree reports whether the entity is in a Queue's tree (queued and not
// running). The running entity is on_rq but not in the tree.
func (se *Entity) InTree() bool { return se.inTree }

// String describes the entity's timeline state, for panics and test
// failures. It does not look at Owner.
func (se *Entity) String() string {
	if se == nil {
		return "<nil entity>"
	}
	return fmt.Sprintf("se@%p{w=%d v=%#x d=%#x vlag=%d slice=%d on_rq=%t}",
		se, se.Load.Weight, se.Vruntime, se.Deadline, se.Vlag, se.Slice, se.OnRQ)
}

// entityBefore mirrors fair.c: entity_before() in v6.6: the tree order.
func entityBefore(a, b *Entity) bool {
	return int64(a.Vruntime-b.Vruntime) < 0
}

// DeadlineBefore is fair.c: entity_before() in v6.8 and later (the tree
// is ordered by deadline there): a's virtual deadline is earlier than b's.
func DeadlineBefore(a, b *Entity) bool { return int64(a.Deadline-b.Deadline) < 0 }

// deadlineGT is fair.c's deadline_gt(): a > b in wrapping virtual time.
func deadlineGT(a, b uint64) bool { return int64(a-b) > 0 }

// minVruntime mirrors fair.c: min_vruntime(): the earlier of two virtual
// times. (max_vruntime() is open-coded in UpdateMinVruntime.)
func minVruntime(minv, v uint64) uint64 {
	if int64(v-minv) < 0 {
		return v
	}
	return minv
}
