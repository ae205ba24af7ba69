package emu

import (
	"testing"
)

// Load balancing on hand-built group statistics: each expected value is
// computed by hand from fair.c (v6.6 unless named) in the comment beside it.

// domainNamed is CPU cpu's domain called name.
func domainNamed(t *testing.T, s *Sim, cpu int, name string) *Domain {
	t.Helper()
	for _, d := range s.domains[cpu] {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("CPU %d has no %s domain", cpu, name)
	return nil
}

// setLBCPU makes CPU c look to a balancer on CPU b as given: published
// for the others, b's own runqueue for itself.
func setLBCPU(s *Sim, b, c, nr int, load, util, runnable uint64) {
	s.snap[c] = cpuSnap{idle: nr == 0, nrRunning: nr, hNrRunning: nr, load: load, util: util, runnable: runnable}
	if c == b {
		rq := s.cpus[c]
		rq.nrRunning, rq.cfs.hNrRunning = nr, nr
		rq.cfs.avg.LoadAvg, rq.cfs.avg.UtilAvg, rq.cfs.avg.RunnableAvg = load, util, runnable
	}
}

// TestLBImbalancePctGate is find_busiest_group() between two overloaded
// groups: no balance while 100 * busiest->avg_load <= imbalance_pct *
// local->avg_load (the PKG level of hikey-8: 117), balance one above.
func TestLBImbalancePctGate(t *testing.T) {
	for _, tc := range []struct {
		busyLoad uint64
		balance  bool
		imb      int64
	}{
		{1170, false, 0}, // 100*1170 = 117000 = 117*1000: inside the margin
		// 100*1171 > 117000: sds->avg_load = (4*1000+4*1171)*1024/8192 =
		// 1085; imbalance = min((1171-1085)*4096, (1085-1000)*4096)/1024
		// = min(344, 340) = 340 of migrate_load.
		{1171, true, 340},
		{1100, false, 0},
	} {
		s := newSim(t, "hikey-8", "v6.6-eevdf")
		sd := domainNamed(t, s, 0, "PKG")
		if sd.ImbalancePct != 117 {
			t.Fatalf("PKG imbalance_pct %d, sd_init() gives 117", sd.ImbalancePct)
		}
		for c := 0; c < 8; c++ {
			load := uint64(1000)
			if c >= 4 {
				load = tc.busyLoad
			}
			// Two tasks a CPU (sum_nr_running 8 > group_weight 4),
			// util at capacity: group_is_overloaded().
			setLBCPU(s, 0, c, 2, load, 1024, 2048)
		}
		e := &lbEnv{b: s.cpus[0], dstCPU: 0, sd: sd, idle: cpuNotIdle}
		got := e.findBusiestGroup()
		if e.local == nil || e.busiest == nil || e.local.groupType != groupOverloaded || e.busiest.groupType != groupOverloaded {
			t.Fatalf("busiest avg_load %d: groups not both overloaded: %+v %+v", tc.busyLoad, e.local, e.busiest)
		}
		if e.local.avgLoad != 1000 || e.busiest.avgLoad != tc.busyLoad {
			t.Errorf("avg_load local %d busiest %d, want 1000 and %d", e.local.avgLoad, e.busiest.avgLoad, tc.busyLoad)
		}
		if got != tc.balance {
			t.Errorf("busiest avg_load %d vs local 1000 at imbalance_pct 117: balance %v, want %v", tc.busyLoad, got, tc.balance)
		}
		if got && (e.imbalance != tc.imb || e.migrationType != migrateLoad) {
			t.Errorf("busiest avg_load %d: imbalance %d (type %d), want %d of migrate_load", tc.busyLoad, e.imbalance, e.migrationType, tc.imb)
		}
	}
}

// TestCalculateImbalanceSpare is calculate_imbalance() with a local group
// that has spare capacity: the halving of the task count, the
// migrate_util fill above the LLC and its migrate_task fallback, and
// group_imbalanced.
func TestCalculateImbalanceSpare(t *testing.T) {
	spare := func(idle, nr int, util uint64) *sgStats {
		return &sgStats{groupType: groupHasSpare, idleCPUs: idle, sumNrRunning: nr, sumHNrRunning: nr,
			groupWeight: 4, cores: 4, groupCapacity: 4096, groupUtil: util}
	}
	busy := func(typ, idle, nr int) *sgStats {
		return &sgStats{groupType: typ, idleCPUs: idle, sumNrRunning: nr, sumHNrRunning: nr,
			groupWeight: 4, cores: 4, groupCapacity: 4096, groupUtil: 4096}
	}
	for _, tc := range []struct {
		name           string
		feat, level    string
		idle           int
		preferSibling  bool
		local, busiest *sgStats
		imb            int64
		typ            int
	}{
		// v6.6: imbalance = max(0, local->idle_cpus - busiest->idle_cpus);
		// imbalance >>= 1.
		{"idle CPUs 4-0 halved", "v6.6-eevdf", "PKG", cpuIdle, false, spare(4, 0, 0), busy(groupFullyBusy, 0, 4), 2, migrateTask},
		{"idle CPUs 3-0 halved", "v6.6-eevdf", "PKG", cpuIdle, false, spare(3, 1, 1024), busy(groupFullyBusy, 0, 4), 1, migrateTask},
		{"idle CPUs 1-0 halved to none", "v6.6-eevdf", "PKG", cpuIdle, false, spare(1, 3, 3072), busy(groupFullyBusy, 0, 4), 0, migrateTask},
		// prefer_sibling: sibling_imbalance() = busiest - local
		// sum_nr_running (same core counts), halved: (6-1)>>1.
		{"sibling imbalance halved", "v6.6-eevdf", "PKG", cpuIdle, true, spare(3, 1, 1024), busy(groupFullyBusy, 0, 6), 2, migrateTask},
		// Busiest overloaded above the LLC: migrate_util, the local
		// group's spare capacity max(cap, util) - util = 4096 - 1000.
		{"migrate_util fill", "v6.6-eevdf", "PKG", cpuIdle, false, spare(3, 1, 1000), busy(groupOverloaded, 0, 6), 3096, migrateUtil},
		// No spare utilization left: an idle balancer falls back to
		// one task of migrate_task ...
		{"migrate_util fallback", "v6.6-eevdf", "PKG", cpuIdle, false, spare(1, 3, 4096), busy(groupOverloaded, 0, 6), 1, migrateTask},
		// ... a busy one does not.
		{"migrate_util busy, no fallback", "v6.6-eevdf", "PKG", cpuNotIdle, false, spare(1, 3, 4096), busy(groupOverloaded, 0, 6), 0, migrateUtil},
		// Inside the LLC (LB_SPREAD_LLC, SD_SHARE_PKG_RESOURCES): task
		// counts, (3-0)>>1.
		{"LLC: task count", "v6.6-eevdf", "MC", cpuIdle, false, spare(3, 1, 1000), busy(groupOverloaded, 0, 6), 1, migrateTask},
		{"LLC without LB_SPREAD_LLC: migrate_util", "v6.6-eevdf,-LB_SPREAD_LLC", "MC", cpuIdle, false, spare(3, 1, 1000), busy(groupOverloaded, 0, 6), 3096, migrateUtil},
		// group_imbalanced: one task of migrate_task, whatever the rest.
		{"group_imbalanced", "v6.6-eevdf", "PKG", cpuNotIdle, false, spare(0, 4, 4096), busy(groupImbalanced, 0, 5), 1, migrateTask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, "hikey-8", tc.feat)
			// The MC level is hikey-8's LLC: use 4-CPU groups there
			// too (the figures are per group, not per CPU).
			e := &lbEnv{b: s.cpus[0], dstCPU: 0, sd: domainNamed(t, s, 0, tc.level), idle: tc.idle,
				preferSibling: tc.preferSibling, local: tc.local, busiest: tc.busiest}
			e.calculateImbalance()
			if e.imbalance != tc.imb || e.migrationType != tc.typ {
				t.Errorf("imbalance %d of type %d, want %d of type %d", e.imbalance, e.migrationType, tc.imb, tc.typ)
			}
		})
	}
}

