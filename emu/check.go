package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/weave"
)

// check verifies the conservation invariants at a barrier, panicking with
// the CPU, the task and the state when one is broken:
//   - every live task is in exactly one place: the curr of its CPU, queued
//     on its CPU's queue of its group, or off every queue while sleeping;
//   - each runqueue's nr_running and h_nr_running count what is queued;
//   - each queue's avg_vruntime/avg_load sums and tree are consistent
//     (eevdf.Queue.Check);
//   - tg->load_avg equals the sum of the published contributions of every
//     CPU's queue, both physically (the real atomic) and in the model.
func (s *Sim) check() {
	s.checkSnapCounts()
	nr := make([]int, len(s.cpus))
	delayed := make([]int, len(s.cpus))
	for _, t := range s.tasks {
		rq := s.cpus[t.cpu]
		switch t.state {
		case TaskRunning:
			if rq.curr != t {
				panic(fmt.Sprintf("emu: check: task %v is running on CPU %d but that CPU runs %v", t, t.cpu, rq.curr))
			}
			nr[t.cpu]++
		case TaskRunnable:
			if !t.se.OnRQ || rq.curr == t {
				panic(fmt.Sprintf("emu: check: task %v runnable on CPU %d but on_rq=%t curr=%t", t, t.cpu, t.se.OnRQ, rq.curr == t))
			}
			if t.se.cfsRq != t.group.cfsRq[t.cpu] {
				panic(fmt.Sprintf("emu: check: task %v runnable on CPU %d but queued on another CPU's queue", t, t.cpu))
			}
			if !t.se.InTree() && t.se.cfsRq.curr != &t.se {
				panic(fmt.Sprintf("emu: check: task %v runnable on CPU %d but neither in the tree nor its queue's curr", t, t.cpu))
			}
			nr[t.cpu]++
		case TaskSleeping, TaskWaking:
			if t.se.SchedDelayed {
				// v6.12 DELAY_DEQUEUE: asleep (or being woken) but
				// still queued, in the tree, and counted.
				if !t.se.OnRQ || !t.se.InTree() || rq.curr == t || t.se.cfsRq != t.group.cfsRq[t.cpu] {
					panic(fmt.Sprintf("emu: check: task %v is %v and sched_delayed but on_rq=%t in_tree=%t curr=%t (CPU %d)",
						t, t.state, t.se.OnRQ, t.se.InTree(), rq.curr == t, t.cpu))
				}
				nr[t.cpu]++
				delayed[t.cpu]++
				continue
			}
			fallthrough
		case TaskDead, TaskNew:
			if t.se.OnRQ || t.se.InTree() || rq.curr == t {
				panic(fmt.Sprintf("emu: check: task %v is %v but on_rq=%t in_tree=%t curr=%t (CPU %d)",
					t, t.state, t.se.OnRQ, t.se.InTree(), rq.curr == t, t.cpu))
			}
		default:
			panic(fmt.Sprintf("emu: check: task %v on CPU %d in transient state %v at a barrier", t, t.cpu, t.state))
		}
	}
	for cpu, rq := range s.cpus {
		if rq.nrRunning != nr[cpu] || rq.cfs.hNrRunning != nr[cpu] {
			panic(fmt.Sprintf("emu: check: CPU %d: nr_running %d, h_nr_running %d, but %d tasks are runnable or running there",
				cpu, rq.nrRunning, rq.cfs.hNrRunning, nr[cpu]))
		}
		if rq.cfs.hNrDelayed != delayed[cpu] {
			panic(fmt.Sprintf("emu: check: CPU %d: h_nr_delayed %d, but %d tasks there are sched_delayed", cpu, rq.cfs.hNrDelayed, delayed[cpu]))
		}
		if int(rq.lock.NrRunningValue()) != rq.nrRunning {
			panic(fmt.Sprintf("emu: check: CPU %d: rq line nr_running %d != %d", cpu, rq.lock.NrRunningValue(), rq.nrRunning))
		}
		checkLagSum(cpu, rq.cfs)
		for _, tg := range s.groups {
			checkLagSum(cpu, tg.cfsRq[cpu])
		}
	}
	s.checkStuck()
	s.checkStarvation()
	for _, tg := range s.groups {
		var sum int64
		for cpu := range s.cpus {
			sum += int64(tg.cfsRq[cpu].tgLoadAvgContrib)
		}
		if tg.published != sum {
			panic(fmt.Sprintf("emu: check: tg(%s)->load_avg published %d != sum of contributions %d", tg.Name, tg.published, sum))
		}
		if v := tg.loadAvg.Value(); v != sum {
			panic(fmt.Sprintf("emu: check: tg(%s)->load_avg atomic holds %d but contributions sum to %d", tg.Name, v, sum))
		}
	}
}

// checkLagSum verifies a queue's tree and sums (eevdf.Queue.Check) and,
// under EEVDF, that the weighted lags of its entities sum to zero within
// rounding: Σ w_i·(V − v_i) over the queue (curr included) is in
// (−Σw, Σw).
func checkLagSum(cpu int, c *CfsRq) {
	c.q.Check()
	if !c.rq.eevdf() {
		return
	}
	V := c.q.AvgVruntimeV()
	var sum, w float64
	add := func(e *eevdf.Entity) {
		wi := float64(eevdf.ScaleLoadDown(e.Load.Weight))
		sum += wi * float64(int64(V-e.Vruntime))
		w += wi
	}
	c.q.Walk(func(e *eevdf.Entity) bool { add(e); return true })
	if cur := c.q.Curr; cur != nil && cur.OnRQ {
		add(cur)
	}
	if w > 0 && (sum <= -w || sum >= w) {
		panic(fmt.Sprintf("emu: check: CPU %d queue of group %s: weighted lags sum to %.0f, not within ±%.0f (V=%#x)",
			cpu, c.tg.Name, sum, w, V))
	}
}

