package weave

import (
	"github.com/rqemu/rqemu/hwmodel"
	"math"
	"slices"
	"testing"
)

// The weave's replay on hand-computed cases: the out-of-order core's
// memory-level parallelism (MLP reads in flight, the next one waits), its
// reorder window, the queued lock's hand-over order, and the price of each
// kind of access from the preset's latencies.

// presetLat pins the latencies the hand computations below use (hikey-8
// and spr-2s presets): if a preset changes, recompute them.
func presetLat(t *testing.T, m *hwmodel.Machine, mlp int, window, x float64, k hwmodel.Class) {
	t.Helper()
	if m.Lat.MLP != mlp || m.Lat.Window != window || m.Lat.Transfer[k] != x {
		t.Fatalf("%s: MLP %d, window %v ns, %v transfer %v ns; the hand values assume %d, %v, %v",
			m.Name, m.Lat.MLP, m.Lat.Window, k, m.Lat.Transfer[k], mlp, window, x)
	}
}

// scan is CPU 0 issuing n independent reads at time 0, each of a line
// Modified in another core at class distance (owners from), then a
// dependent load at time dep of a line CPU 0 holds (a hit: it costs
// nothing itself, but consumes the scan). It returns CPU 0's stall.
func scan(m *hwmodel.Machine, n int, owners []int, dep int64) float64 {
	var lines []*hwmodel.Line
	streams := make([][]Req, m.NumCPUs())
	for i := 0; i < n; i++ {
		l := m.NewLine(0)
		m.Access(l, owners[i%len(owners)], hwmodel.Write)
		lines = append(lines, l)
		streams[0] = append(streams[0], Req{T: 0, Line: int32(i), Op: hwmodel.Read, Indep: true})
	}
	own := m.NewLine(0)
	m.Access(own, 0, hwmodel.Write)
	lines = append(lines, own)
	streams[0] = append(streams[0], Req{T: dep, Line: int32(n), Op: hwmodel.Read})
	return Replay(m, lines, streams).CPUStall[0]
}

// TestReplayMLPBoundary: MLP reads issued together overlap into one
// transfer's wait; one more waits for the oldest to arrive and costs a
// second round: ceil(n / MLP) transfers.
func TestReplayMLPBoundary(t *testing.T) {
	for _, tc := range []struct {
		topo   string
		mlp    int
		window float64
		x      float64 // the transfer from the owners
		k      hwmodel.Class
		owners []int
	}{
		{"hikey-8", 3, 8, 45, hwmodel.ClassL2, []int{1, 2, 3}},
		{"spr-2s", 16, 170, 55.3, hwmodel.ClassLLC, []int{1, 2, 3, 4, 5}},
	} {
		m := mustLoad(t, tc.topo)
		presetLat(t, m, tc.mlp, tc.window, tc.x, tc.k)
		for _, n := range []int{1, tc.mlp - 1, tc.mlp, tc.mlp + 1, 2 * tc.mlp, 2*tc.mlp + 1} {
			want := math.Ceil(float64(n)/float64(tc.mlp)) * tc.x
			if got := scan(m, n, tc.owners, 0); math.Abs(got-want) > 1e-6 {
				t.Errorf("%s: %d independent reads with MLP %d stall %.3f ns, want %d rounds of %.1f = %.1f",
					tc.topo, n, tc.mlp, got, int(math.Ceil(float64(n)/float64(tc.mlp))), tc.x, want)
			}
		}
	}
}

// TestReplayWindowBoundary: one independent read (45 ns on hikey-8) and a
// dependent load d ns later on the core's own timeline. The core runs
// past the miss until it needs the data or its reorder window (8 ns) is
// full, whichever comes first: the stall is 45 - min(d, 8).
func TestReplayWindowBoundary(t *testing.T) {
	m := mustLoad(t, "hikey-8")
	presetLat(t, m, 3, 8, 45, hwmodel.ClassL2)
	for _, tc := range []struct {
		d    int64
		want float64
	}{
		{0, 45}, {1, 44}, {7, 38}, {8, 37}, {9, 37}, {30, 37},
	} {
		if got := scan(m, 1, []int{1}, tc.d); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("dependent load %d ns after the read: stall %.3f ns, want %.1f", tc.d, got, tc.want)
		}
	}
}

// TestReplayLockHandOverOrder: a released queued spinlock goes to its
// waiters in the order they asked (the qspinlock's MCS queue), whatever
// the draw that hands a free line to the first miss re-presented at its
// home: remote lockers asking first still get it first.
func TestReplayLockHandOverOrder(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	line := m.NewLine(0)
	streams := make([][]Req, m.NumCPUs())
	streams[0] = []Req{{T: 0, Op: hwmodel.Lock}, {T: 5000, Op: hwmodel.Unlock}}
	// Eight lockers, alternating sockets, asking 100 ns apart while CPU
	// 0 holds the lock; each holds it 50 ns.
	askers := []int{60, 3, 70, 5, 80, 7, 90, 9}
	for i, c := range askers {
		at := int64(100 * (i + 1))
		streams[c] = []Req{{T: at, Op: hwmodel.Lock}, {T: at + 50, Op: hwmodel.Unlock}}
	}
	res := Replay(m, []*hwmodel.Line{line}, streams)
	got := make([]float64, len(askers))
	for i, c := range askers {
		got[i] = float64(100*(i+1)) + res.Stall[c][0] // when it took the lock
	}
	order := make([]int, len(askers))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case got[a] < got[b]:
			return -1
		case got[a] > got[b]:
			return 1
		}
		return 0
	})
	for k, i := range order {
		if i != k {
			t.Fatalf("lock taken in the order %v (askers %v by time asked), want the asking order; taken at %v", order, askers, got)
		}
	}
	// Each hand-over is the holder's release, which invalidates the
	// next locker's spinning copy, then that locker's read of the line
	// and its cmpxchg (spinnerRead): three remote transactions between
	// sockets, 122 ns each.
	for k := 1; k < len(askers); k++ {
		prevRelease := got[k-1] + 50
		want := prevRelease + 3*m.TransferNS(askers[k], askers[k-1], 0)
		if math.Abs(got[k]-want) > 1e-6 {
			t.Errorf("locker %d (CPU %d) took it at %.1f, want %.1f (release at %.1f plus three transactions)", k, askers[k], got[k], want, prevRelease)
		}
	}
}
