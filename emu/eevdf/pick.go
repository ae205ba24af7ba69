package eevdf

// PickEEVDF mirrors fair.c: pick_eevdf() in v6.6 (with Ben Segall's
// "sched/eevdf: Fix pick_eevdf()" and the nr_running == 1 shortcut): among
// the tree and Curr (if on_rq), the eligible entity with the earliest
// virtual deadline.
//
// runToParity is sched_feat(RUN_TO_PARITY): an eligible Curr whose Vlag
// still equals its Deadline (the marker SetCurr stamps; UpdateDeadline
// invalidates it by moving the deadline) keeps the CPU.
//
// It returns nil only for an empty queue. If the search finds nothing on a
// non-empty tree (impossible with consistent sums) it returns the leftmost
// entity and counts PickFallbacks, as the kernel does with a pr_err().
func (q *Queue) PickEEVDF(runToParity bool) *Entity {
	// Only one runnable entity: it is trivially eligible (this shortcut
	// came with v6.8's rework; v6.6 reaches the same answer the long way).
	if q.NrRunning == 1 {
		if c := q.Curr; c != nil && c.OnRQ {
			return c
		}
		return q.leftmost
	}
	se := q.pickEEVDF(runToParity)
	if se == nil && q.leftmost != nil {
		q.PickFallbacks++
		return q.leftmost
	}
	return se
}

// pickEEVDF mirrors fair.c: __pick_eevdf() (v6.6). The tree is ordered by
// vruntime, so the eligible entities are a prefix of it: an ineligible
// node's right subtree is ineligible, and an eligible node's left subtree
// is wholly eligible. The first descent walks the eligible boundary,
// tracking the best eligible node on the path and the fully eligible left
// subtree with the smallest MinDeadline; it stops early once the subtree
// minimum is known to be at this node or in its left subtree. A second
// descent then finds the node inside that left subtree whose Deadline is
// its MinDeadline.
func (q *Queue) pickEEVDF(runToParity bool) *Entity {
	curr := q.Curr
	if curr != nil && (!curr.OnRQ || !q.Eligible(curr)) {
		curr = nil
	}
	// Seeding best with curr is v6.6's final curr-vs-tree deadline
	// comparison: a tree entity must have a strictly earlier deadline to
	// beat it, and so must best_left's subtree below.
	best := curr

	// Once selected, run a task until it either becomes non-eligible or
	// gets a new slice (set_next_entity()'s HACK).
	if runToParity && curr != nil && curr.Vlag == int64(curr.Deadline) {
		return curr
	}

	var bestLeft *Entity
	for node := q.root; node != nil; {
		if !q.Eligible(node) {
			node = node.left
			continue
		}
		// Now heap-search the eligible trees for the best (min_)deadline.
		if best == nil || deadlineGT(best.Deadline, node.Deadline) {
			best = node
		}
		// Every entity in an eligible node's left subtree is eligible:
		// remember the left subtree with the best min_deadline.
		if l := node.left; l != nil {
			if bestLeft == nil || deadlineGT(bestLeft.MinDeadline, l.MinDeadline) {
				bestLeft = l
			}
			// The subtree minimum is on the left: nothing better to the
			// right; switch to the second loop.
			if l.MinDeadline == node.MinDeadline {
				break
			}
		}
		// The subtree minimum is this node: no need to look right.
		if node.Deadline == node.MinDeadline {
			break
		}
		node = node.right
	}

	// An eligible node on the path is itself the best (or the queue is
	// empty and both are nil).
	if bestLeft == nil || int64(bestLeft.MinDeadline-best.Deadline) > 0 {
		return best
	}

	// bestLeft and all of its descendants are eligible: find the node whose
	// deadline is the subtree's min_deadline.
	for node := bestLeft; node != nil; {
		if node.Deadline == node.MinDeadline {
			return node
		}
		if l := node.left; l != nil && l.MinDeadline == node.MinDeadline {
			node = l
			continue
		}
		node = node.right
	}
	return nil
}

// PickCFS is the legacy CFS choice of pick_next_entity() (≤ v6.5) without
// the skip/next/last buddies, which the caller owns: the leftmost entity,
// or Curr (if on_rq) when its vruntime is smaller still.
func (q *Queue) PickCFS() *Entity {
	left := q.leftmost
	if c := q.Curr; c != nil && c.OnRQ && (left == nil || entityBefore(c, left)) {
		return c
	}
	return left
}
