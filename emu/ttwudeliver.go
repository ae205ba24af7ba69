package emu

import "fmt"

// When a wakeup reaches its target. A CPU logs its accesses in its epoch
// and the weave prices them at the barrier, so a post carries the CPU's
// clock without the stall its accesses before the post will cost. A
// wakeup's effect is visible to the target only once the waker's store
// that publishes it completes: the rq_unlock() of a direct wakeup (core.c,
// v5.15 and v6.6: ttwu_queue() -> rq_lock(); ttwu_do_activate();
// rq_unlock(), the enqueue seen with the lock's release), the llist_add()
// of a wake-list one (__ttwu_queue_wakelist()). The waker marks that
// access (markWakeupNotify), the barrier queues the claimed wakeup
// (queueWake) and hands it to the target when the weave reports the
// access served (deliverWake), at its physical completion.

// markWakeupNotify asks the weave when the wakeup's last access, just
// logged, completes (weave.Log.MarkNotify): the rq_unlock() of a
// direct wakeup or the llist_add() of a wake-list one, which publish it
// (core.c v5.15, v6.6). Only for a wakeup logged in the CPU's own epoch;
// work done on its behalf keeps its logged time. Simplified: the CPU's
// other posts (signals, affinity changes, pulls) carry its clock without
// its unpriced stall.
func (rq *RQ) markWakeupNotify() bool {
	if rq.pay.paidBy != nil || rq.pay.barrier || rq.scratch != nil && rq.log == rq.scratch {
		return false
	}
	rq.log.MarkNotify()
	return true
}

// deferredWake is a wakeup claimed at a barrier (claimWake) whose marked
// last access (markWakeupNotify) the weave may not have served yet: the
// target gets it when that access completes (deliverWake), at the waker's
// time plus its stall up to there: a direct enqueue (msgEnqueue) after
// the waker's misses under the target's lock (the lock's handover, the
// target's rq->curr, rq->uclamp and rq->cfs.avg lines), a wake-list
// wakeup (wl) added to the target's batch when its llist_add() is done.
// dropped: the claim found the wakee awake (a placeholder, so that the
// waker's notices and its claims stay paired in order).
type deferredWake struct {
	dst     *RQ
	ev      event
	dropped bool
	// wl: a wake-list wakeup of task with flags, added to dst's batch
	// (wakelistAdd) at the llist_add()'s completion.
	wl    bool
	task  *Task
	flags int
	// raced: completed at the barrier for its waker (ttwuRaced), its
	// accesses logged at at: the wakeup moves by their service time.
	raced bool
	at    int64
}

// queueWakeOf queues op's claimed wakeup (queueWake). A raced one's
// accesses were logged at the barrier, after every access the waker had
// logged, so its notice comes after those of the waker's other claims of
// the same deliver: it waits in racedQ until they are queued
// (flushRacedWakes, at the end of deliver and of SignalAtBarrier).
func (s *Sim) queueWakeOf(op *remoteOp, d deferredWake) {
	if !op.raced {
		s.queueWake(op.from, d)
		return
	}
	d.raced, d.at = true, op.racedAt
	s.racedQ = append(s.racedQ, racedWake{waker: op.from, d: d})
}

// racedWake is a raced wakeup waiting for its place in wakeQ.
type racedWake struct {
	waker int
	d     deferredWake
}

// flushRacedWakes queues the raced wakeups behind the other claims of
// their batch, in the order their accesses were logged.
func (s *Sim) flushRacedWakes() {
	for i, r := range s.racedQ {
		s.queueWake(r.waker, r.d)
		s.racedQ[i] = racedWake{}
	}
	s.racedQ = s.racedQ[:0]
}

// queueWake appends a claimed wakeup of waker's to its queue:
// its notices come in the order its wakeups were logged and claimed
// (claims at a barrier go in (time, CPU, sequence) order, and a wakeup is
// claimed at the barrier closing its epoch, before that barrier's weave).
func (s *Sim) queueWake(waker int, d deferredWake) {
	if s.wakeQ == nil {
		s.wakeQ = make([][]deferredWake, len(s.cpus))
	}
	s.wakeQ[waker] = append(s.wakeQ[waker], d)
}

// deliverWake hands the oldest claimed wakeup of waker's to its target
// once the weave has served its marked access, completed at t.
func (s *Sim) deliverWake(waker int, t int64) {
	if s.wakeQ == nil || len(s.wakeQ[waker]) == 0 {
		panic(fmt.Sprintf("emu: CPU %d: the weave served a marked wakeup access at %d ns with no wakeup claimed", waker, t))
	}
	q := s.wakeQ[waker]
	d := q[0]
	q[0] = deferredWake{}
	s.wakeQ[waker] = q[1:]
	if d.dropped {
		return
	}
	if d.raced {
		// ev.t is the waker's signal plus its work for the wakeup; the
		// weave served the accesses logged at d.at by t.
		d.ev.t += max(0, t-d.at)
	} else {
		d.ev.t = max(d.ev.t, t)
	}
	s.touch(d.dst)
	if d.wl {
		s.wakelistAdd(d.dst, s.cpus[waker], d.task, d.ev.t, d.flags)
		return
	}
	s.pushEnqueue(d.dst, d.ev)
}

// holdsDirectFrom reports whether a direct wakeup by waker onto dst at or
// before t is claimed and still waits for its rq_unlock() (holdsEnqueueFrom).
func (s *Sim) holdsDirectFrom(waker int, dst *RQ, t int64) bool {
	if s.wakeQ == nil {
		return false
	}
	for _, d := range s.wakeQ[waker] {
		if !d.dropped && !d.wl && d.dst == dst && d.ev.t <= t {
			return true
		}
	}
	return false
}
