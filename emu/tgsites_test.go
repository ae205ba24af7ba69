package emu

import (
	"testing"
)

// tgSiteTotals sums the per-site tg counters over the CPUs.
func tgSiteTotals(s *Sim) [numTgSites]tgSiteCounts {
	var n [numTgSites]tgSiteCounts
	for _, rq := range s.cpus {
		for i, c := range rq.Stats.tgSites {
			n[i].writes += c.writes
			n[i].reads += c.reads
			n[i].ratelimitSkips += c.ratelimitSkips
			n[i].thresholdSkips += c.thresholdSkips
		}
	}
	return n
}

// TestTgSitesSleepWakeElsewhere follows tg->load_avg through one sleep on
// CPU 0 and a wakeup on CPU 1 of a task two cgroup levels down
// (system.slice/docker), by the rules of fair.c v6.6:
//   - the wakeup's migrate_task_rq_fair() -> remove_entity_load_avg()
//     leaves p's load in CPU 0's docker queue's removed sums: no write;
//   - enqueue_entity() on CPU 1, docker's queue: update_load_avg(UPDATE_TG|
//     DO_ATTACH) attaches p and update_tg_load_avg() writes docker's line;
//   - enqueue_entity() one level up, system.slice's queue: docker's entity
//     propagates p's load (propagate_entity_load_avg() returns 1), so
//     update_tg_load_avg() writes system.slice's line; its
//     update_cfs_group() reads docker's line, and the root level's reads
//     system.slice's: two reads, one per group level;
//   - the sleep that follows on CPU 1 reads both lines again in
//     dequeue_entity(), and writes only on a PELT period crossed (the
//     task runs 100 us);
//   - CPU 0's removed load is taken by its next update_cfs_rq_load_avg():
//     here __update_blocked_fair() (CPU 0 idles), which publishes docker's
//     queue (update_tg_load_avg()) and then, through docker's entity
//     (update_load_avg(UPDATE_TG)), system.slice's: both lines lose p's
//     contribution on CPU 0.
func TestTgSitesSleepWakeElsewhere(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	slice, err := s.NewGroup("system.slice", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	docker, err := s.NewGroup("docker", slice, 100)
	if err != nil {
		t.Fatal(err)
	}
	p := mustTask(t, s, TaskSpec{Comm: "p", CPU: 0, Group: docker, Prog: Loop(Run(100_000), Sleep(3*ms))})
	s.Run(1 * ms)
	if p.state != TaskSleeping || p.cpu != 0 {
		t.Fatalf("p is %v on CPU %d at 1 ms, want asleep on CPU 0", p.state, p.cpu)
	}
	for _, g := range []*TaskGroup{docker, slice} {
		if c := g.cfsRq[0].tgLoadAvgContrib; c == 0 {
			t.Fatalf("%s's CPU 0 queue publishes no load after p ran there", g.Name)
		}
	}
	p.affinity = make([]bool, len(s.cpus))
	p.affinity[1] = true
	before := tgSiteTotals(s)
	s.Run(3*ms + 400_000) // p wakes at ~3.1 ms on CPU 1, runs 100 us and sleeps
	if p.cpu != 1 || p.Stats.NrMigrations != 1 {
		t.Fatalf("p on CPU %d after %d migrations, want woken on CPU 1", p.cpu, p.Stats.NrMigrations)
	}
	after := tgSiteTotals(s)
	d := func(site tgSite) tgSiteCounts {
		a, b := after[site], before[site]
		return tgSiteCounts{a.writes - b.writes, a.reads - b.reads, a.ratelimitSkips - b.ratelimitSkips, a.thresholdSkips - b.thresholdSkips}
	}
	for site, c := range after {
		t.Logf("%-24s %+v (since the sleep: %+v)", tgSiteNames[site], c, d(tgSite(site)))
	}
	if got := d(tgSiteEnqueueAttach); got.writes != 1 {
		t.Errorf("enqueue_entity's DO_ATTACH wrote %d times, want 1 (docker's line on CPU 1)", got.writes)
	}
	if got := d(tgSiteEnqueue); got.writes != 1 || got.reads != 2 {
		t.Errorf("enqueue_entity: %d writes and %d reads, want 1 (system.slice's line, the propagation) and 2 (update_cfs_group() of both group entities)", got.writes, got.reads)
	}
	if got := d(tgSiteDequeue); got.reads != 2 {
		t.Errorf("dequeue_entity: %d reads, want 2 (both group levels, at p's sleep on CPU 1)", got.reads)
	}
	for _, g := range []*TaskGroup{docker, slice} {
		if c := g.cfsRq[1].tgLoadAvgContrib; c == 0 {
			t.Errorf("%s's CPU 1 queue publishes no load after p was attached there", g.Name)
		}
	}
	if r := docker.cfsRq[0].removedModel; r.Nr != 1 || docker.cfsRq[0].tgLoadAvgContrib == 0 {
		t.Errorf("CPU 0's docker queue: removed %+v, contribution %d; want p's load removed and not yet published", r, docker.cfsRq[0].tgLoadAvgContrib)
	}
	// CPU 0 idles from here: its blocked-load updates take the removed
	// load and publish both levels' decay.
	before = after
	s.Run(100 * ms)
	after = tgSiteTotals(s)
	if got := d(tgSiteBlocked); got.writes < 2 {
		t.Errorf("__update_blocked_fair wrote %d times, want at least 2 (docker's and system.slice's lines for CPU 0)", got.writes)
	}
	for _, g := range []*TaskGroup{docker, slice} {
		if c := g.cfsRq[0].tgLoadAvgContrib; c != 0 {
			t.Errorf("%s's CPU 0 queue still publishes %d after p left and its blocked load decayed", g.Name, c)
		}
	}
	// The sites split the totals: every access is counted at one.
	c := s.Counters()
	for _, k := range []string{"TgLoadAvgWrites", "TgLoadAvgReads", "TgRatelimitSkips", "TgThresholdSkips"} {
		var sum float64
		for _, name := range tgSiteNames {
			sum += c["sched."+k+"."+name]
		}
		if sum != c["sched."+k] {
			t.Errorf("sched.%s.* sum to %v, the total is %v", k, sum, c["sched."+k])
		}
	}
}
