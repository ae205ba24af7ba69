package hwmodel

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// A Line is one host cache line (64 bytes): the replay's hit check reads
// it per access, on runs with more lines than the host caches hold.
func TestLineIsOneHostCacheLine(t *testing.T) {
	if n := unsafe.Sizeof(Line{}); n != 64 {
		t.Errorf("sizeof(Line) = %d, want 64", n)
	}
}

// A Line's state against a plain oracle (an owner, a set of sharers), on
// machines whose sharer bits fit inline (hikey-8, epyc-9654-2s's 384 CPUs)
// and on one that needs more (1024 CPUs), with saturating bursts.
func TestLineStateOracle(t *testing.T) {
	_, big := layoutHost(t, "amd", "x86_64", Layout{Sockets: 2, NodesPerSocket: 1, LLCsPerSocket: 16, CoresPerLLC: 16, CoresPerL2: 1, ThreadsPerCore: 2, Numbering: "linux"})
	for _, m := range []*Machine{mustLoad(t, "hikey-8"), mustLoad(t, "epyc-9654-2s"), big} {
		n := m.NumCPUs()
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		for trial := 0; trial < 50; trial++ {
			l := m.NewLine(0)
			owner, sharers := -1, map[int]bool{}
			for i := 0; i < 200; i++ {
				cpu, op := rng.IntN(n), Op(rng.IntN(int(NumOps)))
				if rng.IntN(2) == 0 {
					cpu = n - 1 - rng.IntN(min(n, 8)) // the last word's CPUs
				}
				m.Access(l, cpu, op)
				switch {
				case op != Read:
					owner, sharers = cpu, map[int]bool{}
				case owner == cpu || sharers[cpu]:
				case owner >= 0:
					sharers[owner], sharers[cpu], owner = true, true, -1
				case len(sharers) > 0:
					sharers[cpu] = true
				default:
					owner = cpu
				}
				if l.Owner() != owner || l.Sharers() != len(sharers) {
					t.Fatalf("%d CPUs, op %d (%s by %d): owner %d sharers %d, want %d and %d", n, i, op, cpu, l.Owner(), l.Sharers(), owner, len(sharers))
				}
				for c := 0; c < n; c++ {
					if l.Holds(c) != (c == owner || sharers[c]) {
						t.Fatalf("%d CPUs, op %d: Holds(%d) = %v", n, i, c, l.Holds(c))
					}
				}
			}
		}
	}
	m := mustLoad(t, "hikey-8")
	l := m.NewLine(0)
	for i := 0; i < 1<<16; i++ {
		m.Access(l, 1, RMW)
	}
	if l.burst != maxBurst || m.Keeps(l, 1) {
		t.Errorf("after 65536 RMWs: burst %d (want %d saturated), Keeps %v", l.burst, maxBurst, m.Keeps(l, 1))
	}
}
