package emu

// taskList is rq->cfs_tasks: the CFS tasks queued on a CPU, most recently
// picked first. Load balancing detaches from the tail (least recently
// run). Intrusive: the links live in the Task. Owned by the CPU.
type taskList struct {
	head, tail *Task
	n          int
}

func (l *taskList) pushFront(t *Task) {
	t.tlPrev, t.tlNext = nil, l.head
	if l.head != nil {
		l.head.tlPrev = t
	} else {
		l.tail = t
	}
	l.head = t
	l.n++
	t.onList = true
}

func (l *taskList) remove(t *Task) {
	if !t.onList {
		return
	}
	if t.tlPrev != nil {
		t.tlPrev.tlNext = t.tlNext
	} else {
		l.head = t.tlNext
	}
	if t.tlNext != nil {
		t.tlNext.tlPrev = t.tlPrev
	} else {
		l.tail = t.tlPrev
	}
	t.tlPrev, t.tlNext, t.onList = nil, nil, false
	l.n--
}

// moveFront is list_move(&p->se.group_node, &rq->cfs_tasks).
func (l *taskList) moveFront(t *Task) {
	if l.head == t {
		return
	}
	l.remove(t)
	l.pushFront(t)
}
