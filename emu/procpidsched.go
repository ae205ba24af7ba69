package emu

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu/pelt"
)

// writeProcPidSched writes every live task's /proc/<pid>/sched, in pid
// order, as debug.c: proc_sched_show_task() prints it for the modeled
// release (procLayout): the "comm (pid, #threads: 1)" title and its rule,
// "%-45s:%21Ld" counts and "%-45s:%14Ld.%06ld" times in ms (SPLIT_NS).
// Exited tasks are printed too, as read just before their release.
// The schedstat_enabled() block is left out with kernel.sched_schedstats
// 0, as the kernel leaves it out. The build is lkp's: CONFIG_SCHEDSTATS,
// CONFIG_UCLAMP_TASK and CONFIG_NUMA_BALANCING on, CONFIG_SCHED_CORE off
// (no core_forceidle_sum).
//
// Fields the model does not track print what the kernel prints for a task
// that never did the thing: 0 for sum_sleep_runtime, sum_block_runtime,
// block_start, sleep_max, block_max, exec_max, the iowait, failed- and
// forced-migration and nr_wakeups_passive/_idle counts, the
// NUMA-balancing counts (numa_preferred_nid -1) and clock-delta (two cpu_clock() reads, a few tens of ns on hardware).
// wait_sum is sched_info's run_delay; sleep_start is when the task's
// last sleep dequeued it while it sleeps.
func (s *Sim) writeProcPidSched(w io.Writer) error {
	lay := layoutFor(s.feat)
	var b strings.Builder
	count := func(k string, v int64) { fmt.Fprintf(&b, "%-45s:%21d\n", k, v) }
	ms := func(k string, v int64) { fmt.Fprintf(&b, "%-45s:%14d.%06d\n", k, nsecHigh(v), nsecLow(v)) }
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
			sms := func(k string, v int64) { ms(lay.statsPrefix+k, v) }
			scount := func(k string, v int64) { count(lay.statsPrefix+k, v) }
			sleepStart := int64(0)
			if t.state == TaskSleeping {
				sleepStart = t.sleptAt
			}
			sms("sum_sleep_runtime", 0) // not tracked
			if lay.sumBlock {
				sms("sum_block_runtime", 0) // not tracked
			}
			sms("wait_start", se.waitStartNow())
			sms("sleep_start", sleepStart)
			sms("block_start", 0) // the model's sleeps are TASK_INTERRUPTIBLE
			sms("sleep_max", 0)   // not tracked
			sms("block_max", 0)
			sms("exec_max", 0) // not tracked
			sms("slice_max", st.SliceMax)
			sms("wait_max", st.WaitMax)
			sms("wait_sum", st.WaitSum)
			scount("wait_count", st.WaitCount)
			sms("iowait_sum", 0)
			scount("iowait_count", 0)
			for _, k := range []string{"nr_migrations_cold", "nr_failed_migrations_affine", "nr_failed_migrations_running",
				"nr_failed_migrations_hot", "nr_forced_migrations"} {
				scount(k, 0) // not tracked per task
			}
			scount("nr_wakeups", st.NrWakeups)
			scount("nr_wakeups_sync", st.NrWakeupsSync)
			scount("nr_wakeups_migrate", st.NrWakeupsMig)
			scount("nr_wakeups_local", st.NrWakeupsLoc)
			scount("nr_wakeups_remote", st.NrWakeupsRem)
			scount("nr_wakeups_affine", st.NrWakeupsAffine)
			scount("nr_wakeups_affine_attempts", st.NrWakeupsAffineAttempts)
			for _, k := range []string{"nr_wakeups_passive", "nr_wakeups_idle"} {
				scount(k, 0) // not tracked per task
			}
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
		enq := int64(se.Avg.UtilEst.Enqueued &^ pelt.UtilAvgUnchanged) // PM(..., ~UTIL_AVG_UNCHANGED)
		if lay.utilEstSingle {
			// v6.8's one field is the EWMA (util_est_update()).
			count("se.avg.util_est", int64(se.Avg.UtilEst.Ewma))
		} else {
			count("se.avg.util_est.ewma", int64(se.Avg.UtilEst.Ewma))
			count("se.avg.util_est.enqueued", enq)
		}
		lo, hi := uint32(0), uint32(contention.SchedCapacityScale)
		if t.hasClamp {
			lo, hi = t.uclampReq[contention.UclampMin], t.uclampReq[contention.UclampMax]
		}
		elo, ehi := t.uclampEffective()
		count("uclamp.min", int64(lo))
		count("uclamp.max", int64(hi))
		count("effective uclamp.min", int64(elo))
		count("effective uclamp.max", int64(ehi))
		count("policy", 0) // SCHED_NORMAL
		count("prio", int64(taskPrio(t)))
		count("clock-delta", 0) // not modeled
		// sched_show_numa(): no NUMA balancing is modeled; p->numa_faults
		// is NULL, so show_numa_stats() prints nothing.
		count("mm->numa_scan_seq", 0)
		count("numa_pages_migrated", 0)
		count("numa_preferred_nid", -1)
		count("total_numa_faults", 0)
		fmt.Fprintf(&b, "current_node=%d, numa_group_id=0\n", s.m.CPUs[t.cpu].Node)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// waitStartNow is schedstat's wait_start as the kernel holds it: set by
// update_stats_wait_start_fair() while the entity waits on its queue,
// cleared by __update_stats_wait_end() when it is picked or dequeued (the
// model keeps the last start only).
func (se *SchedEntity) waitStartNow() int64 {
	if se.OnRQ && se.cfsRq != nil && se.cfsRq.curr != se {
		return se.waitStart
	}
	return 0
}

// nsecHigh and nsecLow are debug.c: nsec_high() and nsec_low(), SPLIT_NS's
// halves: the ms part carries the sign.
func nsecHigh(v int64) int64 {
	if v < 0 {
		return -(-v / 1_000_000)
	}
	return v / 1_000_000
}

func nsecLow(v int64) int64 {
	if v < 0 {
		v = -v
	}
	return v % 1_000_000
}
