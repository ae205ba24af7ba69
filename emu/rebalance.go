package emu

import "github.com/rqemu/rqemu/hwmodel"

// The triggers of load balancing: the tick (periodic, and the NOHZ idle
// balance kick), a CPU going idle (newidle), and the ILB itself.

// jiffies is the tick count at the CPU's clock.
func (rq *RQ) jiffies() int64 { return rq.now / rq.tun.TickNsec }

// msToJiffies converts a balance interval in ms to ticks (at least 1).
func (rq *RQ) msToJiffies(ms int64) int64 {
	return max(1, ms*nsecPerMsec/rq.tun.TickNsec)
}

// triggerLoadBalance is fair.c: trigger_load_balance() from the tick: the
// SCHED_SOFTIRQ's rebalance when it is due, and the NOHZ kick.
func (rq *RQ) triggerLoadBalance() {
	if rq.jiffies() >= rq.nextBalance {
		idle := cpuNotIdle
		if rq.curr == nil {
			idle = cpuIdle
		}
		rq.updateBlockedAverages()
		rq.rebalanceDomains(rq.cpu, idle)
	}
	rq.nohzBalancerKick()
}

// balanceInterval is fair.c: get_sd_balance_interval(), in jiffies.
func (rq *RQ) balanceInterval(sd *Domain, busy bool) int64 {
	iv := sd.balanceInterval
	if busy {
		iv *= int64(sd.BusyFactor)
	}
	j := rq.msToJiffies(iv)
	// Reduce likelihood of busy balancing at higher domains racing with
	// balancing at lower domains.
	if busy {
		j--
	}
	maxLB := int64(rq.m.HZ) * int64(rq.m.NumCPUs()) / 10 // max_load_balance_interval
	return min(max(j, 1), maxLB)
}

// rebalanceDomains is fair.c: rebalance_domains() (sched_balance_domains())
// for CPU cpu, run by rq (rq.cpu == cpu, or the ILB).
//
// After a load_balance() that moved tasks the kernel recomputes idle and
// busy (v5.15, v6.6: "if (load_balance(...)) { idle = idle_cpu(cpu) ?
// CPU_IDLE : CPU_NOT_IDLE; busy = ...; }"), so the rest of the pass takes
// the busy intervals; after one that moved nothing they stay as they
// were. A pull posted in an epoch lands at the barrier: the pass goes on
// as if it will move a task, and keeps in the pull the next_balance of
// the pass had it moved none (nextIfNone), which doPull restores if so.
func (rq *RQ) rebalanceDomains(cpu int, idle int) {
	defer rq.leave(rq.enter(SymLoadBalance))
	busy := idle != cpuIdle
	wasIdle := idle == cpuIdle
	now := rq.jiffies()
	next := now + 60*int64(rq.m.HZ)
	nextIfNone := next
	var pending *pullReq
	cont := true
	for _, sd := range rq.sim.domains[cpu] {
		if !cont {
			break
		}
		iv := rq.balanceInterval(sd, busy)
		if sd.Flags&SD_SERIALIZE != 0 {
			// The sched_balance_running cmpxchg: a global line.
			rq.log.Record(rq.logNow(), rq.sim.balanceRunning, hwmodel.RMW, rq.site(SymLoadBalance))
		}
		if now >= sd.lastBalance+iv {
			var req *pullReq
			req, cont = rq.loadBalance(cpu, sd, idle)
			if req.willMove() {
				// This CPU has work once the pull lands.
				idle, busy = cpuNotIdle, true
				if req.posted && wasIdle && pending == nil {
					pending = req
				}
			}
			sd.lastBalance = now
			iv = rq.balanceInterval(sd, busy)
		}
		next = min(next, sd.lastBalance+iv)
		if wasIdle {
			nextIfNone = min(nextIfNone, sd.lastBalance+rq.balanceInterval(sd, false))
		}
	}
	rq.sim.cpus[cpu].nextBalance = next
	if pending != nil {
		pending.idlePass, pending.nextIfNone = true, nextIfNone
	}
}

