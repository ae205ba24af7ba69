package bench

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
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

// TestForkedChildExitWork: where the host's perf children's exit path is
// measured (hwmodel.Machine.ExitPathNS), each child process runs it, less
// the faults the model prices itself, in user mode (its tool's symbols)
// before its exit, and the run ends only after it; threads never run it,
// and an uncalibrated machine (no exit path) charges nothing.
func TestForkedChildExitWork(t *testing.T) {
	const children = 40 // -g 1
	args := []string{"-g", "1", "-l", "2"}
	user := func(r *Result) int64 { return r.Sim.SymbolNS("sender") + r.Sim.SymbolNS("receiver") }
	base := machine(t, "hikey-8")
	proc0, _ := runWorkload(t, base, mustBuild(t, base, "messaging", args...))
	thr0, _ := runWorkload(t, base, mustBuild(t, base, "messaging", append(args, "-t")...))

	m := machine(t, "hikey-8")
	const work = 2_000_000 // ns beyond the faults
	m.ExitPathNS = map[string]float64{"perf": float64(work + 125*m.Cost(hwmodel.OpPageFault))}
	proc, _ := runWorkload(t, m, mustBuild(t, m, "messaging", args...))
	thr, _ := runWorkload(t, m, mustBuild(t, m, "messaging", append(args, "-t")...))
	// Within 0.1%: the messages' own user time moves by a few hundred ns
	// with the schedule.
	if got, want := user(proc)-user(proc0), int64(children*work); got < want-want/1000 || got > want+want/1000 {
		t.Errorf("processes: user time +%d ns with the exit path, want +%d (%d children x %d ns)", got, want, children, work)
	}
	if got := user(thr) - user(thr0); got != 0 {
		t.Errorf("threads: user time moved by %d ns with the exit path, want 0", got)
	}
	pm, pm0 := proc.Workload.Metrics(proc.Sim), proc0.Workload.Metrics(proc0.Sim)
	// The 8 CPUs share the 40 exits: at least a fifth of 40 x 2 ms / 8.
	if d, min := pm.Values[pm.Primary]-pm0.Values[pm0.Primary], children*work/8/5/1e9; d < min {
		t.Errorf("processes took %.6f s more with the exit path, want at least %.6f", d, min)
	}
}

func mustBuild(t *testing.T, m *hwmodel.Machine, name string, args ...string) Workload {
	t.Helper()
	w, err := build(m, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestHostChildCosts: on the 2-vCPU VM's recorded host preset with a
// calibration that measured a 15 us copy-on-write fault and a 5 ms perf
// exit path, each perf bench sched messaging child process pays 125
// faults at 15 us (handle_mm_fault) and the exit path less those faults
// in user mode, and the 2 CPUs share the 40 children's fixed costs: the
// processes' run exceeds the threads' by at least 40 x (faults + exit
// path) / 2, less a tenth for the overlap with the messages.
func TestHostChildCosts(t *testing.T) {
	spec, err := hwmodel.LoadSpecFile(filepath.Join("..", "hwmodel", "testdata", "host", "kvm-2vcpu-genoa.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	host, err := hwmodel.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	cal, err := hwmodel.LoadCalibFile(filepath.Join("..", "hwmodel", "testdata", "calib", "kvm-2vcpu-genoa.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const cowUS, pathUS, faults, children = 15.0, 5000.0, 125, 40
	cal.CoWFaultUS, cal.ExitPathUS = cowUS, map[string]float64{"perf": pathUS}
	m, err := cal.Apply(host, weave.PredictHammer)
	if err != nil {
		t.Fatal(err)
	}
	fault := m.Cost(hwmodel.OpPageFault)
	if math.Abs(float64(fault)-1000*cowUS) > 1 {
		t.Fatalf("page_fault %d ns, want the measured %.0f", fault, 1000*cowUS)
	}
	args := []string{"-g", "1", "-l", "1"}
	proc, _ := runWorkload(t, m, mustBuild(t, m, "messaging", args...))
	thr, _ := runWorkload(t, m, mustBuild(t, m, "messaging", append(args, "-t")...))
	if got, want := proc.Sim.SymbolNS("handle_mm_fault"), int64(children*faults)*fault; got != want {
		t.Errorf("handle_mm_fault %d ns, want %d (%d children x %d faults x %d ns)", got, want, children, faults, fault)
	}
	pm, tm := proc.Workload.Metrics(proc.Sim), thr.Workload.Metrics(thr.Sim)
	pt, tt := pm.Values[pm.Primary], tm.Values[tm.Primary]
	if min := 0.9 * children * pathUS / 1e6 / 2; pt-tt < min {
		t.Errorf("processes %.4f s, threads %.4f s: want the processes at least %.4f s slower (40 exit paths of %.0f us on 2 CPUs)", pt, tt, min, pathUS)
	}
	t.Logf("messaging -g 1 -l 1 on the 2-vCPU host: processes %.4f s, threads %.4f s", pt, tt)

	// perf's default 10 groups at -l 1: 400 exit paths on 2 CPUs take
	// about 1 s, past the bound of its 4,000 messages alone (1.2 s): the
	// safety bound counts the children's fixed costs (runWorkload fails
	// an incomplete run).
	ten, _ := runWorkload(t, m, mustBuild(t, m, "messaging", "-l", "1"))
	tm10 := ten.Workload.Metrics(ten.Sim)
	if got, min := tm10.Values[tm10.Primary], 0.9*400*pathUS/1e6/2; got < min {
		t.Errorf("messaging -l 1: %.4f s, want at least %.4f (400 exit paths of %.0f us on 2 CPUs)", got, min, pathUS)
	}
}
