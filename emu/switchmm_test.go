package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestSwitchMM: core.c context_switch() (v6.6) switches mm only between
// processes: two tasks of different mms ping-ponging on one CPU pay
// switch_mm on every switch; two threads of one mm, and a switch to idle
// and back (lazy TLB), do not.
func TestSwitchMM(t *testing.T) {
	run := func(mmA, mmB int) (int64, int64) {
		s := newSim(t, "spr-2s", "v6.6-eevdf")
		var ping, pong *Task
		step := 0
		pong = mustTask(t, s, TaskSpec{Comm: "pong", CPU: 0, MM: mmB, Prog: ProgramFunc(func(*Task) Action {
			step++
			switch step % 3 {
			case 1:
				return Block()
			case 2:
				return Run(1000)
			}
			return Wake(ping)
		})})
		ping = mustTask(t, s, TaskSpec{Comm: "ping", CPU: 0, MM: mmA, Prog: Loop(Run(1000), Wake(pong), Block())})
		s.Run(ms)
		return s.SymbolNS("switch_mm_irqs_off"), s.RQ(0).Stats.NrSwitches
	}
	procNS, procSw := run(1, 2)
	thrNS, _ := run(1, 1)
	cost := machine(t, "spr-2s").Cost(hwmodel.OpSwitchMM)
	t.Logf("processes: %d switches, %d ns in switch_mm (%d ns each); threads: %d ns", procSw, procNS, cost, thrNS)
	if thrNS != 0 {
		t.Errorf("threads of one mm paid %d ns of switch_mm", thrNS)
	}
	if procSw < 100 || procNS < (procSw-4)*cost {
		t.Errorf("processes: %d switches paid %d ns of switch_mm, want about %d each", procSw, procNS, cost)
	}
}
