package hwmodel

import (
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
func presetLat(t *testing.T, m *Machine, mlp int, window, x float64, k Class) {
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
func scan(m *Machine, n int, owners []int, dep int64) float64 {
	var lines []*Line
	streams := make([][]Req, m.NumCPUs())
	for i := 0; i < n; i++ {
		l := m.NewLine(0)
		m.Access(l, owners[i%len(owners)], Write)
		lines = append(lines, l)
		streams[0] = append(streams[0], Req{T: 0, Line: int32(i), Op: Read, Indep: true})
	}
	own := m.NewLine(0)
	m.Access(own, 0, Write)
	lines = append(lines, own)
	streams[0] = append(streams[0], Req{T: dep, Line: int32(n), Op: Read})
	return m.Replay(lines, streams).CPUStall[0]
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
		k      Class
		owners []int
	}{
		{"hikey-8", 3, 8, 45, ClassL2, []int{1, 2, 3}},
		{"spr-2s", 16, 170, 55.3, ClassLLC, []int{1, 2, 3, 4, 5}},
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
	presetLat(t, m, 3, 8, 45, ClassL2)
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
	streams[0] = []Req{{T: 0, Op: Lock}, {T: 5000, Op: Unlock}}
	// Eight lockers, alternating sockets, asking 100 ns apart while CPU
	// 0 holds the lock; each holds it 50 ns.
	askers := []int{60, 3, 70, 5, 80, 7, 90, 9}
	for i, c := range askers {
		at := int64(100 * (i + 1))
		streams[c] = []Req{{T: at, Op: Lock}, {T: at + 50, Op: Unlock}}
	}
	res := m.Replay([]*Line{line}, streams)
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
	// Each hand-over is the holder's release plus one transfer to the
	// next: a remote one between sockets, 122 ns.
	for k := 1; k < len(askers); k++ {
		prevRelease := got[k-1] + 50
		want := prevRelease + m.TransferNS(askers[k], askers[k-1], 0)
		if math.Abs(got[k]-want) > 1e-6 {
			t.Errorf("locker %d (CPU %d) took it at %.1f, want %.1f (release at %.1f plus the transfer)", k, askers[k], got[k], want, prevRelease)
		}
	}
}

// TestReplayPricesHand prices each kind of access on spr-2s (home node 0)
// from the preset's latencies, by hand: an SMT sibling's forward 8.0 ns, a
// same-LLC one 55.3, the other socket's 122.0; a same-LLC forward to a
// requester whose line's home is on the other socket pays the 67.0 ns
// home-remote penalty on top (122.3); DRAM fills 110.0 local, 190.0
// remote; a store to a line two CPUs share invalidates both and waits for
// the dearest (remote, 122.0); a store to a line the CPU owns is a hit.
func TestReplayPricesHand(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	lat := m.Lat
	if lat.Transfer[ClassSMT] != 8 || lat.Transfer[ClassLLC] != 55.3 || lat.Transfer[ClassRemote] != 122 ||
		lat.HomeRemote != 67 || lat.MemLocal != 110 || lat.MemRemote != 190 {
		t.Fatalf("spr-2s latencies changed (%+v): recompute the hand values", lat)
	}
	type step struct {
		cpu int
		op  Op
	}
	for _, tc := range []struct {
		name    string
		prep    []step // accesses that set the line's state
		cpu     int
		op      Op
		kind    AccessKind
		class   Class
		inval   int
		sharer  bool
		wantPS  int64
		burst   int
		ownerIs int
	}{
		{"SMT sibling forward", []step{{112, Write}}, 0, Read, Transfer, ClassSMT, 0, false, 8000, 0, -1},
		{"same-LLC forward", []step{{1, Write}}, 0, Read, Transfer, ClassLLC, 0, false, 55300, 0, -1},
		{"remote forward", []step{{56, Write}}, 0, Read, Transfer, ClassRemote, 0, false, 122000, 0, -1},
		{"same-LLC forward, home remote", []step{{57, Write}}, 56, Read, Transfer, ClassLLC, 0, false, 122300, 0, -1},
		{"DRAM fill, local", nil, 0, Read, Fill, 0, 0, false, 110000, 0, 0},
		{"DRAM fill, remote", nil, 56, Read, Fill, 0, 0, false, 190000, 0, 56},
		{"read from the nearest sharer", []step{{1, Write}, {56, Read}}, 2, Read, Transfer, ClassLLC, 0, true, 55300, 0, -1},
		{"store invalidates two sharers, waits for the dearest", []step{{1, Write}, {56, Read}}, 2, RMW, Invalidate, ClassRemote, 2, false, 122000, 1, 2},
		{"store to an owned line", []step{{2, Write}}, 2, RMW, Hit, 0, 0, false, 0, 2, 2},
		{"RMW takes a Modified line", []step{{1, Write}}, 0, RMW, Transfer, ClassLLC, 0, false, 55300, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, got := m.NewLine(0), m.NewLine(0)
			for _, s := range tc.prep {
				m.Access(ref, s.cpu, s.op)
				m.Access(got, s.cpu, s.op)
			}
			p := newReplayPrices(m)
			c, cps := p.access(m, got, tc.cpu, tc.op)
			a := m.Access(ref, tc.cpu, tc.op)
			for _, x := range []struct {
				what string
				c    AccessCost
				ps   int64
			}{{"tables", c, cps}, {"Access", a, ps(a.NS)}} {
				if x.c.Kind != tc.kind || x.c.Class != tc.class || x.c.Invalidated != tc.inval || x.c.FromSharer != tc.sharer || x.ps != tc.wantPS {
					t.Errorf("%s: %+v %d ps, want kind %v class %v invalidated %d sharer %v, %d ps", x.what, x.c, x.ps, tc.kind, tc.class, tc.inval, tc.sharer, tc.wantPS)
				}
			}
			if got.owner != tc.ownerIs || got.burst != tc.burst {
				t.Errorf("line after: owner %d burst %d, want %d and %d", got.owner, got.burst, tc.ownerIs, tc.burst)
			}
		})
	}
}
