package eevdf

// The timeline is a red-black tree of *Entity ordered by vruntime
// (entity_before()), with a cached leftmost node and the min_deadline
// augmentation of v6.6:
//
//	se.MinDeadline = min(se.Deadline, left.MinDeadline, right.MinDeadline)
//
// It plays the role of lib/rbtree.c's rb_add_augmented_cached() and
// rb_erase_augmented_cached() with fair.c's min_deadline_cb callbacks. The
// algorithm is the textbook one (CLRS insert/delete with an explicit parent
// for the nil child); only the augmentation contract follows the kernel:
//
//   - compute (min_deadline_update()): recompute one node from its
//     children;
//   - propagate: recompute upward until a node's value does not change;
//   - rotate (augment_rotate): the node that moves up inherits the old
//     subtree's value, the node that moves down is recomputed.
//
// Equal keys go right, so entities with the same vruntime stay in FIFO
// order, as in __enqueue_entity(). Everything is deterministic.

// computeMinDeadline mirrors fair.c: min_deadline_update() (the RBCOMPUTE
// callback) and reports whether the value changed.
func computeMinDeadline(n *Entity) (changed bool) {
	m := n.Deadline
	if l := n.left; l != nil && deadlineGT(m, l.MinDeadline) {
		m = l.MinDeadline
	}
	if r := n.right; r != nil && deadlineGT(m, r.MinDeadline) {
		m = r.MinDeadline
	}
	changed = m != n.MinDeadline
	n.MinDeadline = m
	return changed
}

// propagate is min_deadline_cb_propagate(n, NULL): recompute from n up to
// the root, stopping at the first node whose value is unchanged.
func propagate(n *Entity) {
	for ; n != nil; n = n.parent {
		if !computeMinDeadline(n) {
			return
		}
	}
}

func isRed(n *Entity) bool { return n != nil && n.red }

// rbInsert links se into the tree (rb_add_augmented_cached()).
func (q *Queue) rbInsert(se *Entity) {
	if se.inTree {
		panic("eevdf: enqueue of an entity already in the tree: " + se.String())
	}
	var parent *Entity
	link := &q.root
	leftmost := true
	for *link != nil {
		parent = *link
		if entityBefore(se, parent) {
			link = &parent.left
		} else {
			link = &parent.right
			leftmost = false
		}
	}
	se.parent, se.left, se.right = parent, nil, nil
	se.red = true
	se.inTree = true
	se.MinDeadline = se.Deadline
	*link = se
	if leftmost {
		q.leftmost = se
	}
	q.nrQueued++
	// augment->propagate(parent, NULL): the new leaf can only lower its
	// ancestors' minima.
	propagate(parent)
	q.insertFixup(se)
}

func (q *Queue) insertFixup(z *Entity) {
	for isRed(z.parent) {
		p := z.parent
		g := p.parent // exists: a red node is never the root
		if p == g.left {
			if u := g.right; isRed(u) {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.right {
				z = p
				q.rotateLeft(z)
				p = z.parent
			}
			p.red, g.red = false, true
			q.rotateRight(g)
		} else {
			if u := g.left; isRed(u) {
				p.red, u.red, g.red = false, false, true
				z = g
				continue
			}
			if z == p.left {
				z = p
				q.rotateRight(z)
				p = z.parent
			}
			p.red, g.red = false, true
			q.rotateLeft(g)
		}
	}
	q.root.red = false
}

// replaceChild points old's parent (or the root) at n.
func (q *Queue) replaceChild(old, n *Entity) {
	switch p := old.parent; {
	case p == nil:
		q.root = n
	case p.left == old:
		p.left = n
	default:
		p.right = n
	}
	if n != nil {
		n.parent = old.parent
	}
}

// rotateLeft rotates x's right child y above x, then applies
// augment_rotate(x, y).
func (q *Queue) rotateLeft(x *Entity) {
	y := x.right
	x.right = y.left
	if y.left != nil {
		y.left.parent = x
	}
	q.replaceChild(x, y)
	y.left = x
	x.parent = y
	y.MinDeadline = x.MinDeadline
	computeMinDeadline(x)
}

// rotateRight is the mirror image of rotateLeft.
func (q *Queue) rotateRight(x *Entity) {
	y := x.left
	x.left = y.right
	if y.right != nil {
		y.right.parent = x
	}
	q.replaceChild(x, y)
	y.right = x
	x.parent = y
	y.MinDeadline = x.MinDeadline
	computeMinDeadline(x)
}

// rbErase unlinks z (rb_erase_augmented_cached()).
func (q *Queue) rbErase(z *Entity) {
	if !z.inTree {
		panic("eevdf: dequeue of an entity not in the tree: " + z.String())
	}
	if q.leftmost == z {
		q.leftmost = next(z)
	}
	var x, xParent *Entity
	removedBlack := !z.red
	if z.left == nil || z.right == nil {
		x = z.left
		if x == nil {
			x = z.right
		}
		xParent = z.parent
		q.replaceChild(z, x)
		// Only xParent's subtree lost a node; its ancestors follow.
		propagate(xParent)
	} else {
		// y = successor, which has no left child, takes z's place.
		y := z.right
		for y.left != nil {
			y = y.left
		}
		removedBlack = !y.red
		x = y.right
		from := y
		if y.parent == z {
			xParent = y
		} else {
			xParent = y.parent
			from = y.parent
			q.replaceChild(y, x)
			y.right = z.right
			y.right.parent = y
		}
		q.replaceChild(z, y)
		y.left = z.left
		y.left.parent = y
		y.red = z.red
		// Recompute from y's old parent up; y's own value is stale for its
		// new position, so never stop before passing y.
		passed := false
		for n := from; n != nil; n = n.parent {
			changed := computeMinDeadline(n)
			if passed && !changed {
				break
			}
			if n == y {
				passed = true
			}
		}
	}
	if removedBlack {
		q.eraseFixup(x, xParent)
	}
	z.left, z.right, z.parent = nil, nil, nil
	z.red = false
	z.inTree = false
	q.nrQueued--
}

func (q *Queue) eraseFixup(x, parent *Entity) {
	for x != q.root && !isRed(x) {
		if x == parent.left {
			w := parent.right
			if isRed(w) {
				w.red, parent.red = false, true
				q.rotateLeft(parent)
				w = parent.right
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, parent = parent, parent.parent
				continue
			}
			if !isRed(w.right) {
				w.left.red, w.red = false, true
				q.rotateRight(w)
				w = parent.right
			}
			w.red, parent.red = parent.red, false
			w.right.red = false
			q.rotateLeft(parent)
		} else {
			w := parent.left
			if isRed(w) {
				w.red, parent.red = false, true
				q.rotateRight(parent)
				w = parent.left
			}
			if !isRed(w.left) && !isRed(w.right) {
				w.red = true
				x, parent = parent, parent.parent
				continue
			}
			if !isRed(w.left) {
				w.right.red, w.red = false, true
				q.rotateLeft(w)
				w = parent.left
			}
			w.red, parent.red = parent.red, false
			w.left.red = false
			q.rotateRight(parent)
		}
		x = q.root
		break
	}
	if x != nil {
		x.red = false
	}
}

// next is rb_next(): the in-order successor.
func next(n *Entity) *Entity {
	if n.right != nil {
		n = n.right
		for n.left != nil {
			n = n.left
		}
		return n
	}
	for n.parent != nil && n == n.parent.right {
		n = n.parent
	}
	return n.parent
}

// first returns the leftmost node of a subtree.
func first(n *Entity) *Entity {
	if n == nil {
		return nil
	}
	for n.left != nil {
		n = n.left
	}
	return n
}
