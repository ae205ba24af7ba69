package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestIdleExitOncePerWakeup: a task asleep on an idle CPU is woken from
// another CPU of its LLC every millisecond (v6.6: TTWU_QUEUE_IDLE puts it
// on the idle CPU's wake list). On x86 the idle CPU polls (intel_idle's
// mwait with TIF_POLLING_NRFLAG: send_call_function_single_ipi()'s
// set_nr_if_polling() replaces the IPI, core.c v6.6), so the monitored
// write wakes it one exit latency later and it pays no second exit: no
// IPI, nothing charged to intel_idle, the drain one idle_exit after the
// wakeup. On arm64 (hikey-8) WFI does not poll: the waker sends the IPI
// and the CPU pays the WFI exit (cpu_do_idle) when it takes it. Before
// stop 48 the x86 CPU paid the exit twice, as the poll's delay and again
// in intel_idle (1 us per wakeup on spr-2s).
func TestIdleExitOncePerWakeup(t *testing.T) {
	for _, tc := range []struct {
		topo, exitSym string
		polls         bool
	}{
		{"spr-2s", "intel_idle", true},
		{"hikey-8", "cpu_do_idle", false},
	} {
		t.Run(tc.topo, func(t *testing.T) {
			m := machine(t, tc.topo)
			s, err := New(Config{Machine: m, Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Check: true, Driver: "serial"})
			if err != nil {
				t.Fatal(err)
			}
			w := mustTask(t, s, TaskSpec{Comm: "wakee", CPU: 1, Prog: Loop(Block(), Run(50_000))})
			mustTask(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(ms), Wake(w))})
			s.Run(10 * ms)
			n := w.Stats.NrWakeups
			if n < 8 {
				t.Fatalf("%d wakeups in 10 ms, want about 9", n)
			}
			if w.Stats.NrMigrations != 0 {
				t.Fatalf("the wakee migrated %d times: the scenario needs it to stay on its idle CPU", w.Stats.NrMigrations)
			}
			exit := s.SymbolNS(tc.exitSym)
			one := int64(m.Cost(hwmodel.OpIdleExit))
			ipis := s.RQ(1).Stats.IPIsReceived
			t.Logf("%d wakeups: %d ns in %s (one exit %d ns), %d IPIs received", n, exit, tc.exitSym, one, ipis)
			if tc.polls {
				if exit != 0 || ipis != 0 {
					t.Errorf("polling idle: %d ns in %s and %d IPIs over %d wakeups, want none (the poll's delay is the exit)", exit, tc.exitSym, ipis, n)
				}
			} else {
				if exit < n*one || exit > (n+1)*one {
					t.Errorf("WFI idle: %d ns in %s over %d wakeups, want one exit (%d ns) each", exit, tc.exitSym, n, one)
				}
				if ipis < n {
					t.Errorf("WFI idle: %d IPIs received over %d wakeups, want one each", ipis, n)
				}
			}
		})
	}
}
