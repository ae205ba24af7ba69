package emu

import "slices"

// The barrier visits the CPUs that have something to settle, not every
// CPU, so that a barrier costs what the epoch did (the CPUs stepped, the
// lines touched, the messages sent) and a machine of 1,024 CPUs with four
// busy ones runs about as fast as a small one.
//
// A CPU has something to settle at the barrier closing an epoch when:
//
//   - it stepped in the epoch: its outbox, its log of shared accesses, its
//     tg->load_avg delta and its snapshot are new (RunUntil marks it when
//     it hands the epoch out);
//   - the weave still holds accesses of it (weave.Space.Behind): it
//     is served, and charged, barrier by barrier;
//   - a barrier changed it on another CPU's behalf (a wakeup enqueued or
//     queued on its wake list, a pull, an idle balance run for it): the
//     barrier code that does so calls touch, and a touch made while the
//     barrier runs counts for this barrier's later stages and for the
//     next barrier (a message posted at a barrier is delivered at the
//     next one).
//
// need (and needList, the same in marking order) holds the marks; beginVisit turns them into this barrier's visit
// list, extendVisit adds the CPUs touched while the posted changes were
// applied, and endVisit brings the next step (nextAt) of every CPU
// visited or touched up to date. Every other CPU is exactly as the last
// barrier that visited it left it: its next step, its snapshot, its
// on-CPU view, an empty outbox and log. With -check the barrier verifies
// that for every CPU it did not visit (checkUnvisited), so a change made
// at a barrier without a touch panics there, naming the CPU and what
// changed.
//
// need, needList, visited and visit are the barrier goroutine's (RunUntil sets the
// stepped CPUs' marks before handing out the epoch, and touch writes
// only while the barrier runs: inBarrier).

// touch marks rq as changed at this barrier (a no-op outside one: changes
// made between runs are caught by RunUntil, which visits every CPU once
// when it starts).
func (s *Sim) touch(rq *RQ) {
	if s.inBarrier {
		s.mark(rq.cpu)
	}
}

// mark puts CPU i on the next barrier's list.
func (s *Sim) mark(i int) {
	if !s.need[i] {
		s.need[i] = true
		s.needList = append(s.needList, i)
	}
}

// needAll marks every CPU, for the first barrier of a run.
func (s *Sim) needAll() {
	if len(s.need) != len(s.cpus) {
		s.need = make([]bool, len(s.cpus))
		s.visited = make([]bool, len(s.cpus))
		s.visit = make([]int, 0, len(s.cpus))
		s.needList = make([]int, 0, len(s.cpus))
	}
	for i := range s.need {
		s.mark(i)
	}
}

// beginVisit starts the barrier's visit list with the marked CPUs, in CPU
// order, and clears their marks.
func (s *Sim) beginVisit() {
	s.inBarrier = true
	s.visit = append(s.visit[:0], s.needList...)
	slices.Sort(s.visit)
	for _, i := range s.visit {
		s.need[i] = false
		s.visited[i] = true
	}
	s.needList = s.needList[:0]
}

// extendVisit adds the CPUs touched since beginVisit, keeping the list in
// CPU order. Their marks stay: the next barrier visits them too.
func (s *Sim) extendVisit() {
	added := false
	for _, i := range s.needList {
		if !s.visited[i] {
			s.visited[i] = true
			s.visit = append(s.visit, i)
			added = true
		}
	}
	if added {
		slices.Sort(s.visit)
	}
	s.visits += int64(len(s.visit))
}

// endVisit updates the next step of every CPU visited or touched.
func (s *Sim) endVisit() {
	for _, i := range s.visit {
		s.setNextAt(i)
	}
	for _, i := range s.needList {
		if !s.visited[i] {
			s.setNextAt(i)
		}
	}
}

// setNextAt keeps CPU i's next step, and whether it has one (live: the
// driver scans the CPUs with a next step, in CPU order, a word of 64 at a
// time, so that CPUs with nothing to do cost nothing per epoch).
func (s *Sim) setNextAt(i int) {
	t := s.cpus[i].nextStep()
	s.nextAt[i] = t
	if t >= 0 {
		s.live[i/64] |= 1 << (i % 64)
	} else {
		s.live[i/64] &^= 1 << (i % 64)
	}
}

// closeVisit clears the visited flags (after check has read them).
func (s *Sim) closeVisit() {
	for _, i := range s.visit {
		s.visited[i] = false
	}
	s.inBarrier = false
}
