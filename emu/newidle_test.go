package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

const us = int64(1000)

// newidlePull is what CPU 1 of a HiKey shows at the first barrier after a
// newidle balance of its own pulled a task.
type newidlePull struct {
	at          int64 // virtual ns of the barrier that moved the task
	idleStamp   int64 // rq->idle_stamp then
	cost        int64 // the cost recorded for the pulling domain's balance
	maxCost     int64 // that domain's max_newidle_lb_cost
	pullWorkNS  int64 // detach + attach work of one task (preset costs)
	gainedFirst bool  // found at all
}

// firstNewidlePull runs two hogs on CPU 0 (both may run on CPUs 0 and 1
// only) and, pinned to CPU 1, a task that runs 1 ms and sleeps 50 ms:
// each time it sleeps CPU 1 goes newly idle with CPU 0 overloaded, and
// its newidle balance pulls the hog that waits on CPU 0. It steps 10 us
// at a time until CPU 1's newidle lb_gained first moves.
func firstNewidlePull(t *testing.T) newidlePull {
	t.Helper()
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	for i := 0; i < 2; i++ {
		spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, CPUs: []int{0, 1}, Prog: Hog()})
	}
	mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 1, Prog: Loop(Run(ms), Sleep(50*ms))})
	rq := s.cpus[1]
	gained := func() (n int64) {
		for _, sd := range s.domains[1] {
			n += sd.Stats.LBGained[cpuNewlyIdle]
		}
		return n
	}
	m := s.Machine()
	work := m.Cost(hwmodel.OpMigrate) + m.Cost(hwmodel.OpEnqueue) + m.Cost(hwmodel.OpDequeue)
	for step := int64(1); step <= 200*ms/(10*us); step++ {
		before := gained()
		s.Run(step * 10 * us)
		if gained() > before {
			return newidlePull{at: s.now, idleStamp: rq.idleStamp, cost: rq.newidleCost,
				maxCost: rq.newidleSD.maxNewidleLBCost, pullWorkNS: work, gainedFirst: true}
		}
	}
	return newidlePull{}
}

// TestNewidlePullClearsIdleStamp follows fair.c: newidle_balance() (v6.6,
// and v5.15): "if (pulled_task) this_rq->idle_stamp = 0". A CPU whose
// newidle balance pulled a task does not go idle, so the next wakeup onto
// it (ttwu_do_activate()) takes no sample of an idle period into
// rq->avg_idle. Before the fix the stamp stayed from the start of the
// balance, and the wakeup after the pulled task's run fed that whole run
// to avg_idle as idle time.
func TestNewidlePullClearsIdleStamp(t *testing.T) {
	p := firstNewidlePull(t)
	if !p.gainedFirst {
		t.Fatal("CPU 1's newidle balance never pulled a task in 200 ms")
	}
	if p.idleStamp != 0 {
		t.Errorf("at %d us CPU 1 had pulled a task by newidle balance, and idle_stamp is %d; want 0 (newidle_balance(): pulled_task clears it)",
			p.at/us, p.idleStamp)
	}
}

// TestNewidleCostIncludesPull follows fair.c: newidle_balance() (v6.6):
// domain_cost = sched_clock_cpu() after load_balance() minus before it,
// then update_newidle_cost(sd, domain_cost). load_balance() detaches and
// attaches the task it pulls inside that interval, so the recorded cost,
// and max_newidle_lb_cost with it, includes the pull. (This model carries
// the pull out at the barrier; before the fix the cost was the search
// alone, which on a HiKey is less than one task's detach and attach.)
func TestNewidleCostIncludesPull(t *testing.T) {
	p := firstNewidlePull(t)
	if !p.gainedFirst {
		t.Fatal("CPU 1's newidle balance never pulled a task in 200 ms")
	}
	t.Logf("first newidle pull at %d us: cost %d ns (pull work %d ns of it), max_newidle_lb_cost %d ns",
		p.at/us, p.cost, p.pullWorkNS, p.maxCost)
	if p.cost < p.pullWorkNS {
		t.Errorf("the pulling balance's recorded cost is %d ns, less than the detach+attach work alone (%d ns): the pull is not timed", p.cost, p.pullWorkNS)
	}
	if p.maxCost < p.cost {
		t.Errorf("max_newidle_lb_cost %d ns below the balance's own cost %d ns", p.maxCost, p.cost)
	}
}

// TestLogOnKeepsAccesses: work logged for another CPU's log (logOn, a
// pull's detach and attach, which load_balance() runs on the balancing
// CPU) reaches that log, in order, also when the balancing CPU is the RQ
// itself (a newidle pull's attach, dst == actor). Before, that case
// appended the entries to the scratch log being drained, which was then
// reset: the attach's accesses never reached the weave.
func TestLogOnKeepsAccesses(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	a, b := s.cpus[1], s.cpus[2]
	for _, tc := range []struct {
		name        string
		rq, actor   *RQ
		wantOnActor int
	}{{"actor is another CPU", a, b, 2}, {"actor is the RQ itself", a, a, 2}} {
		tc.rq.log.Reset()
		tc.actor.log.Reset()
		own := tc.rq.logOn(true)
		tc.rq.log.Record(tc.rq.logNow(), tc.rq.lock.Line(), hwmodel.Lock, tc.rq.site(SymLoadBalance))
		tc.rq.log.Record(tc.rq.logNow(), tc.rq.lock.Line(), hwmodel.Unlock, tc.rq.site(SymLoadBalance))
		tc.rq.logBack(own, tc.actor)
		if tc.rq.log != own || tc.rq.inNewidle {
			t.Fatalf("%s: logBack left the RQ logging elsewhere (or in newidle)", tc.name)
		}
		got := tc.actor.log.Entries()
		if len(got) != tc.wantOnActor || got[0].Op != hwmodel.Lock || got[1].Op != hwmodel.Unlock {
			t.Errorf("%s: the actor's log holds %+v; want the Lock and the Unlock, in order", tc.name, got)
		}
		for _, e := range got {
			if !s.isNewidleSite(e.Site) {
				t.Errorf("%s: entry %+v not on a newidle site", tc.name, e)
			}
		}
		if tc.actor != tc.rq && tc.rq.log.Len() != 0 {
			t.Errorf("%s: %d entries left on the RQ's own log", tc.name, tc.rq.log.Len())
		}
	}
}
