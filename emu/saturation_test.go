package emu

import (
	"fmt"
	"testing"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
)

// TestSaturatedLineCapacity runs N CPUs of spr-2s hammering one shared
// counter (an atomic add every few ns of their own time, as
// update_tg_load_avg() would under a flood of migrations) through the full
// engine: epochs at the lookahead, the weave at every barrier, stalls
// charged to the clocks. One line serves one transaction at a time, so over
// every window its busy time (each RMW's transfer plus the RMW, by the
// distance class it came from) is at most the window, and the RMWs served
// per µs never exceed what that class mix allows. A weave that started the
// line free at each barrier served a 224-deep queue about ten times over
// (the defect this guards against).
func TestSaturatedLineCapacity(t *testing.T) {
	for _, n := range []int{2, 56, 224} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newSim(t, "spr-2s", "v6.6-eevdf")
			ctr := contention.NewCounter(s.space, "hammer", 0)
			site := s.space.Site("hammer")
			for cpu := 0; cpu < n; cpu++ {
				mustTask(t, s, TaskSpec{Comm: "hammer", CPU: cpu, Prog: ProgramFunc(func(tk *Task) Action {
					rq := s.cpus[tk.cpu]
					ctr.Add(rq.log, rq.logNow(), site, 1)
					rq.accessCost(SymUpdateLoadAvg, hwmodel.RMW)
					return Run(5)
				})})
			}
			const chunk = 100_000 // ns
			m := s.Machine()
			// The last transaction of a window may run past its end.
			slack := m.Lat.Transfer[hwmodel.ClassRemote] + m.Lat.HomeRemote + m.Lat.RMWLocal
			// The cheapest transaction: an SMT hand-over plus the RMW.
			minX := m.Lat.Transfer[hwmodel.ClassSMT] + m.Lat.RMWLocal
			prevBusy, prevServed, prevAt := 0.0, int64(0), int64(0)
			for end := int64(chunk); end <= 12*chunk; end += chunk {
				s.Run(end)
				at := s.space.Now() // the weave has replayed up to here
				window := float64(at - prevAt)
				ls := s.space.Stats().Lines[ctr.Line()]
				busy := ls.BusyNS - prevBusy
				served := ls.TotalTransfers()
				if busy > window+slack {
					t.Errorf("N=%d, window %d-%d µs: line busy %.0f ns", n, prevAt/1000, at/1000, busy)
				}
				if got := served - prevServed; float64(got)*minX > window+slack {
					t.Errorf("N=%d, window %d-%d µs: %d transfers served, more than %.0f ns of line time", n, prevAt/1000, at/1000, got, float64(got)*minX)
				}
				prevBusy, prevServed, prevAt = ls.BusyNS, served, at
			}
			// The engine runs ahead of the weave by what the CPUs log
			// in about an epoch before they learn of their stall, and
			// no further: a CPU the weave is behind on waits.
			if p, most := s.space.Pending(), n*int(2*s.Lookahead()/(5+int64(m.Lat.RMWLocal))); p > most {
				t.Errorf("N=%d: %d accesses still unserved at the end, the engine ran ahead of the weave (at most %d)", n, p, most)
			}
			if s.Epochs < 1000 {
				t.Errorf("N=%d: %d epochs, want at least 1000", n, s.Epochs)
			}
			ls := s.space.Stats().Lines[ctr.Line()]
			util := ls.BusyNS / float64(s.Now())
			var stall int64
			for _, rq := range s.cpus[:n] {
				stall += rq.Stats.StallNS + rq.debt
			}
			perCPU := float64(stall) / float64(n) / float64(s.Now())
			t.Logf("N=%d: %d epochs, line busy %.1f%% of the time, %d transfers (%v by class), CPUs stalled %.1f%% of the time, %d pending at the end",
				n, s.Epochs, 100*util, ls.TotalTransfers(), ls.Transfers, 100*perCPU, s.space.Pending())
			if n >= 56 && util < 0.9 {
				t.Errorf("N=%d: the line is busy only %.1f%% of the time; the hammer should saturate it", n, 100*util)
			}
			if n == 224 && perCPU < 0.8 {
				t.Errorf("N=224: CPUs stalled only %.1f%% of the time on a saturated line", 100*perCPU)
			}
		})
	}
}
