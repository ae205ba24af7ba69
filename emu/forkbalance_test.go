package emu

import (
	"fmt"
	"strings"
	"testing"
)

// Fork balancing (fair.c v6.6: select_task_rq_fair(WF_FORK) ->
// find_idlest_cpu(), find_idlest_group() with adjust_numa_imbalance(),
// find_idlest_group_cpu()), as ForkCPU applies it to tasks a parent on
// CPU 0 of spr-2s forks one after another (sockets: CPUs 0-55 and 56-111,
// their SMT siblings 112-223; NUMA imb_numa_nr = 2: two LLCs).
//
// Worked from the source: the parent runs on CPU 0. Fork 1: the local
// node would run 2 tasks (<= imb_numa_nr) and has one idle CPU fewer
// (<= NUMA_IMBALANCE_MIN), so it stays local; at MC the local core has one
// idle CPU and core 1 two, so CPU 1. Fork 2: the local node would run 3,
// so the node with more idle CPUs wins: node 1, its first idle CPU, 56.
// Fork 3: node 0 has 110 idle, node 1 111: CPU 57. Fork 4: 110 each, the
// local node wins ties: CPU 2. And so on, one task per core, the sockets
// within one task of each other, until every core has a task; then the
// SMT siblings.
func TestForkBalanceSPR(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	m := s.Machine()
	var got []int
	perNode := make([]int, len(m.Nodes))
	cores := map[int]int{}
	const n = 112 + 8
	for i := range n {
		cpu := s.ForkCPU(0, nil)
		got = append(got, cpu)
		spawn(t, s, TaskSpec{Comm: "child", CPU: cpu, Prog: Hog()})
		perNode[m.CPUs[cpu].Node]++
		cores[m.CPUs[cpu].Core]++
		if i < 110 {
			// Until the idle cores run out (the parent's core
			// 0 has one busy CPU, so 111 other cores are whole),
			// every fork gets a whole core to itself.
			if c := cores[m.CPUs[cpu].Core]; c != 1 {
				t.Fatalf("fork %d: CPU %d, on a core with %d children already (forks so far %v)", i+1, cpu, c-1, got)
			}
			if d := perNode[0] - perNode[1]; d < -1 || d > 2 {
				t.Fatalf("fork %d: node 0 has %d children, node 1 %d: want the sockets within imb_numa_nr (forks %v)", i+1, perNode[0], perNode[1], got)
			}
		}
	}
	if want := []int{1, 56, 57, 2, 58, 3}; !equalInts(got[:len(want)], want) {
		t.Errorf("first forks on %v, want %v (worked from find_idlest_group())", got[:len(want)], want)
	}
	t.Logf("forks: node 0 %d, node 1 %d; first 12 %v; last 8 %v", perNode[0], perNode[1], got[:12], got[len(got)-8:])
	for _, c := range got[len(got)-8:] {
		if m.CPUs[c].Thread == 0 && cores[m.CPUs[c].Core] == 1 {
			t.Errorf("fork onto CPU %d after the whole cores ran out: want an SMT sibling of a busy core", c)
		}
	}
}

// TestForkBalanceSingleNode: one LLC, no NUMA level (hikey-8's 2 clusters
// of 4 share a package: MC is the cluster, PKG the machine). Forks from
// CPU 0 fill the other cluster's idle CPUs only as long as it has more
// idle CPUs (find_idlest_group()'s has-spare rule, no NUMA allowance), and
// affinity is kept: a child allowed only CPUs 6 and 7 gets one of them.
func TestForkBalanceSingleNode(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	var got []int
	for range 7 {
		cpu := s.ForkCPU(0, nil)
		got = append(got, cpu)
		spawn(t, s, TaskSpec{Comm: "child", CPU: cpu, Prog: Hog()})
	}
	seen := map[int]bool{0: true}
	for _, c := range got {
		if seen[c] {
			t.Fatalf("forks %v: CPU %d twice while others are idle", got, c)
		}
		seen[c] = true
	}
	if c := s.ForkCPU(0, []int{6, 7}); c != 6 && c != 7 {
		t.Errorf("a child allowed CPUs 6-7 forked onto %d", c)
	}
	t.Logf("forks from CPU 0: %v", got)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ForkCPU reads the setup's view of the machine, so a call once the run
// has started is a bug in the caller, and says so.
func TestForkCPUAfterRunPanics(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
	s.Run(ms)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "setup only") {
			t.Errorf("ForkCPU after Run: recovered %v, want a panic naming the setup-only rule", r)
		}
	}()
	s.ForkCPU(0, nil)
}
