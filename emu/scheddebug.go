package emu

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
)

// WriteSchedDebug writes /proc/sched_debug (/sys/kernel/debug/sched/debug
// from v5.13) as the modeled release's kernel/sched/debug.c prints it
// (procLayout), from the model's state at the end of the run:
// sched_debug_header(), then print_cpu() for each CPU: the rq fields, the
// cfs_rqs (print_cfs_rq(), with print_cfs_group_stats() for a group's
// entity), print_rt_rq(), print_dl_rq() and print_rq()'s task table.
//
// The build is lkp's x86 config (on arm64 machines, the same without the
// x86-only lines): CONFIG_FAIR_GROUP_SCHED, CONFIG_CFS_BANDWIDTH,
// CONFIG_NUMA_BALANCING, CONFIG_SMP, CONFIG_SCHEDSTATS on;
// CONFIG_RT_GROUP_SCHED as the RT_GROUP_SCHED feature says.
//
// Fields the model does not track print what the kernel prints where the
// thing never happened: nr_uninterruptible, exec_clock (schedstat_add()
// of update_curr()), idle_nr_running and idle_h_nr_running (no SCHED_IDLE
// task or group), throttled and throttle_count (no bandwidth limit), a
// group entity's sleep/block starts and maxima, exec_max and slice_max,
// every rt_rq and dl_rq count (no RT or deadline task), sum-sleep and
// sum-block, the NUMA node's group id. Simplified: clock_task is clock (no
// IRQ or steal time), ktime, sched_clk and cpu_clk are the run's end,
// jiffies start at 0, sysctl_sched_features is rqemu's feature bits (not
// the release's features.h bit order), max_idle_balance_cost is
// rebalance_domains()'s max(sysctl_sched_migration_cost, the domains'
// max_newidle_lb_cost) as of the end, every group cfs_rq that is not
// fully decayed (cfs_rq_is_decayed()) is on the leaf list, children
// before parents in reverse creation order, and the root's always,
// last; no kernel threads are listed.
func (s *Sim) WriteSchedDebug(w io.Writer) error {
	lay := layoutFor(s.feat)
	var b strings.Builder
	s.schedDebugHeader(&b, lay)
	for cpu := range s.cpus {
		s.schedDebugCPU(&b, lay, cpu)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// splitNS formats SPLIT_NS(x) as "%Ld.%06ld".
func splitNS(v int64) string { return fmt.Sprintf("%d.%06d", nsecHigh(v), nsecLow(v)) }

// sysctlSchedRTRuntime is sysctl_sched_rt_runtime (950 ms of each 1 s
// sysctl_sched_rt_period).
const sysctlSchedRTRuntime = 950_000_000

// schedDebugHeader is debug.c: sched_debug_header().
func (s *Sim) schedDebugHeader(b *strings.Builder, lay procLayout) {
	jiffies := s.now / s.tun.TickNsec
	fmt.Fprintf(b, "Sched Debug Version: v0.11, %s.0-rqemu #1\n", lay.release)
	for _, k := range []string{"ktime", "sched_clk", "cpu_clk"} {
		fmt.Fprintf(b, "%-40s: %s\n", k, splitNS(s.now))
	}
	fmt.Fprintf(b, "%-40s: %d\n", "jiffies", jiffies)
	if s.m.Arch == "x86_64" { // CONFIG_HAVE_UNSTABLE_SCHED_CLOCK
		fmt.Fprintf(b, "%-40s: %d\n", "sched_clock_stable()", 1)
	}
	b.WriteString("\nsysctl_sched\n")
	pn := func(k string, v int64) { fmt.Fprintf(b, "  .%-40s: %s\n", k, splitNS(v)) }
	p := func(k string, v int64) { fmt.Fprintf(b, "  .%-40s: %d\n", k, v) }
	if lay.eevdf {
		pn("sysctl_sched_base_slice", int64(s.tun.BaseSlice))
	} else {
		pn("sysctl_sched_latency", int64(s.tun.Latency))
		pn("sysctl_sched_min_granularity", int64(s.tun.MinGranularity))
		// fair.c: 0.75 ms, scaled by the factor (v5.15's SCHED_IDLE).
		pn("sysctl_sched_idle_min_granularity", int64(750_000*sysctlFactor(s.m.NumCPUs(), s.tun.Scaling)))
		pn("sysctl_sched_wakeup_granularity", int64(s.tun.WakeupGranularity))
	}
	if lay.childRunsFirst {
		p("sysctl_sched_child_runs_first", 0)
	}
	p("sysctl_sched_features", int64(s.feat))
	names := [...]string{"none", "logarithmic", "linear"}
	fmt.Fprintf(b, "  .%-40s: %d (%s)\n", "sysctl_sched_tunable_scaling", s.tun.Scaling, names[min(s.tun.Scaling, 2)])
	b.WriteString("\n")
}

// schedDebugCPU is debug.c: print_cpu().
func (s *Sim) schedDebugCPU(b *strings.Builder, lay procLayout, cpu int) {
	rq := s.cpus[cpu]
	if s.m.Arch == "x86_64" {
		khz := int64(s.m.FreqMHz * 1000)
		fmt.Fprintf(b, "cpu#%d, %d.%03d MHz\n", cpu, khz/1000, khz%1000)
	} else {
		fmt.Fprintf(b, "cpu#%d\n", cpu)
	}
	p := func(k string, v int64) { fmt.Fprintf(b, "  .%-30s: %d\n", k, v) }
	pn := func(k string, v int64) { fmt.Fprintf(b, "  .%-30s: %s\n", k, splitNS(v)) }
	curr := 0
	if rq.curr != nil {
		curr = rq.curr.PID
	}
	maxCost := s.tun.MigrationCost
	for _, sd := range s.domains[cpu] {
		maxCost = max(maxCost, sd.maxNewidleLBCost)
	}
	p("nr_running", int64(rq.nrRunning))
	p("nr_switches", rq.Stats.NrSwitches)
	p("nr_uninterruptible", 0) // the model's sleeps are TASK_INTERRUPTIBLE
	pn("next_balance", rq.nextBalance)
	p("curr->pid", int64(curr))
	pn("clock", rq.clock)
	pn("clock_task", rq.clock)
	p("avg_idle", rq.avgIdle)
	p("max_idle_balance_cost", maxCost)
	if s.tun.Schedstats {
		st := rq.Stats
		p("yld_count", st.YldCount)
		p("sched_count", st.SchedCount)
		p("sched_goidle", st.SchedGoidle)
		p("ttwu_count", st.TTWUCount)
		p("ttwu_local", st.TTWULocal)
	}
	// print_cfs_stats(): for_each_leaf_cfs_rq_safe().
	for i := len(s.groups) - 1; i >= 0; i-- {
		if c := s.groups[i].cfsRq[cpu]; !cfsRqDecayed(c) {
			s.schedDebugCfsRq(b, lay, c)
		}
	}
	s.schedDebugCfsRq(b, lay, rq.cfs)
	// print_rt_stats(): for_each_rt_rq(), every task group's with
	// CONFIG_RT_GROUP_SCHED, the root's first.
	s.schedDebugRtRq(b, lay, cpu, s.root)
	if s.feat.Has(RT_GROUP_SCHED) {
		for _, tg := range s.groups {
			s.schedDebugRtRq(b, lay, cpu, tg)
		}
	}
	s.schedDebugDlRq(b, lay, cpu)
	s.schedDebugTasks(b, lay, cpu)
	b.WriteString("\n")
}

// cfsRqDecayed is fair.c: cfs_rq_is_decayed(): no weight and no PELT sum
// left, so update_blocked_averages() took it off the leaf list.
func cfsRqDecayed(c *CfsRq) bool {
	return c.load.Weight == 0 && c.avg.LoadSum == 0 && c.avg.UtilSum == 0 && c.avg.RunnableSum == 0
}

// groupPath is task_group_path(): the cgroup path, "/" for the root.
func groupPath(tg *TaskGroup) string {
	if tg == nil || tg.parent == nil {
		return "/"
	}
	var parts []string
	for g := tg; g.parent != nil; g = g.parent {
		parts = append([]string{g.Name}, parts...)
	}
	return "/" + strings.Join(parts, "/")
}

// schedDebugCfsRq is debug.c: print_cfs_rq() and print_cfs_group_stats().
func (s *Sim) schedDebugCfsRq(b *strings.Builder, lay procLayout, c *CfsRq) {
	cpu := c.rq.cpu
	p := func(k string, v int64) { fmt.Fprintf(b, "  .%-30s: %d\n", k, v) }
	pn := func(k string, v int64) { fmt.Fprintf(b, "  .%-30s: %s\n", k, splitNS(v)) }
	fmt.Fprintf(b, "\ncfs_rq[%d]:%s\n", cpu, groupPath(c.tg))
	if lay.execClock {
		pn("exec_clock", 0) // not tracked
	}
	q := c.q
	first, last := q.PickFirst(), q.PickLast()
	minV := int64(q.MinVruntime)
	switch {
	case !lay.eevdf:
		left, right := int64(-1), int64(-1)
		if first != nil {
			left = int64(first.Vruntime)
		}
		if last != nil {
			right = int64(last.Vruntime)
		}
		pn("MIN_vruntime", left)
		pn("min_vruntime", minV)
		pn("max_vruntime", right)
		pn("spread", right-left)
		pn("spread0", minV-int64(s.cpus[0].cfs.q.MinVruntime))
	default:
		left, right, leftDL := int64(-1), int64(-1), int64(-1)
		if first != nil {
			left = int64(first.Vruntime) // v6.8+: root->min_vruntime, the same minimum
		}
		if lay.leftDeadline {
			// The tree is deadline-ordered from v6.8: its leftmost has
			// the earliest deadline, its rightmost the latest.
			var lastDL *eevdf.Entity
			q.Walk(func(e *eevdf.Entity) bool {
				if lastDL == nil || eevdf.DeadlineBefore(lastDL, e) {
					lastDL = e
				}
				return true
			})
			if root := q.Root(); root != nil {
				leftDL = int64(root.MinDeadline)
			}
			if lastDL != nil {
				right = int64(lastDL.Vruntime)
			}
			pn("left_deadline", leftDL)
		} else if last != nil {
			right = int64(last.Vruntime)
		}
		pn("left_vruntime", left)
		pn("min_vruntime", minV)
		pn("avg_vruntime", int64(q.AvgVruntimeV()))
		pn("right_vruntime", right)
		pn("spread", right-left)
	}
	if lay.execClock {
		p("nr_spread_over", 0) // not tracked
	}
	p("nr_running", int64(q.NrRunning))
	p("h_nr_running", int64(c.hNrRunning))
	p("idle_nr_running", 0) // v5.15's SCHED_IDLE groups (Josh Don)
	p("idle_h_nr_running", 0)
	p("load", int64(c.load.Weight))
	p("load_avg", int64(c.avg.LoadAvg))
	p("runnable_avg", int64(c.avg.RunnableAvg))
	p("util_avg", int64(c.avg.UtilAvg))
	ue := int64(0) // util_est is kept on the root cfs_rq only (util_est_enqueue())
	if c.isRoot() {
		ue = int64(c.avg.UtilEst.Enqueued &^ pelt.UtilAvgUnchanged)
	}
	if lay.utilEstSingle {
		p("util_est", ue)
	} else {
		p("util_est_enqueued", ue)
	}
	p("removed.load_avg", int64(c.removedModel.LoadAvg))
	p("removed.util_avg", int64(c.removedModel.UtilAvg))
	p("removed.runnable_avg", int64(c.removedModel.RunnableAvg))
	p("tg_load_avg_contrib", int64(c.tgLoadAvgContrib))
	tgLoad := int64(0) // update_tg_load_avg() never writes the root's
	if !c.isRoot() {
		tgLoad = c.tg.LoadAvg()
	}
	p("tg_load_avg", tgLoad)
	p("throttled", 0)
	p("throttle_count", 0)
	if c.isRoot() {
		return // print_cfs_group_stats(): the root has no entity
	}
	se := c.tg.se[cpu]
	pn("se->exec_start", int64(se.ExecStart))
	pn("se->vruntime", int64(se.Vruntime))
	pn("se->sum_exec_runtime", int64(se.SumExecRuntime))
	if s.tun.Schedstats {
		pre := ""
		if lay.statsPrefix != "" {
			pre = "se->statistics." // v5.15: P_SCHEDSTAT(se->statistics.F)
		}
		pn(pre+"wait_start", se.waitStartNow())
		for _, k := range []string{"sleep_start", "block_start", "sleep_max", "block_max", "exec_max", "slice_max", "wait_max", "wait_sum"} {
			pn(pre+k, 0) // not tracked for group entities
		}
		p(pre+"wait_count", 0)
	}
	p("se->load.weight", int64(se.Load.Weight))
	p("se->avg.load_avg", int64(se.Avg.LoadAvg))
	p("se->avg.util_avg", int64(se.Avg.UtilAvg))
	p("se->avg.runnable_avg", int64(se.Avg.RunnableAvg))
}

// schedDebugRtRq is debug.c: print_rt_rq(): no RT task is modeled.
func (s *Sim) schedDebugRtRq(b *strings.Builder, lay procLayout, cpu int, tg *TaskGroup) {
	if s.feat.Has(RT_GROUP_SCHED) {
		fmt.Fprintf(b, "\nrt_rq[%d]:%s\n", cpu, groupPath(tg))
	} else {
		fmt.Fprintf(b, "\nrt_rq[%d]:\n", cpu)
	}
	runtime := int64(0) // a child group's rt_runtime_us is 0 unless set
	if tg.parent == nil {
		runtime = sysctlSchedRTRuntime
	}
	fmt.Fprintf(b, "  .%-30s: %d\n", "rt_nr_running", 0)
	if lay.nrMigratory {
		fmt.Fprintf(b, "  .%-30s: %d\n", "rt_nr_migratory", 0)
	}
	fmt.Fprintf(b, "  .%-30s: %d\n", "rt_throttled", 0)
	fmt.Fprintf(b, "  .%-30s: %s\n", "rt_time", splitNS(0))
	fmt.Fprintf(b, "  .%-30s: %s\n", "rt_runtime", splitNS(runtime))
}

// schedDebugDlRq is debug.c: print_dl_rq(). dl_bw is the root domain's:
// bw is to_ratio(sysctl_sched_rt_period, sysctl_sched_rt_runtime) (BW_SHIFT
// 20); total_bw the admitted bandwidth, from v6.12 (simplified: also
// v6.11-eevdf's tip) each CPU's fair server (dl_server, 50 ms per 1 s).
func (s *Sim) schedDebugDlRq(b *strings.Builder, lay procLayout, cpu int) {
	fmt.Fprintf(b, "\ndl_rq[%d]:\n", cpu)
	fmt.Fprintf(b, "  .%-30s: %d\n", "dl_nr_running", 0)
	if lay.nrMigratory {
		fmt.Fprintf(b, "  .%-30s: %d\n", "dl_nr_migratory", 0)
	}
	total := int64(0)
	if lay.customSlice {
		total = int64(len(s.cpus)) * ((50_000_000 << 20) / 1_000_000_000)
	}
	fmt.Fprintf(b, "  .%-30s: %d\n", "dl_bw->bw", (int64(sysctlSchedRTRuntime)<<20)/1_000_000_000)
	fmt.Fprintf(b, "  .%-30s: %d\n", "dl_bw->total_bw", total)
}

// taskStateChar is task_state_to_char() for the model's states: a task
// that is not asleep is TASK_RUNNING (TASK_WAKING and TASK_NEW are not in
// TASK_REPORT).
func taskStateChar(t *Task) byte {
	if t.state == TaskSleeping {
		return 'S'
	}
	return 'R'
}

// schedDebugTasks is debug.c: print_rq() and print_task():
// for_each_process_thread() on this CPU, in pid order; exited tasks are
// gone.
func (s *Sim) schedDebugTasks(b *strings.Builder, lay procLayout, cpu int) {
	rq := s.cpus[cpu]
	b.WriteString("\nrunnable tasks:\n")
	if lay.taskTable12 {
		b.WriteString(" S            task   PID       vruntime   eligible    deadline             slice          sum-exec      switches  " +
			"prio         wait-time        sum-sleep       sum-block  node   group-id  group-path\n")
		b.WriteString(strings.Repeat("-", 55+54+54+14+14) + "\n")
	} else {
		b.WriteString(" S            task   PID         tree-key  switches  prio     wait-time             sum-exec        sum-sleep\n")
		b.WriteString(strings.Repeat("-", 55+54) + "\n")
	}
	for _, t := range s.tasks {
		if t.cpu != cpu || t.state == TaskDead {
			continue
		}
		se := &t.se
		if rq.curr == t {
			b.WriteString(">R")
		} else {
			fmt.Fprintf(b, " %c", taskStateChar(t))
		}
		eligible, custom := byte('N'), byte(' ')
		if se.cfsRq != nil && se.cfsRq.q.Eligible(&se.Entity) {
			eligible = 'E'
		}
		if se.CustomSlice {
			custom = 'S'
		}
		ns := func(v int64) string { return fmt.Sprintf("%9d.%06d", nsecHigh(v), nsecLow(v)) }
		sw := t.Stats.NrVolSwitch + t.Stats.NrInvolSwitch
		wait := int64(0) // schedstat_val_or_zero()
		if s.tun.Schedstats {
			wait = t.Stats.WaitSum
		}
		vr, sum := int64(se.Vruntime), int64(se.SumExecRuntime)
		switch {
		case lay.taskTable12:
			fmt.Fprintf(b, " %15s %5d %s   %c   %s %c %s %s %9d   %5d ", taskComm(t), t.PID, ns(vr), eligible,
				ns(int64(se.Deadline)), custom, ns(int64(se.Slice)), ns(sum), sw, taskPrio(t))
			fmt.Fprintf(b, "%s %s %s", ns(wait), ns(0), ns(0))
			fmt.Fprintf(b, "   %d      %d", s.m.CPUs[cpu].Node, 0)
			fmt.Fprintf(b, "        %s\n", groupPath(t.group))
			continue
		case lay.customSlice:
			fmt.Fprintf(b, "%15s %5d %s %c %s %c %s %s %9d %5d ", taskComm(t), t.PID, ns(vr), eligible,
				ns(int64(se.Deadline)), custom, ns(int64(se.Slice)), ns(sum), sw, taskPrio(t))
		case lay.eevdf:
			fmt.Fprintf(b, "%15s %5d %s %c %s %s %s %9d %5d ", taskComm(t), t.PID, ns(vr), eligible,
				ns(int64(se.Deadline)), ns(int64(se.Slice)), ns(sum), sw, taskPrio(t))
		default:
			fmt.Fprintf(b, " %15s %5d %s %9d %5d ", taskComm(t), t.PID, ns(vr), sw, taskPrio(t))
		}
		fmt.Fprintf(b, "%s %s %s", ns(wait), ns(sum), ns(0)) // sum-sleep: not tracked
		if lay.sumBlock {
			b.WriteString(" " + ns(0)) // sum_block_runtime: not tracked
		}
		fmt.Fprintf(b, " %d %d", s.m.CPUs[cpu].Node, 0)
		fmt.Fprintf(b, " %s\n", groupPath(t.group))
	}
}
