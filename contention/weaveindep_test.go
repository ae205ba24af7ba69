package contention

import (
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
	"math"
	"testing"
)

// TestWeaveIndependentReads: loads logged as independent (an out-of-order
// core's scan over other CPUs' lines, Log.SetIndependent) reach the
// replay as such: on spr-2s (16 misses in flight, 55.3 ns same-LLC
// transfers) n of them issued at once and then consumed stall ceil(n/16)
// transfers; logged as dependent they stall n transfers.
func TestWeaveIndependentReads(t *testing.T) {
	m := machine(t, "spr-2s")
	if m.Lat.MLP != 16 || m.Lat.Transfer[hwmodel.ClassLLC] != 55.3 {
		t.Fatalf("spr-2s: MLP %d, LLC transfer %v: the hand values assume 16 and 55.3 ns", m.Lat.MLP, m.Lat.Transfer[hwmodel.ClassLLC])
	}
	for _, tc := range []struct {
		n     int
		indep bool
		want  float64
	}{
		{16, true, 55.3},
		{17, true, 2 * 55.3},
		{32, true, 2 * 55.3},
		{3, false, 3 * 55.3},
	} {
		s := weave.NewSpace(m)
		var cs []*Counter
		writer := s.NewLog(1) // the same LLC as CPU 0
		for i := 0; i < tc.n; i++ {
			c := NewCounter(s, "x", 0)
			c.Add(writer, 0, weave.NoSite, 1) // Modified in CPU 1's cache
			cs = append(cs, c)
		}
		own := NewCounter(s, "own", 0)
		reader := s.NewLog(0)
		own.Add(reader, 0, weave.NoSite, 1)
		s.Weave([]*weave.Log{writer, reader})
		reader = s.NewLog(0)
		was := reader.SetIndependent(tc.indep)
		for _, c := range cs {
			c.Load(reader, 10_000, weave.NoSite)
		}
		reader.SetIndependent(was)
		own.Load(reader, 10_000, weave.NoSite) // consumes the loads
		res := s.Weave([]*weave.Log{reader})
		if got := res.ExactNS[0]; math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%d loads (independent %v): stall %.3f ns, want %.1f", tc.n, tc.indep, got, tc.want)
		}
	}
}
