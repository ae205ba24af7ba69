package weave

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestCapacityAgesLines: CPU 0 writes a line of its rq, moves bytes
// through its caches (a copy: its source and destination), then touches
// the line again. On xeon-e5-2x10 (32 KiB L1d, 256 KiB L2, 25 MiB L3) a
// 16 KiB copy (32 KiB moved) leaves the line in the L2, so the touch
// costs an L2 hit; without it, or after a small copy, it is an L1 hit
// (free); a 200 KiB copy leaves it in the L3, a 20 MiB one in memory. A
// locked RMW pays as a load does; a plain store retires into the store
// buffer and pays nothing (replay_store.go); another CPU's copies age
// nothing of CPU 0's.
func TestCapacityAgesLines(t *testing.T) {
	m := mustLoad(t, "xeon-e5-2x10")
	if _, ok := m.Capacity(); !ok {
		t.Fatal("xeon-e5-2x10 has no capacity model (latency_ns.l2_hit)")
	}
	for _, tc := range []struct {
		name   string
		copier int // the CPU that copies
		moved  int64
		op     hwmodel.Op
		want   float64
	}{
		{"no copy", 0, 0, hwmodel.Read, 0},
		{"copy 8 KiB", 0, 2 * 8 << 10, hwmodel.Read, 0},
		{"copy 16 KiB", 0, 2 * 16 << 10, hwmodel.Read, m.Lat.L2Hit},
		{"copy 16 KiB, store", 0, 2 * 16 << 10, hwmodel.Write, 0},
		{"copy 16 KiB, RMW", 0, 2 * 16 << 10, hwmodel.RMW, m.Lat.L2Hit},
		{"copy 200 KiB", 0, 2 * 200 << 10, hwmodel.Read, m.Lat.LLCHit},
		{"copy 20 MiB", 0, 2 * 20 << 20, hwmodel.Read, m.Lat.MemLocal},
		{"CPU 1 copies 16 KiB", 1, 2 * 16 << 10, hwmodel.Read, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSpace(m)
			line := s.NewLine("rq0.uclamp.A", 0)
			site := s.Site("uclamp_rq_inc")
			l0, l1 := s.NewLog(0), s.NewLog(1)
			l0.Record(100, line, hwmodel.Write, site) // the fill: CPU 0 owns the line
			s.WeaveUntil([]*Log{l0, l1}, 1000)
			if tc.copier == 0 {
				l0.Touch(tc.moved)
			} else {
				l1.Touch(tc.moved)
				l1.Record(1500, s.NewLine("rq1.lock", 0), hwmodel.Write, site)
			}
			l0.Record(2000, line, tc.op, site)
			r := s.WeaveUntil([]*Log{l0, l1}, 3000)
			if got := r.ExactNS[0]; !near(got, tc.want) {
				t.Errorf("touch after %d bytes moved: stall %v ns, want %v", tc.moved, got, tc.want)
			}
		})
	}
}

// TestCapacityAgeIsTheCPUsOwn: the level a touch finds a line at depends
// only on the bytes the CPU moved since its own last touch of that line:
// touching the line in between renews it, and a Touch recorded in an
// earlier epoch counts the same as one in the same epoch.
func TestCapacityAgeIsTheCPUsOwn(t *testing.T) {
	m := mustLoad(t, "xeon-e5-2x10")
	run := func(cut bool, renew bool) float64 {
		s := NewSpace(m)
		line := s.NewLine("rq0.uclamp.B", 0)
		site := s.Site("uclamp_rq_dec")
		l := s.NewLog(0)
		l.Record(100, line, hwmodel.Write, site)
		s.WeaveUntil([]*Log{l}, 150) // the fill from memory
		l.Touch(20 << 10)
		if renew {
			l.Record(200, line, hwmodel.Read, site)
		}
		var total float64
		if cut {
			total += s.WeaveUntil([]*Log{l}, 300).ExactNS[0]
		}
		l.Touch(20 << 10)
		l.Record(400, line, hwmodel.Read, site)
		return total + s.WeaveUntil([]*Log{l}, 1000).ExactNS[0]
	}
	for _, cut := range []bool{false, true} {
		if got := run(cut, false); !near(got, m.Lat.L2Hit) {
			t.Errorf("cut %v: 40 KiB since the last touch: stall %v, want the L2's %v", cut, got, m.Lat.L2Hit)
		}
		if got := run(cut, true); got != 0 {
			t.Errorf("cut %v: 20 KiB since the last touch: stall %v, want 0", cut, got)
		}
	}
}

// TestCapacityIndependentReadsOverlap: independent loads of two lines
// aged into the L2 (a scan) overlap like any miss (hwmodel's MLP): the
// CPU waits one L2 latency for both (less the 1 ns it runs on before it
// consumes them), where two dependent loads wait two.
func TestCapacityIndependentReadsOverlap(t *testing.T) {
	m := mustLoad(t, "xeon-e5-2x10")
	for _, indep := range []bool{false, true} {
		s := NewSpace(m)
		a, b := s.NewLine("rq0.A", 0), s.NewLine("rq0.B", 0)
		site := s.Site("scan")
		l := s.NewLog(0)
		l.Record(100, a, hwmodel.Write, site)
		l.Record(100, b, hwmodel.Write, site)
		s.WeaveUntil([]*Log{l}, 1000)
		l.Touch(64 << 10)
		l.SetIndependent(indep)
		l.Record(2000, a, hwmodel.Read, site)
		l.Record(2000, b, hwmodel.Read, site)
		l.SetIndependent(false)
		l.Record(2001, a, hwmodel.Write, site) // consumes the loads
		want := 2 * m.Lat.L2Hit
		if indep {
			want = m.Lat.L2Hit - 1
		}
		if got := s.WeaveUntil([]*Log{l}, 3000).ExactNS[0]; !near(got, want) {
			t.Errorf("independent %v: stall %v, want %v", indep, got, want)
		}
	}
}
