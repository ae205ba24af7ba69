package eevdf

import "testing"

// pickEEVDFBeforeFix is pick_eevdf() as first merged for v6.6-rc, before
// "sched/eevdf: Fix pick_eevdf()" (b01db23d5923): a single descent that
// follows min_deadline into a left subtree without remembering the
// fully eligible left subtrees it passed, and compares curr only at the
// end. Kept only to show that the oracle tests catch the bug the fix
// addressed.
func (q *Queue) pickEEVDFBeforeFix() *Entity {
	curr := q.Curr
	if curr != nil && (!curr.OnRQ || !q.Eligible(curr)) {
		curr = nil
	}
	var best *Entity
	for node := q.root; node != nil; {
		if !q.Eligible(node) {
			node = node.left
			continue
		}
		if best == nil || deadlineGT(best.Deadline, node.Deadline) {
			best = node
			if best.Deadline == best.MinDeadline {
				break
			}
		}
		if l := node.left; l != nil && l.MinDeadline == node.MinDeadline {
			node = l
			continue
		}
		node = node.right
	}
	if best == nil || (curr != nil && deadlineGT(best.Deadline, curr.Deadline)) {
		best = curr
	}
	return best
}

// TestOraclesCatchPrefixPick: the pre-fix search picks a non-earliest
// (or ineligible) entity on some random queues, and the oracle sees it.
func TestOraclesCatchPrefixPick(t *testing.T) {
	r := newRand(t, 9)
	wrong := 0
	for range 3000 {
		q, _ := randQueue(r, 2+r.IntN(40))
		if q.NrRunning < 2 {
			continue
		}
		if !contains(oraclePick(q, false), q.pickEEVDFBeforeFix()) {
			wrong++
		}
	}
	if wrong == 0 {
		t.Fatal("the pre-fix pick_eevdf() never disagreed with the oracle")
	}
	t.Logf("pre-fix pick_eevdf() wrong on %d of 3000 random queues", wrong)
}
