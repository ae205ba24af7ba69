package emu

import "testing"

// TestSMTBalanceGroup: fair.c: update_sg_lb_stats() and smt_balance()
// (v6.6, fee1759e4f04 "sched/fair: Determine active load balance for SMT
// sched groups"). On spr-2s, two hogs on the SMT siblings of core 0
// (CPUs 0 and 112) make that core's group, seen from another CPU's
// balance at the MC level, group_smt_balance when the balancing CPU is
// idle (sgs->sum_h_nr_running > 1 in a group with SD_SHARE_CPUCAPACITY),
// and calculate_imbalance() then asks for one task (migrate_task,
// imbalance 1). A busy balancer does not apply it (the group is
// fully_busy), nor does the balancer's own group, nor a core running one
// task.
func TestSMTBalanceGroup(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	mustTask(t, s, TaskSpec{Comm: "hog0", CPU: 0, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog112", CPU: 112, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 2, Prog: Hog()})
	s.Run(100 * ms)
	const dst = 1 // core 1 (CPUs 1 and 113), idle
	var mc *Domain
	for _, sd := range s.domains[dst] {
		if sd.Name == "MC" {
			mc = sd
		}
	}
	if mc == nil {
		t.Fatal("spr-2s CPU 1 has no MC domain")
	}
	b := s.RQ(dst)
	stats := func(cpus []int, local bool, idle int) *sgStats {
		e := &lbEnv{b: b, dstCPU: dst, sd: mc, idle: idle}
		return e.groupStats(cpus, local)
	}
	core0 := []int{0, 112}
	if g := stats(core0, false, cpuIdle); !g.smt || g.groupType != groupSMTBalance {
		t.Errorf("core 0 with a hog per sibling, idle balancer: smt %v, group type %d, want an SMT group of type group_smt_balance (%d)", g.smt, g.groupType, groupSMTBalance)
	} else {
		e := &lbEnv{b: b, dstCPU: dst, sd: mc, idle: cpuIdle, busiest: g, local: stats([]int{1, 113}, true, cpuIdle)}
		e.calculateImbalance()
		if e.migrationType != migrateTask || e.imbalance != 1 {
			t.Errorf("calculate_imbalance() for group_smt_balance: migration type %d, imbalance %d, want migrate_task (%d), 1", e.migrationType, e.imbalance, migrateTask)
		}
	}
	if g := stats(core0, false, cpuNotIdle); g.groupType == groupSMTBalance {
		t.Errorf("a busy balancer (CPU_NOT_IDLE) classified core 0 group_smt_balance")
	}
	if g := stats(core0, true, cpuIdle); g.groupType == groupSMTBalance {
		t.Errorf("the local group was classified group_smt_balance")
	}
	if g := stats([]int{2, 114}, false, cpuIdle); !g.smt || g.groupType == groupSMTBalance {
		t.Errorf("core 2 with one hog: smt %v, group type %d; want an SMT group, not group_smt_balance", g.smt, g.groupType)
	}
}