// newidleBalance is fair.c: newidle_balance() (sched_balance_newidle()):
// a CPU about to idle tries to pull, domain by domain, while its expected
// idle time covers the balancing cost.
//
// Each domain it visits brings rq->next_balance forward to that domain's
// next periodic balance at its idle interval (update_next_balance(), v5.15
// and v6.6: a CPU going idle balances at the idle pace, not at the busy
// one its last busy pass set), also when it does not balance at all.
func (rq *RQ) newidleBalance() {
	defer rq.leave(rq.enter(SymNewidleBalance))
	if rq.ttwuPending() {
		return
	}
	rq.idleStamp = rq.clock
	doms := rq.sim.domains[rq.cpu]
	next := rq.jiffies() + int64(rq.m.HZ)
	// rd->overload: set by add_nr_running() on any CPU, this one's own
	// remote enqueues included (ownOverload).
	overload := rq.sim.overloaded || rq.ownOverload()
	if !overload || (len(doms) > 0 && rq.avgIdle < doms[0].maxNewidleLBCost) {
		if len(doms) > 0 {
			next = rq.updateNextBalance(doms[0], next)
		}
		rq.nextBalance = min(rq.nextBalance, next)
		return
	}
	t0 := rq.now
	// Every access from here to the end of the loop is timed by the
	// sched_clock_cpu() deltas of update_newidle_cost(): it logs to the
	// newidle sites (RQ.site), whose stalls the barrier adds to the
	// cost.
	rq.inNewidle = true
	rq.updateBlockedAveragesLocked()
	var curr int64
	pulled := false
	for _, sd := range doms {
		// v6.6 updates at the top of the loop, v5.15 after the
		// domain's balance and before its cost break: the same domains.
		next = rq.updateNextBalance(sd, next)
		if rq.avgIdle < curr+sd.maxNewidleLBCost {
			break
		}
		if sd.Flags&SD_BALANCE_NEWIDLE == 0 {
			continue
		}
		req, _ := rq.loadBalance(rq.cpu, sd, cpuNewlyIdle)
		cost := rq.now - t0
		sd.updateNewidleCost(cost, rq.now)
		rq.newidleSD, rq.newidleCost = sd, cost
		curr += cost
		t0 = rq.now
		// Stop searching for tasks to pull if we will have one.
		if req.willMove() || rq.nrRunning > 0 || rq.ttwuPending() {
			pulled = req.willMove() || rq.nrRunning > 0
			break
		}
	}
	rq.inNewidle = false
	// Move the next balance forward.
	rq.nextBalance = min(rq.nextBalance, next)
	// "if (pulled_task) this_rq->idle_stamp = 0": the CPU does not go
	// idle, so its next wakeup is no sample of an idle period. A posted
	// pull that moves nothing at the barrier puts the stamp back
	// (doPull): the CPU idled after all.
	if pulled {
		rq.pulledStamp, rq.idleStamp = rq.idleStamp, 0
	}
}

// newidlePulled is the rest of newidle_balance() for a pull decided by
// it, carried out at the barrier: update_newidle_cost() times
// load_balance() with sched_clock_cpu(), so the cost of domain sd
// includes detach_tasks() and attach_tasks(): their work here, their
// stalls as the barrier reports them (doPull logs both on this CPU's log,
// to its newidle sites: logOn). A pull that moved nothing restores the
// idle stamp newidleBalance cleared.
func (rq *RQ) newidlePulled(sd *Domain, moved int, work int64, now int64) {
	if moved == 0 {
		if rq.idleStamp == 0 && rq.curr == nil && rq.nrRunning == 0 {
			rq.idleStamp = rq.pulledStamp
		}
		return
	}
	if rq.newidleSD == sd {
		rq.newidleCost += work
		sd.updateNewidleCost(rq.newidleCost, now)
	}
}