// TestPickBusiestGroupType: update_sd_pick_busiest() orders groups by
// group_type first (group_imbalanced above fully_busy and has_spare,
// overloaded above all).
func TestPickBusiestGroupType(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	e := &lbEnv{b: s.cpus[0], sd: domainNamed(t, s, 0, "PKG")}
	g := func(typ int) *sgStats {
		return &sgStats{groupType: typ, sumNrRunning: 4, sumHNrRunning: 4, groupWeight: 4}
	}
	for _, tc := range []struct {
		cur, cand int
		want      bool
	}{
		{groupFullyBusy, groupImbalanced, true},
		{groupImbalanced, groupFullyBusy, false},
		{groupImbalanced, groupOverloaded, true},
		{groupImbalanced, groupImbalanced, false}, // the first one stays
		{groupHasSpare, groupFullyBusy, true},
	} {
		e.busiest = g(tc.cur)
		if got := e.pickBusiest(g(tc.cand)); got != tc.want {
			t.Errorf("busiest of type %d, candidate %d: picked %v, want %v", tc.cur, tc.cand, got, tc.want)
		}
	}
}

// TestNUMAImbalanceAllowance is calculate_imbalance()'s
// adjust_numa_imbalance() at spr-2s's NUMA level, per version: imb_numa_nr
// is 2 (build_sched_domains(): the first level above the LLC spans 224/112
// = 2 LLCs, so imb = nr_llcs). prefer_sibling (the MC child has
// SD_PREFER_SIBLING): the imbalance is the difference of task counts.
//   - v6.6 (cb29a5c19d2d): allowed (0) if local+1 <= 2 and imbalance <= 2
//     (NUMA_IMBALANCE_MIN), then >>= 1.
//   - v5.19 (e496132ebedd, before cb29a5c19d2d): >> 1 first, then the same
//     allowance.
//   - v5.15 (allow_numa_imbalance(busiest->sum_nr_running,
//     busiest->group_weight)): >> 1 first, allowed if busiest runs fewer
//     than 112 >> 2 = 28 tasks and imbalance <= 2.
func TestNUMAImbalanceAllowance(t *testing.T) {
	cases := []struct {
		local, busiest  int
		v66, v519, v515 int64
	}{
		{1, 3, 0, 0, 0},
		{0, 2, 0, 0, 0},
		{1, 4, 1, 0, 0},
		{2, 4, 1, 1, 0},
		{0, 6, 3, 3, 3},
		{0, 5, 2, 0, 0},
		{0, 7, 3, 3, 3},
		{20, 25, 2, 2, 0},
		{20, 28, 4, 4, 4},
		{24, 28, 2, 2, 2},
		{24, 27, 1, 1, 0},
		{10, 40, 15, 15, 15},
	}
	for _, prof := range []string{"v6.6-eevdf", "v5.19-cfs", "v5.15-cfs"} {
		s := newSim(t, "spr-2s", prof)
		sd := domainNamed(t, s, 0, "NUMA")
		if sd.imbNumaNr != 2 {
			t.Fatalf("%s: NUMA imb_numa_nr %d, want 2", prof, sd.imbNumaNr)
		}
		g := func(typ, nr int) *sgStats {
			return &sgStats{groupType: typ, sumNrRunning: nr, sumHNrRunning: nr, idleCPUs: 112 - nr,
				groupWeight: 112, cores: 56, groupCapacity: 112 * 1024, groupUtil: uint64(nr) * 1024}
		}
		for _, tc := range cases {
			want := map[string]int64{"v6.6-eevdf": tc.v66, "v5.19-cfs": tc.v519, "v5.15-cfs": tc.v515}[prof]
			e := &lbEnv{b: s.cpus[0], dstCPU: 0, sd: sd, idle: cpuIdle, preferSibling: true,
				local: g(groupHasSpare, tc.local), busiest: g(groupHasSpare, tc.busiest)}
			e.calculateImbalance()
			if e.imbalance != want || e.migrationType != migrateTask {
				t.Errorf("%s: local %d, busiest %d tasks: imbalance %d (type %d), want %d tasks", prof, tc.local, tc.busiest, e.imbalance, e.migrationType, want)
			}
		}
	}
}

