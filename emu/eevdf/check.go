package eevdf

import "fmt"

// Check recomputes everything the Queue maintains incrementally and panics,
// naming the entity and the mismatching values, if anything is off:
//
//   - red-black shape: parent links, black root, no red node with a red
//     child, equal black height on every path;
//   - order: in-order vruntimes never decrease (entity_before()) and the
//     leftmost cache is the first node;
//   - augmentation: every MinDeadline is its subtree's earliest Deadline;
//   - membership: tree entities are on_rq and marked in-tree, Curr is not
//     in the tree, the node count matches, and NrRunning = tree + on_rq Curr;
//   - sums: AvgVruntime and AvgLoad equal Σ key·w and Σ w over the tree.
//
// It is O(n) and meant for tests and debug builds of the emulator.
func (q *Queue) Check() {
	if q.root != nil {
		if q.root.parent != nil {
			panic(fmt.Sprintf("eevdf: Check: root %v has parent %v", q.root, q.root.parent))
		}
		if q.root.red {
			panic(fmt.Sprintf("eevdf: Check: root %v is red", q.root))
		}
	}
	n, _ := q.checkNode(q.root)
	if n != q.nrQueued {
		panic(fmt.Sprintf("eevdf: Check: tree holds %d entities, count says %d", n, q.nrQueued))
	}
	if f := first(q.root); f != q.leftmost {
		panic(fmt.Sprintf("eevdf: Check: leftmost cache %v, first node %v", q.leftmost, f))
	}

	var avg, load int64
	var prev *Entity
	i := 0
	for se := q.leftmost; se != nil; se = next(se) {
		if prev != nil && entityBefore(se, prev) {
			panic(fmt.Sprintf("eevdf: Check: node %d %v is before its predecessor %v", i, se, prev))
		}
		if !se.OnRQ {
			panic(fmt.Sprintf("eevdf: Check: node %d %v is in the tree but not on_rq", i, se))
		}
		w := int64(ScaleLoadDown(se.Load.Weight))
		avg += q.entityKey(se) * w
		load += w
		prev = se
		i++
	}
	if i != q.nrQueued {
		panic(fmt.Sprintf("eevdf: Check: in-order walk saw %d entities, count says %d", i, q.nrQueued))
	}
	if avg != q.AvgVruntime || load != q.AvgLoad {
		panic(fmt.Sprintf("eevdf: Check: avg_vruntime %d avg_load %d, recomputed %d and %d (min_vruntime %#x)",
			q.AvgVruntime, q.AvgLoad, avg, load, q.MinVruntime))
	}

	want := q.nrQueued
	if c := q.Curr; c != nil {
		if c.inTree {
			panic(fmt.Sprintf("eevdf: Check: curr %v is in the tree", c))
		}
		if c.OnRQ {
			want++
		}
	}
	if q.NrRunning != want {
		panic(fmt.Sprintf("eevdf: Check: nr_running %d, want %d (tree %d, curr %v)", q.NrRunning, want, q.nrQueued, q.Curr))
	}
}

// checkNode verifies n's subtree and returns its size and black height.
func (q *Queue) checkNode(n *Entity) (size, blackHeight int) {
	if n == nil {
		return 0, 1
	}
	if !n.inTree {
		panic(fmt.Sprintf("eevdf: Check: %v is linked into the tree but not marked in-tree", n))
	}
	md := n.Deadline
	for _, c := range []*Entity{n.left, n.right} {
		if c == nil {
			continue
		}
		if c.parent != n {
			panic(fmt.Sprintf("eevdf: Check: %v has parent %v, want %v", c, c.parent, n))
		}
		if n.red && c.red {
			panic(fmt.Sprintf("eevdf: Check: red %v has red child %v", n, c))
		}
		if deadlineGT(md, c.MinDeadline) {
			md = c.MinDeadline
		}
	}
	ls, lh := q.checkNode(n.left)
	rs, rh := q.checkNode(n.right)
	if lh != rh {
		panic(fmt.Sprintf("eevdf: Check: %v has black heights %d (left) and %d (right)", n, lh, rh))
	}
	if md != n.MinDeadline {
		panic(fmt.Sprintf("eevdf: Check: %v has min_deadline %#x, subtree minimum is %#x", n, n.MinDeadline, md))
	}
	if !n.red {
		lh++
	}
	return ls + rs + 1, lh
}
