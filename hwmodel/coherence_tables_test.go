package hwmodel

import (
	"math/rand/v2"
	"testing"
)

// TestSharerByClass: the per-class search finds the same nearest and
// farthest sharer, at the same cost, as scanning every sharer in CPU order
// (the oracle the coherence model used before the tables).
func TestSharerByClass(t *testing.T) {
	for _, name := range []string{"spr-2s", "epyc-9654-2s", "hikey-8", "xeon-e5-2x10"} {
		m := mustLoad(t, name)
		tb := m.tables()
		rng := rand.New(rand.NewPCG(1, 2))
		n := m.NumCPUs()
		for trial := 0; trial < 2000; trial++ {
			l := m.NewLine(rng.IntN(len(m.Nodes)))
			for k := 1 + rng.IntN(6); k > 0; k-- {
				l.addSharer(rng.IntN(n))
			}
			cpu := rng.IntN(n)
			for _, far := range []bool{false, true} {
				best, from := -1.0, -1
				l.forEachSharer(func(s int) {
					if s == cpu {
						return
					}
					ns := m.TransferNS(cpu, s, int(l.Home))
					if best < 0 || (!far && ns < best) || (far && ns > best) {
						best, from = ns, s
					}
				})
				ns, got, ok := m.sharerByClass(tb, l, cpu, far)
				if ok != (from >= 0) || ok && (got != from || ns != best) {
					t.Fatalf("%s cpu %d far=%v: tables give sharer %d at %.1f ns, the scan %d at %.1f", name, cpu, far, got, ns, from, best)
				}
			}
		}
	}
}
