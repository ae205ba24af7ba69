package weave

import (
	"github.com/rqemu/rqemu/hwmodel"
	"slices"
	"testing"
)

// TestReplayCleanForwards: readers of a line that other cores hold Shared
// are served at once, each paying only its own forward, whatever the LLC's
// inclusion policy (xeon-e5-2x10's inclusive LLC has its own copy; the
// non-inclusive LLCs of spr-2s and epyc-9654-2s keep the lines several
// cores share): a clean forward does not occupy the line.
func TestReplayCleanForwards(t *testing.T) {
	for _, tc := range []struct {
		topo    string
		nonIncl bool // the preset's caches.llc_inclusion (descriptive)
	}{
		{"xeon-e5-2x10", false},
		{"spr-2s", true},
		{"epyc-9654-2s", true},
	} {
		t.Run(tc.topo, func(t *testing.T) {
			m := mustLoad(t, tc.topo)
			if got := m.Caches.LLCInclusion == hwmodel.LLCNonInclusive; got != tc.nonIncl {
				t.Fatalf("llc_inclusion %q: non-inclusive %v, want %v", m.Caches.LLCInclusion, got, tc.nonIncl)
			}
			// CPU 0 wrote the line, CPU 1 read it: Shared in two L2s.
			prep := func(l *hwmodel.Line) {
				m.Access(l, 0, hwmodel.RMW)
				m.Access(l, 1, hwmodel.Read)
			}
			line, oracle := m.NewLine(0), m.NewLine(0)
			prep(line)
			prep(oracle)
			// Six more readers of CPU 0's LLC, all at one instant.
			readers := []int{2, 3, 4, 5, 6, 7} // in CPU 0's LLC on all three
			streams := make([][]Req, m.NumCPUs())
			for _, c := range readers {
				streams[c] = []Req{{T: 1000, Op: hwmodel.Read}}
			}
			res := Replay(m, []*hwmodel.Line{line}, streams)
			for k, c := range readers {
				cost := m.Access(oracle, c, hwmodel.Read)
				if cost.Kind != hwmodel.Transfer || !cost.FromSharer {
					t.Fatalf("reader %d: %+v, want a clean forward", c, cost)
				}
				if want := cost.NS; !near(res.Stall[c][0], want) {
					t.Fatalf("%d-th reader CPU %d stalls %.3f ns, want %.3f (its own forward)", k, c, res.Stall[c][0], want)
				}
			}
			if got := res.Lines[0].BusyPS; got != 0 {
				t.Errorf("line busy %d ps, want 0 (clean forwards do not occupy it)", got)
			}
		})
	}
}

// servedOrder is cpus in the order a replay served their one request each:
// by stall, ties by CPU. Under a serialized line the k-th served waits for
// the k before it, so its stall is the larger.
func servedOrder(res *ReplayResult, cpus []int) []int {
	order := slices.Clone(cpus)
	slices.SortStableFunc(order, func(a, b int) int {
		switch sa, sb := res.Stall[a][0], res.Stall[b][0]; {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return a - b
	})
	return order
}