// starveLimit is how long a runnable task may wait while a CPU it may run
// on sits idle before the checker calls it starved: far beyond any
// balance interval of the presets.
const starveLimit = 2 * nsecPerSec

// checkStuck: a CPU that idles with tasks on its runqueue must have an
// event coming (the resched that makes it pick them); without one it
// would idle forever.
func (s *Sim) checkStuck() {
	for _, rq := range s.cpus {
		if rq.curr == nil && rq.nrRunning > 0 && rq.nextEvent() < 0 {
			panic(fmt.Sprintf("emu: check: CPU %d idles with nr_running %d and no event to make it schedule (at %d ns)",
				rq.cpu, rq.nrRunning, s.epochEnd))
		}
	}
}

// checkStarvation: no runnable task waits forever when CPUs are idle.
func (s *Sim) checkStarvation() {
	idle := make([]bool, len(s.cpus))
	any := false
	for i, rq := range s.cpus {
		idle[i] = rq.curr == nil && rq.nrRunning == 0
		any = any || idle[i]
	}
	if !any {
		return
	}
	for _, t := range s.tasks {
		if t.state != TaskRunnable || t.lastQueued < 0 {
			continue
		}
		rq := s.cpus[t.cpu]
		// An idle or stuck CPU's clock stands still between its
		// events: measure the wait to the barrier.
		if wait := max(rq.now, s.epochEnd) - t.lastQueued; wait > starveLimit {
			for c := range s.cpus {
				if idle[c] && t.allowedOn(c) {
					panic(fmt.Sprintf("emu: check: task %v has waited %d ms on CPU %d (nr_running %d) while CPU %d is idle",
						t, wait/nsecPerMsec, t.cpu, rq.nrRunning, c))
				}
			}
		}
	}
}

// checkSnapCounts recomputes from every snapshot the machine-wide values
// setSnap keeps in step, and panics on a difference.
func (s *Sim) checkSnapCounts() {
	nr2, idle := 0, 0
	busy := make([]int, len(s.llcBusy))
	for i := range s.snap {
		over, isIdle := s.snap[i].counts()
		if over {
			nr2++
		}
		if isIdle {
			idle++
		} else {
			busy[s.llc[i].id]++
		}
	}
	if nr2 != s.nrOverloaded || idle != s.nohzIdle || (nr2 > 0) != s.overloaded {
		panic(fmt.Sprintf("emu: check: snapshots give %d CPUs with 2+ tasks and %d idle, the barrier keeps %d (overload %t) and %d",
			nr2, idle, s.nrOverloaded, s.overloaded, s.nohzIdle))
	}
	for id, n := range busy {
		if n != s.llcBusy[id] {
			panic(fmt.Sprintf("emu: check: LLC %d: snapshots give %d busy CPUs, the barrier keeps nr_busy_cpus %d", id, n, s.llcBusy[id]))
		}
	}
}

// checkUnvisited verifies what the barrier's visit list (visit.go) takes
// for granted: a CPU it did not visit, and did not mark for the next one,
// has nothing to settle. Its next step is the one kept, and it has no
// outbox, log, tg->load_avg delta, snapshot to publish or wakeups to
// clear; the weave neither holds nor charged accesses of it; its on-CPU
// view is the one published.
func (s *Sim) checkUnvisited(res *weave.WeaveResult) {
	for i, rq := range s.cpus {
		if s.visited[i] || s.need[i] {
			continue
		}
		what := ""
		switch {
		case rq.nextStep() != s.nextAt[i]:
			what = fmt.Sprintf("its next step is %d, not the kept %d", rq.nextStep(), s.nextAt[i])
		case len(rq.outbox) > 0:
			what = fmt.Sprintf("%d posted changes", len(rq.outbox))
		case rq.log.Len() > 0:
			what = fmt.Sprintf("%d logged accesses", rq.log.Len())
		case rq.republish:
			what = "a snapshot to publish"
		case len(rq.countDeltas) > 0:
			what = "shared count changes of the epoch"
		case len(rq.wokeTo) > 0 || len(rq.llcWrites) > 0:
			what = "wakeups or sd_llc_shared writes of the epoch"
		case s.space.Owes(i) || rq.weaveBehind:
			what = "accesses the weave has not served or charged"
		case res.StallNS[i] != 0:
			what = fmt.Sprintf("%d ns of stall", res.StallNS[i])
		case s.onCPU[i] != rq.onCPUView():
			what = "a changed on-CPU view"
		}
		for g, d := range rq.tgDelta {
			if what == "" && d != 0 {
				what = fmt.Sprintf("a tg->load_avg delta of %d for group %d", d, g)
			}
		}
		if what != "" {
			panic(fmt.Sprintf("emu: check: CPU %d was changed at the barrier at %d ns without being visited: %s", i, s.epochEnd, what))
		}
	}
}
