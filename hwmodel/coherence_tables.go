package hwmodel

import (
	"math/bits"
	"sync"
)

// topoTables are lookups the coherence model makes on every access,
// precomputed from the topology (never from the latencies, which
// calibration may change): whether a node is on another package than a CPU,
// and, per CPU and distance class, the set of CPUs at that distance as a
// bitmask, so that the nearest or farthest sharer of a line is found per
// class instead of per sharer.
type topoTables struct {
	nodes      int
	homeRemote []bool     // [cpu*nodes + node]
	classMask  [][]uint64 // [cpu*NumClasses + class] -> words over CPUs
}

// tablesFor returns the topology tables, built once per machine topology on
// first use (a copy of the Machine shares them).
func (m *Machine) tables() *topoTables {
	if m.topo == nil {
		return nil
	}
	return m.topo()
}

// initTables arms the lazy build; buildTopology calls it.
func (m *Machine) initTables() {
	m.topo = sync.OnceValue(func() *topoTables {
		n := len(m.CPUs)
		t := &topoTables{nodes: len(m.Nodes), homeRemote: make([]bool, n*len(m.Nodes)),
			classMask: make([][]uint64, n*int(NumClasses))}
		words := (n + 63) / 64
		for c := 0; c < n; c++ {
			for node := range m.Nodes {
				t.homeRemote[c*t.nodes+node] = m.homeIsRemoteSlow(c, node)
			}
			for k := range NumClasses {
				t.classMask[c*int(NumClasses)+int(k)] = make([]uint64, words)
			}
			for o := 0; o < n; o++ {
				k := m.Class(c, o)
				t.classMask[c*int(NumClasses)+int(k)][o/64] |= 1 << (o % 64)
			}
		}
		return t
	})
}

// sharerByClass finds, among l's sharers other than cpu, the one whose
// transfer to cpu is the cheapest (far false) or the dearest (far true),
// the lowest-numbered on a tie: what a scan of the sharers in CPU order
// keeping the first strict improvement finds. ok is false without sharers.
func (m *Machine) sharerByClass(t *topoTables, l *Line, cpu int, far bool) (ns float64, from int, ok bool) {
	from = -1
	for k := ClassSMT; k < NumClasses; k++ {
		mask := t.classMask[cpu*int(NumClasses)+int(k)]
		first := -1
		words := l.words()
		for w := range mask {
			if y := words[w] & mask[w]; y != 0 {
				first = w*64 + bits.TrailingZeros64(y)
				break
			}
		}
		if first < 0 {
			continue
		}
		x := m.TransferNS(cpu, first, int(l.Home))
		better := from < 0 || (!far && x < ns) || (far && x > ns) || (x == ns && first < from)
		if better {
			ns, from = x, first
		}
	}
	return ns, from, from >= 0
}
