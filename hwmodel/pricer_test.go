package hwmodel

import (
	"math/rand/v2"
	"testing"
)

// TestReplayPrices: the replay's table pricing makes the same state change
// and gives the same kind, class, invalidations, sharer flag and ps as
// Machine.Access, on random access sequences over lines with many sharers
// (and on latencies with ties between classes, where the lowest-numbered
// sharer decides).
func TestReplayPrices(t *testing.T) {
	for _, name := range []string{"spr-2s", "epyc-9654-2s", "hikey-8", "xeon-e5-2x10"} {
		for _, tie := range []bool{false, true} {
			m := mustLoad(t, name)
			if tie {
				m.Lat.Transfer[ClassL2] = m.Lat.Transfer[ClassLLC]
				m.Lat.Transfer[ClassSocket] = m.Lat.Transfer[ClassLLC] + m.Lat.HomeRemote
			}
			p := m.NewPricer()
			rng := rand.New(rand.NewPCG(3, 4))
			n := m.NumCPUs()
			for trial := 0; trial < 300; trial++ {
				home := rng.IntN(len(m.Nodes))
				ref, got := m.NewLine(home), m.NewLine(home)
				for i := 0; i < 60; i++ {
					cpu, op := rng.IntN(n), Op(rng.IntN(int(NumOps)))
					if rng.IntN(3) > 0 {
						op = Read // mostly reads: lines gather many sharers
					}
					want := m.Access(ref, cpu, op)
					c, cps := p.Access(got, cpu, op)
					if c.Kind != want.Kind || c.Class != want.Class || c.Invalidated != want.Invalidated ||
						c.FromSharer != want.FromSharer || cps != PS(want.NS) {
						t.Fatalf("%s tie=%v trial %d access %d: cpu %d %s: tables %+v %d ps, Access %+v", name, tie, trial, i, cpu, op, c, cps, want)
					}
					if got.owner != ref.owner || got.nshare != ref.nshare || got.burst != ref.burst {
						t.Fatalf("%s trial %d access %d: line state %+v, Access leaves %+v", name, trial, i, got, ref)
					}
					for w := range ref.words() {
						if got.words()[w] != ref.words()[w] {
							t.Fatalf("%s trial %d access %d: sharers differ", name, trial, i)
						}
					}
				}
			}
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
			p := m.NewPricer()
			c, cps := p.Access(got, tc.cpu, tc.op)
			a := m.Access(ref, tc.cpu, tc.op)
			for _, x := range []struct {
				what string
				c    AccessCost
				ps   int64
			}{{"tables", c, cps}, {"Access", a, PS(a.NS)}} {
				if x.c.Kind != tc.kind || x.c.Class != tc.class || x.c.Invalidated != tc.inval || x.c.FromSharer != tc.sharer || x.ps != tc.wantPS {
					t.Errorf("%s: %+v %d ps, want kind %v class %v invalidated %d sharer %v, %d ps", x.what, x.c, x.ps, tc.kind, tc.class, tc.inval, tc.sharer, tc.wantPS)
				}
			}
			if int(got.owner) != tc.ownerIs || int(got.burst) != tc.burst {
				t.Errorf("line after: owner %d burst %d, want %d and %d", got.owner, got.burst, tc.ownerIs, tc.burst)
			}
		})
	}
}