// TestTaskHot is task_hot() and can_migrate_task(): hot while
// rq_clock_task(src) - exec_start < sysctl_sched_migration_cost (strict:
// exactly the cost is cold), never across SMT siblings, and a hot task
// moves once sd->nr_balance_failed > sd->cache_nice_tries.
func TestTaskHot(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	src, dst := s.cpus[1], s.cpus[2]
	mc := domainNamed(t, s, 1, "MC")
	smt := domainNamed(t, s, 1, "SMT")
	cost := src.tun.MigrationCost
	if cost != 500_000 {
		t.Fatalf("sysctl_sched_migration_cost %d, want 500000 ns", cost)
	}
	src.clock = 10 * ms
	p := &Task{cpu: 1}
	p.se.cfsRq = src.cfs
	for _, tc := range []struct {
		ago  int64
		sd   *Domain
		want bool
	}{
		{cost, mc, false},
		{cost - 1, mc, true},
		{0, mc, true},
		{cost + 1, mc, false},
		{0, smt, false},
	} {
		p.se.ExecStart = uint64(src.clock - tc.ago)
		if got := src.taskHot(p, tc.sd, dst); got != tc.want {
			t.Errorf("ran %d ns ago, %s: hot %v, want %v", tc.ago, tc.sd.Name, got, tc.want)
		}
	}
	p.se.ExecStart = uint64(src.clock - cost + 1)
	if mc.CacheNiceTries != 1 {
		t.Fatalf("MC cache_nice_tries %d, sd_init() gives 1", mc.CacheNiceTries)
	}
	for failed, want := range []bool{false, false, true, true} {
		mc.nrBalanceFailed = failed
		ok, hot := src.canMigrateTask(p, &pullReq{sd: mc}, dst)
		if ok != want || (ok && !hot) {
			t.Errorf("nr_balance_failed %d (cache_nice_tries 1): can migrate %v (hot %v), want %v", failed, ok, hot, want)
		}
	}
	mc.nrBalanceFailed = 0
}

