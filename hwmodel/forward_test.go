package hwmodel

import (
	"slices"
	"testing"
)

// TestReplayCleanForwards: readers of a line that other cores hold Shared.
// Under an inclusive LLC (xeon-e5-2x10, Broadwell-EP) the LLC has the
// line and serves every reader at once: each pays only its own forward.
// Under a non-inclusive LLC (spr-2s: Skylake-SP and later; epyc-9654-2s:
// Zen 4's victim L3) the copies live in the sharers' L2s, and the home
// serializes the snoop-forwards to the address: the k-th reader also
// waits for the k forwards before it (CacheSpec.LLCInclusion). The
// first read after a write, out of Modified, is serialized under both.
func TestReplayCleanForwards(t *testing.T) {
	for _, tc := range []struct {
		topo   string
		serial bool
	}{
		{"xeon-e5-2x10", false},
		{"spr-2s", true},
		{"epyc-9654-2s", true},
	} {
		t.Run(tc.topo, func(t *testing.T) {
			m := mustLoad(t, tc.topo)
			if got := m.Caches.LLCInclusion == LLCNonInclusive; got != tc.serial {
				t.Fatalf("llc_inclusion %q: non-inclusive %v, want %v", m.Caches.LLCInclusion, got, tc.serial)
			}
			// CPU 0 wrote the line, CPU 1 read it: Shared in two L2s.
			prep := func(l *Line) {
				m.Access(l, 0, RMW)
				m.Access(l, 1, Read)
			}
			line, oracle := m.NewLine(0), m.NewLine(0)
			prep(line)
			prep(oracle)
			// Eight more readers of the first socket, all at one instant.
			readers := []int{2, 3, 4, 5, 6, 7, 8, 9}
			streams := make([][]Req, m.NumCPUs())
			for _, c := range readers {
				streams[c] = []Req{{T: 1000, Op: Read}}
			}
			res := m.Replay([]*Line{line}, streams)
			// The home draws the order among simultaneous requests
			// (Replayer.serve): check them in the order served.
			order := servedOrder(res, readers)
			wait := 0.0
			for k, c := range order {
				cost := m.Access(oracle, c, Read)
				if cost.Kind != Transfer || !cost.FromSharer {
					t.Fatalf("reader %d: %+v, want a clean forward", c, cost)
				}
				want := cost.NS
				if tc.serial {
					want += wait
				}
				if !near(res.Stall[c][0], want) {
					t.Fatalf("%d-th reader CPU %d stalls %.3f ns, want %.3f (serialized %v)", k, c, res.Stall[c][0], want, tc.serial)
				}
				wait += cost.NS
			}
			var busy int64
			if tc.serial {
				busy = ps(wait)
			}
			if got := res.Lines[0].BusyPS; got != busy {
				t.Errorf("line busy %d ps, want %d", got, busy)
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