// updateNextBalance is fair.c: update_next_balance(): the earlier of next
// and sd's next balance at its idle interval.
func (rq *RQ) updateNextBalance(sd *Domain, next int64) int64 {
	return min(next, sd.lastBalance+rq.balanceInterval(sd, false))
}

// updateNewidleCost is fair.c: update_newidle_cost(): track the maximum
// cost of a newidle balance at this level, decaying 1% per second.
func (sd *Domain) updateNewidleCost(cost, now int64) {
	if cost > sd.maxNewidleLBCost {
		sd.maxNewidleLBCost = cost
		sd.lastDecayMaxLB = now
	} else if now > sd.lastDecayMaxLB+nsecPerSec {
		sd.maxNewidleLBCost = sd.maxNewidleLBCost * 253 / 256
		sd.lastDecayMaxLB = now
	}
}

// updateAvgIdle is the avg_idle update of ttwu_do_activate(): an EWMA of
// the idle periods, capped at twice max_idle_balance_cost; and (core.c
// v5.13 to v6.6: ttwu_do_wakeup()) SIS_PROP's wake_avg_idle, half of it,
// stamped with the jiffy.
func (rq *RQ) updateAvgIdle() {
	if rq.idleStamp == 0 {
		return
	}
	delta := rq.clock - rq.idleStamp
	updateAvg(&rq.avgIdle, delta)
	rq.avgIdle = min(rq.avgIdle, 2*rq.tun.MigrationCost)
	rq.wakeStamp = rq.jiffies()
	rq.wakeAvgIdle = rq.avgIdle / 2
	rq.idleStamp = 0
}

// nohzBalancerKick is fair.c: nohz_balancer_kick() from a busy CPU's
// tick: if there are tickless idle CPUs and this CPU has tasks to spare
// (two runnable, or a busy LLC), kick the idle load balancer.
func (rq *RQ) nohzBalancerKick() {
	sim := rq.sim
	if rq.jiffies() < sim.nohzNextBalance || sim.nohzIdle == 0 {
		return
	}
	kick := rq.nrRunning >= 2
	if !kick {
		// nr_busy_cpus of this LLC > 1.
		llc := &sim.llc[rq.cpu]
		if llc.shared.NrBusy(rq.log, rq.now, rq.site(SymSchedTick)) > 1 || sim.llcBusy[llc.id] > 1 {
			kick = true
		}
	}
	if kick {
		rq.post(remoteOp{kind: opKickILB})
	}
}

// nohzIdleBalance is fair.c: nohz_idle_balance() run at the barrier on the
// ILB CPU: rebalance every tickless idle CPU whose balance is due, on its
// behalf.
func (s *Sim) nohzIdleBalance(ilb *RQ) {
	ilb.catchUp(s.epochEnd)
	next := int64(-1)
	ilb.atBarrier(func() {
		ilb.cost(hwmodel.OpIPIRecv) // the kick's IPI, received: debt
		for _, rq := range s.cpus {
			if rq.curr != nil || rq.nrRunning > 0 {
				continue
			}
			rq.catchUp(s.epochEnd)
			if rq.jiffies() >= rq.nextBalance {
				ilb.updateBlockedAveragesFor(rq)
				ilb.rebalanceDomains(rq.cpu, cpuIdle)
			}
			if next < 0 || rq.nextBalance < next {
				next = rq.nextBalance
			}
		}
	})
	if next >= 0 {
		s.nohzNextBalance = next
	}
}

// updateBlockedAveragesFor decays another (idle) CPU's blocked load, as
// the ILB does with NOHZ_STATS_KICK; the work is charged to the ILB.
func (ilb *RQ) updateBlockedAveragesFor(rq *RQ) {
	if rq == ilb {
		rq.updateBlockedAverages()
		return
	}
	rq.onBehalf(ilb, rq.updateBlockedAverages)
}
