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
// order: busy, idle, newly idle) and the wakeup counters.
func (s *Sim) WriteSchedstat(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "version 16\ntimestamp %d\n", s.now/s.tun.TickNsec)
	n := len(s.cpus)
	for cpu, rq := range s.cpus {
		st := &rq.Stats
		fmt.Fprintf(&b, "cpu%d %d 0 %d %d %d %d %d %d %d\n", cpu, st.YldCount, st.SchedCount, st.SchedGoidle,
			st.TTWUCount, st.TTWULocal, st.RQCPUTime, st.RunDelay, st.Pcount)
		for i, d := range s.domains[cpu] {
			ds := &d.Stats
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

// WriteTaskStats prints each task's /proc/<pid>/schedstat triple and the
// /proc/<pid>/sched counters rqemu keeps, one line per task.
func (s *Sim) WriteTaskStats(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#   pid comm             cpu state     sum_exec_ns  run_delay_ns pcount  wait_max_ns  wakeups local remote migrate  migrations  vol  invol\n")
	for _, t := range s.tasks {
		st := &t.Stats
		fmt.Fprintf(&b, "%7d %-16s %3d %-9s %12d %13d %6d %12d %8d %5d %6d %7d %11d %4d %6d\n",
			t.PID, t.Comm, t.cpu, t.state, t.se.SumExecRuntime, st.RunDelay, st.Pcount, st.WaitMax,
			st.NrWakeups, st.NrWakeupsLoc, st.NrWakeupsRem, st.NrWakeupsMig, st.NrMigrations, st.NrVolSwitch, st.NrInvolSwitch)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
