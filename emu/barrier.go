package emu

import "fmt"

// The barrier ends every epoch, with every CPU stopped, on the engine's
// goroutine: the posted cross-CPU changes apply (message.go: deliver,
// applyOp; ttwudeliver.go, pull.go), the CPUs it must visit are chosen
// (visit.go), held waits settle (hold.go), the weave prices the epoch's
// shared accesses, and the new state is published (snapshot.go).

// barrier is the end of an epoch: price the shared accesses, publish
// tg->load_avg, check the invariants.
func (s *Sim) barrier(stepped []int) {
	s.Epochs++
	s.beginVisit()
	s.ilbKicked = false
	s.deliver()
	s.extendVisit()
	s.settleHolds(stepped)
	s.foldCounts()
	logs := s.logsBuf[:0]
	for _, i := range s.visit {
		logs = append(logs, s.cpus[i].log)
	}
	s.logsBuf = logs
	res := s.space.WeaveUntil(logs, s.epochEnd)
	for _, n := range res.Notices {
		s.deliverWake(n.CPU, n.T)
	}
	k := 0 // res.Sites is sorted by CPU: one pass hands each CPU its run
	for _, i := range s.visit {
		rq := s.cpus[i]
		behind := s.space.Behind(rq.cpu)
		stalled := behind && s.space.Stalled(rq.cpu)
		if behind != rq.weaveBehind || stalled != rq.weaveStalled {
			rq.weaveBehind, rq.weaveStalled = behind, stalled
			rq.republish = true // cpuSnap.idleAt moves
		}
		if s.space.Owes(rq.cpu) { // Behind implies Owes
			// Served, and charged, barrier by barrier, until it is
			// not: also a CPU that runs on (or idles) with an access
			// still waiting or loads in flight.
			s.touch(rq)
		}
		if k < len(res.Sites) && res.Sites[k].CPU < rq.cpu {
			panic(fmt.Sprintf("emu: barrier: the weave charged CPU %d, which the barrier does not visit (visit.go)", res.Sites[k].CPU))
		}
		st := res.StallNS[rq.cpu]
		lo := k
		for k < len(res.Sites) && res.Sites[k].CPU == rq.cpu {
			k++
		}
		sites := res.Sites[lo:k]
		if rq.newidleSD != nil {
			// update_newidle_cost() measures the balance with
			// sched_clock(): its cache misses count, and a miss still
			// queued at a barrier is paid later. Add the stall of the
			// balance's accesses (its newidle sites, its pull's too),
			// whenever reported, to the last domain walked (the
			// largest, which dominates).
			var stall float64
			for _, c := range sites {
				if s.isNewidleSite(c.Site) {
					stall += c.NS
				}
			}
			if stall > 0 {
				rq.newidleCost += int64(stall)
				rq.newidleSD.updateNewidleCost(rq.newidleCost, s.epochEnd)
			}
		}
		// The whole ns split over the sites, the last taking the
		// rounding, so that the charges sum to the debt.
		left := st
		for i, c := range sites {
			ns := min(int64(c.NS), left)
			if i == len(sites)-1 {
				ns = left
			}
			rq.addDebt(s.symOfSite(c.Site), ns)
			left -= ns
		}
		s.onCPU[rq.cpu] = rq.onCPUView()
	}
	if k < len(res.Sites) {
		panic(fmt.Sprintf("emu: barrier: the weave charged CPU %d, which the barrier does not visit (visit.go)", res.Sites[k].CPU))
	}
	for _, tg := range s.groups {
		for _, i := range s.visit {
			rq := s.cpus[i]
			tg.published += rq.tgDelta[tg.id]
			rq.tgDelta[tg.id] = 0
		}
	}
	s.publishCPUs(s.visit)
	s.endVisit()
	if s.tracer != nil {
		s.tracer.sample(s, res.StallNS)
	}
	if s.cfg.Check {
		s.check()
		s.checkUnvisited(res)
	}
	s.closeVisit()
}
