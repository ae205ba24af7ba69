package emu

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// WriteSchedstat prints /proc/schedstat as the modeled release does
// (Documentation/scheduler/sched-stats.rst; procLayout): a cpu line per
// CPU, then a domain line per sched domain with the load-balancing
// counters per idle type (version 16: busy, idle, newly idle; version 15:
// idle, busy, newly idle, schedstatIdleOrder) and the wakeup counters. With
// kernel.sched_schedstats 0 the schedstat_inc() counters read 0 (stats.h:
// schedstat_enabled(); ttwu_stat() returns at once): the cpu line's first
// six fields and every domain field; its last three are sched_info's
// (rq_sched_info_arrive()/depart()), counted either way.
func (s *Sim) WriteSchedstat(w io.Writer) error {
	var b strings.Builder
	lay := layoutFor(s.feat)
	fmt.Fprintf(&b, "version %d\ntimestamp %d\n", lay.schedstatVersion, s.now/s.tun.TickNsec)
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
			for _, it := range schedstatIdleOrder(lay.schedstatVersion) {
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

// WriteTaskStats writes every task's /proc/<pid>/sched in pid order, as
// the modeled release prints it (procpidsched.go).
func (s *Sim) WriteTaskStats(w io.Writer) error { return s.writeProcPidSched(w) }