// TestGroupClassify is group_classify() with imbalance_pct 117 on a
// 4-CPU group (capacity 4096). group_is_overloaded(): more tasks than CPUs
// and util * 117 > 4096 * 100 (util > 3500.85) or runnable * 100 > 4096 *
// 117 (runnable > 4792.32). group_has_capacity(): fewer tasks than CPUs,
// or neither bound crossed. Else fully busy.
func TestGroupClassify(t *testing.T) {
	for _, tc := range []struct {
		nr             int
		util, runnable uint64
		want           int
	}{
		{5, 3501, 4000, groupOverloaded}, // 3501*117 = 409617 > 409600
		{5, 3500, 4000, groupHasSpare},   // 409500: has capacity
		{5, 3500, 4793, groupOverloaded}, // 479300 > 479232
		{5, 3500, 4792, groupHasSpare},
		{4, 4096, 8192, groupFullyBusy}, // not more tasks than CPUs: never overloaded
		{3, 4096, 8192, groupHasSpare},  // fewer tasks than CPUs: capacity
		{4, 3501, 1000, groupFullyBusy}, // util past the bound
		{4, 3500, 4793, groupFullyBusy}, // runnable past it
		{4, 3500, 4792, groupHasSpare},
	} {
		sgs := &sgStats{sumNrRunning: tc.nr, groupWeight: 4, groupCapacity: 4096, groupUtil: tc.util, groupRunnable: tc.runnable}
		if got := groupClassify(117, sgs); got != tc.want {
			t.Errorf("%d tasks, util %d, runnable %d: group type %d, want %d", tc.nr, tc.util, tc.runnable, got, tc.want)
		}
	}
}

// TestNewidlePullTakesWhatWasThere is can_migrate_task() for a newidle
// balance that the barrier applies after it ran (fair.c v6.6
// newidle_balance() runs inside __schedule() of the puller; the model
// applies its detach_tasks() at the barrier, pull.go): a task still on
// src's CPU when the balance ran (task_on_cpu(), switched out since), or
// queued on src only after it, was not there to take; one queued and off
// the CPU before it was. A periodic balance (not newidle) sees src as the
// barrier finds it.
func TestNewidlePullTakesWhatWasThere(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	src, dst := s.cpus[1], s.cpus[2]
	mc := domainNamed(t, s, 1, "MC")
	src.clock = 10 * ms
	p := &Task{cpu: 1}
	p.se.cfsRq = src.cfs
	p.se.ExecStart = uint64(src.clock - 2*src.tun.MigrationCost) // cold
	const at = 9 * ms                                            // the balance ran then
	for _, tc := range []struct {
		what               string
		offCPU, queued     int64
		newidle, wantTaken bool
	}{
		{"queued and off the CPU before the balance", at - 10, at - 20, true, true},
		{"still on src's CPU when the balance ran", at + 10, at - 20, true, false},
		{"queued on src after the balance ran", at - 30, at + 10, true, false},
		{"periodic balance: as the barrier finds src", at + 10, at + 10, false, true},
	} {
		p.offCPUAt, p.queuedAt = tc.offCPU, tc.queued
		idle := cpuNotIdle
		if tc.newidle {
			idle = cpuNewlyIdle
		}
		ok, _ := src.canMigrateTask(p, &pullReq{sd: mc, idle: idle, at: at}, dst)
		if ok != tc.wantTaken {
			t.Errorf("%s: can migrate %v, want %v", tc.what, ok, tc.wantTaken)
		}
	}
}
