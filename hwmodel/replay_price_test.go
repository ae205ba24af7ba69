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
			p := newReplayPrices(m)
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
					c, cps := p.access(m, got, cpu, op)
					if c.Kind != want.Kind || c.Class != want.Class || c.Invalidated != want.Invalidated ||
						c.FromSharer != want.FromSharer || cps != ps(want.NS) {
						t.Fatalf("%s tie=%v trial %d access %d: cpu %d %s: tables %+v %d ps, Access %+v", name, tie, trial, i, cpu, op, c, cps, want)
					}
					if got.owner != ref.owner || got.nshare != ref.nshare || got.burst != ref.burst {
						t.Fatalf("%s trial %d access %d: line state %+v, Access leaves %+v", name, trial, i, got, ref)
					}
					for w := range ref.sharers {
						if got.sharers[w] != ref.sharers[w] {
							t.Fatalf("%s trial %d access %d: sharers differ", name, trial, i)
						}
					}
				}
			}
		}
	}
}
