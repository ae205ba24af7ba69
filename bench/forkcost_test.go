package bench

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestForkedChildCost: a tool's child processes, forked just before its
// timed window, pay their copy-on-write faults (mm/memory.c do_wp_page()
// -> wp_page_copy(), v6.6) once, at their first action, and their
// exit_mmap() (kernel/exit.c do_exit() -> exit_mm() -> mmput() ->
// mm/mmap.c exit_mmap()) once, at exit, and the tool's clock stops only
// after the last exit (its wait4() reaps them); threads of the tool share
// its mm and pay neither. hikey-8 has no SMT, so every charge is the
// preset's cost exactly.
func TestForkedChildCost(t *testing.T) {
	m := machine(t, "hikey-8")
	fault, exit := m.Cost(hwmodel.OpPageFault), m.Cost(hwmodel.OpExitMMAP)
	if fault <= 0 || exit <= 0 {
		t.Fatalf("hikey-8: page_fault %d ns, exit_mmap %d ns: want both set", fault, exit)
	}
	for _, c := range []struct {
		tool   string
		faults int64 // per child, forkFaults
		exits  int64 // exit_mmap units per child, exitOps
	}{{"hackbench", 15, 1}, {"messaging", 125, 3}} {
		thr, thrArg := "-T", "-T"
		if c.tool == "messaging" {
			thrArg = "-t"
		}
		args := []string{"-g", "1", "-l", "2"}
		proc, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, c.tool, args...)
		threads, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, c.tool, append(args, thrArg)...)
		const children = 40 // -g 1: 20 senders and 20 receivers
		if got, want := proc.Sim.SymbolNS("handle_mm_fault"), children*c.faults*fault; got != want {
			t.Errorf("%s processes: handle_mm_fault %d ns, want %d (%d children x %d faults x %d ns)", c.tool, got, want, children, c.faults, fault)
		}
		if got, want := proc.Sim.SymbolNS("exit_mmap"), children*c.exits*exit; got != want {
			t.Errorf("%s processes: exit_mmap %d ns, want %d (%d children x %d x %d ns)", c.tool, got, want, children, c.exits, exit)
		}
		if f, e := threads.Sim.SymbolNS("handle_mm_fault"), threads.Sim.SymbolNS("exit_mmap"); f != 0 || e != 0 {
			t.Errorf("%s %s: threads paid %d ns of faults and %d ns of exit_mmap", c.tool, thr, f, e)
		}
		pm, tm := proc.Workload.Metrics(proc.Sim), threads.Workload.Metrics(threads.Sim)
		pt, tt := pm.Values[pm.Primary], tm.Values[tm.Primary]
		// The 8 CPUs share 40 children's fixed costs: at least a fifth
		// of one child's faults and exit per CPU lands in the window.
		if min := float64(children*(c.faults*fault+c.exits*exit)) / 8 / 5 / 1e9; pt-tt < min {
			t.Errorf("%s: processes %.6f s, threads %.6f s: want the processes at least %.6f s slower", c.tool, pt, tt, min)
		}
		// The clock stops at the last exit, after its exit_mmap().
		var last int64
		for _, ch := range proc.Workload.(*msgBench).children {
			last = max(last, ch.ExitedAt())
		}
		if got := int64(pt*1e9 + 0.5); got != last {
			t.Errorf("%s processes: time %d ns, last exit at %d ns", c.tool, got, last)
		}
		t.Logf("%s -g 1 -l 2 on hikey-8: processes %.6f s, threads %.6f s", c.tool, pt, tt)
	}
}
