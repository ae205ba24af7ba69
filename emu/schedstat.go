package emu

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// WriteSchedstat prints /proc/schedstat version 16 (Documentation/
// scheduler/sched-stats.rst): a cpu line per CPU, then a domain line per
// sched domain with the load-balancing counters per idle type (v16 column
// order: busy, idle, newly idle) and the wakeup counters. With
// kernel.sched_schedstats 0 the schedstat_inc() counters read 0 (stats.h:
// schedstat_enabled(); ttwu_stat() returns at once): the cpu line's first
// six fields and every domain field; its last three are sched_info's
// (rq_sched_info_arrive()/depart()), counted either way.
func (s *Sim) WriteSchedstat(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "version 16\ntimestamp %d\n", s.now/s.tun.TickNsec)
	n := len(s.cpus)
	for cpu, rq := range s.cpus {
		st := rq.Stats
		if !s.tun.Schedstats {
			st.YldCount, st.SchedCount, st.SchedGoidle, st.TTWUCount, st.TTWULocal = 0, 0, 0, 0, 0
		}
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d %d %d %d %d %d\n", cpu, st.YldCount, st.SchedCount, st.SchedGoidle,
			st.TTWUCount, st.TTWULocal, st.RQCPUTime, st.RunDelay, st.Pcount)
		for i, d := range s.domains[cpu] {
			ds := &d.Stats
			if !s.tun.Schedstats {
				ds = &DomainStats{}
			}
			fmt.Fprintf(&b, "domain%d %s", i, hwmodel.FormatCPUMask(d.Span, n))
			for it := 0; it < numIdleTypes; it++ {
				fmt.Fprintf(&b, " %d %d %d %d %d %d %d %d", ds.LBCount[it], ds.LBBalanced[it], ds.LBFailed[it],
					ds.LBImbalance[it], ds.LBGained[it], ds.LBHotGained[it], ds.LBNoBusyQ[it], ds.LBNoBusyG[it])
			}
			fmt.Fprintf(&b, " %d %d %d 0 0 0 0 0 0 %d %d %d\n", ds.ALBCount, ds.ALBFailed, ds.ALBPushed,
				ds.TTWUWakeRemote, ds.TTWUMoveAffine, ds.TTWUMoveBalance)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteTaskStats writes every task's /proc/<pid>/sched, in pid order, as
// kernel/sched/debug.c: proc_sched_show_task() prints it (v6.6): the
// "comm (pid, #threads: 1)" title and its rule, then "%-45s:%21Ld" counts
// and "%-45s:%14Ld.%06ld" times in ms (SPLIT_NS). Only the fields the
// model keeps are printed (sum_sleep_runtime, iowait, the failed-migration
// counts and the rest are left out, not printed as 0); wait_sum is
// sched_info's run_delay. With kernel.sched_schedstats 0 the
// schedstat_enabled() block (slice_max to avg_per_cpu here) is not
// printed, as the kernel leaves it out.
func (s *Sim) WriteTaskStats(w io.Writer) error {
	var b strings.Builder
	count := func(k string, v int64) { fmt.Fprintf(&b, "%-45s:%21d\n", k, v) }
	ms := func(k string, v int64) {
		// nsec_high() / nsec_low() of SPLIT_NS: the sign on the ms part.
		hi, lo := v/1_000_000, v%1_000_000
		if v < 0 {
			hi, lo = -(-v / 1_000_000), -v%1_000_000
		}
		fmt.Fprintf(&b, "%-45s:%14d.%06d\n", k, hi, lo)
	}
	for _, t := range s.tasks {
		st, se := &t.Stats, &t.se
		fmt.Fprintf(&b, "%s (%d, #threads: 1)\n", taskComm(t), t.PID)
		b.WriteString(strings.Repeat("-", 67) + "\n")
		ms("se.exec_start", int64(se.ExecStart))
		ms("se.vruntime", int64(se.Vruntime))
		ms("se.sum_exec_runtime", int64(se.SumExecRuntime))
		count("se.nr_migrations", st.NrMigrations)
		nrSwitches := st.NrVolSwitch + st.NrInvolSwitch
		if s.tun.Schedstats {
			ms("slice_max", st.SliceMax)
			ms("wait_max", st.WaitMax)
			ms("wait_sum", st.WaitSum)
			count("wait_count", st.WaitCount)
			count("nr_wakeups", st.NrWakeups)
			count("nr_wakeups_sync", st.NrWakeupsSync)
			count("nr_wakeups_migrate", st.NrWakeupsMig)
			count("nr_wakeups_local", st.NrWakeupsLoc)
			count("nr_wakeups_remote", st.NrWakeupsRem)
			avgAtom, avgPerCPU := int64(-1), int64(-1)
			if nrSwitches > 0 {
				avgAtom = int64(se.SumExecRuntime) / nrSwitches
			}
			if st.NrMigrations > 0 {
				avgPerCPU = int64(se.SumExecRuntime) / st.NrMigrations
			}
			ms("avg_atom", avgAtom)
			ms("avg_per_cpu", avgPerCPU)
		}
		count("nr_switches", nrSwitches)
		count("nr_voluntary_switches", st.NrVolSwitch)
		count("nr_involuntary_switches", st.NrInvolSwitch)
		count("se.load.weight", int64(se.Load.Weight))
		count("se.avg.load_sum", int64(se.Avg.LoadSum))
		count("se.avg.runnable_sum", int64(se.Avg.RunnableSum))
		count("se.avg.util_sum", int64(se.Avg.UtilSum))
		count("se.avg.load_avg", int64(se.Avg.LoadAvg))
		count("se.avg.runnable_avg", int64(se.Avg.RunnableAvg))
		count("se.avg.util_avg", int64(se.Avg.UtilAvg))
		count("se.avg.last_update_time", int64(se.Avg.LastUpdateTime))
		count("policy", 0) // SCHED_NORMAL
		count("prio", int64(taskPrio(t)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
