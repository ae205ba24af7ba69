package emu

import (
	"fmt"
	"strings"
	"testing"
)

// TestEpochSweep runs one wakeup-heavy workload on spr-2s with the epoch
// at the lookahead (an IPI's delivery) and at 2x, 5x and 10x, and prints
// how far the results move: wakeups and context switches, the late
// cross-CPU changes (a remote enqueue whose target had already moved past
// it), and the mean runnable wait. The default epoch is the lookahead.
func TestEpochSweep(t *testing.T) {
	m := machine(t, "spr-2s")
	type row struct {
		mult                 int64
		epoch                int64
		wakeups, switches    int64
		late, lateNS, epochs int64
		runDelay, runtime    int64
	}
	var rows []row
	for _, mult := range []int64{1, 2, 5, 10} {
		s0, err := New(Config{Machine: m, Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Driver: "serial"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Machine: m, Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Driver: "serial", Epoch: mult * s0.Lookahead()})
		if err != nil {
			t.Fatal(err)
		}
		mixedWorkload(t, s)
		dur := 5 * ms
		if testing.Short() || raceEnabled {
			dur = ms
		}
		s.Run(dur)
		r := row{mult: mult, epoch: s.epoch, late: s.LateMsgs, lateNS: s.LateNS, epochs: s.Epochs}
		for _, rq := range s.cpus {
			r.wakeups += rq.Stats.TTWUCount
			r.switches += rq.Stats.NrSwitches
			r.runDelay += rq.Stats.RunDelay
			r.runtime += rq.Stats.RQCPUTime
		}
		rows = append(rows, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%6s %9s %8s %9s %9s %8s %12s %12s %12s\n", "epoch", "ns", "barriers", "wakeups", "switches", "late", "late ns/msg", "mean wait ns", "run ms")
	base := rows[0]
	for _, r := range rows {
		meanWait := r.runDelay / max(r.switches, 1)
		fmt.Fprintf(&b, "%5dx %9d %8d %9d %9d %8d %12.0f %12d %12.2f\n", r.mult, r.epoch, r.epochs, r.wakeups, r.switches,
			r.late, float64(r.lateNS)/float64(max(r.late, 1)), meanWait, float64(r.runtime)/1e6)
	}
	for _, r := range rows[1:] {
		fmt.Fprintf(&b, "%5dx vs 1x: wakeups %+.2f%%, switches %+.2f%%, mean wait %+.2f%%\n", r.mult,
			pct(r.wakeups, base.wakeups), pct(r.switches, base.switches),
			pct(r.runDelay/max(r.switches, 1), base.runDelay/max(base.switches, 1)))
	}
	t.Log("\n" + b.String())
	// A change is never later than one epoch.
	for _, r := range rows {
		if r.late > 0 && r.lateNS/r.late > r.epoch {
			t.Errorf("%dx: late changes average %d ns, more than the epoch %d", r.mult, r.lateNS/r.late, r.epoch)
		}
	}
}

func pct(a, b int64) float64 { return 100 * (float64(a) - float64(b)) / float64(max(b, 1)) }
