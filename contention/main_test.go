package contention

import (
	"cmp"
	"slices"
	"sync"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var machines sync.Map // preset name -> *hwmodel.Machine

// machine loads a preset once per test binary (machines are immutable).
func machine(tb testing.TB, name string) *hwmodel.Machine {
	tb.Helper()
	if m, ok := machines.Load(name); ok {
		return m.(*hwmodel.Machine)
	}
	m, err := hwmodel.Load(name, hwmodel.LoadOptions{})
	if err != nil {
		tb.Fatalf("hwmodel.Load(%q): %v", name, err)
	}
	actual, _ := machines.LoadOrStore(name, m)
	return actual.(*hwmodel.Machine)
}

// spreadCPUs orders a machine's CPUs so that any prefix is spread as
// evenly as possible over sockets and LLCs: the first SMT thread of the
// first core of each LLC (LLCs alternating between packages), then the
// second core of each LLC, ..., and only then the second SMT threads. On
// spr-2s: 0, 56, 1, 57, ..., 55, 111, 112, 168, ...; on epyc-9654-2s: 0,
// 96, 8, 104, 16, ...
func spreadCPUs(m *hwmodel.Machine) []int {
	type key struct{ thread, slot, llcInPkg, pkg int }
	llcRank := map[int]int{} // LLC -> its index within its package
	seen := map[int]int{}    // package -> LLCs seen
	for llc, cpus := range m.LLCs {
		p := m.CPUs[cpus[0]].Package
		llcRank[llc] = seen[p]
		seen[p]++
	}
	slotOf := map[int]int{} // CPU -> index among its LLC's CPUs of the same thread
	for _, cpus := range m.LLCs {
		n := map[int]int{}
		for _, c := range cpus {
			th := m.CPUs[c].Thread
			slotOf[c] = n[th]
			n[th]++
		}
	}
	keys := make(map[int]key, m.NumCPUs())
	cpus := make([]int, m.NumCPUs())
	for c := range cpus {
		cpus[c] = c
		cp := m.CPUs[c]
		keys[c] = key{cp.Thread, slotOf[c], llcRank[cp.LLC], cp.Package}
	}
	slices.SortFunc(cpus, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		return cmp.Or(cmp.Compare(ka.thread, kb.thread), cmp.Compare(ka.slot, kb.slot),
			cmp.Compare(ka.llcInPkg, kb.llcInPkg), cmp.Compare(ka.pkg, kb.pkg), cmp.Compare(a, b))
	})
	return cpus
}

func TestSpreadCPUs(t *testing.T) {
	for _, tc := range []struct {
		preset string
		want   []int
	}{
		{"spr-2s", []int{0, 56, 1, 57}},
		{"epyc-9654-2s", []int{0, 96, 8, 104, 16}},
	} {
		m := machine(t, tc.preset)
		got := spreadCPUs(m)
		if len(got) != m.NumCPUs() || !slices.Equal(got[:len(tc.want)], tc.want) {
			t.Errorf("%s: spread starts %v, want %v", tc.preset, got[:len(tc.want)], tc.want)
		}
		s := slices.Clone(got)
		slices.Sort(s)
		for i, c := range s {
			if c != i {
				t.Fatalf("%s: spread is not a permutation", tc.preset)
			}
		}
	}
}
