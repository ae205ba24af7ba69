package emu

import (
	"strings"
	"testing"
)

// TestWorkerPanic: a panic while a CPU handles its events, on a parallel
// worker or on the serial driver, reaches RunUntil's caller as a
// *CPUPanic naming the CPU and its task (issue 14, item 12).
func TestWorkerPanic(t *testing.T) {
	for _, driver := range []string{"parallel", "serial"} {
		s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Driver: driver, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		spawn(t, s, TaskSpec{Comm: "calm", CPU: 0, CPUs: []int{0}, Prog: Hog()})
		n := 0
		spawn(t, s, TaskSpec{Comm: "bomb", CPU: 5, CPUs: []int{5}, Prog: ProgramFunc(func(*Task) Action {
			if n++; n > 3 {
				panic("boom")
			}
			return Run(100_000)
		})})
		func() {
			defer func() {
				p, ok := recover().(*CPUPanic)
				if !ok {
					t.Fatalf("%s: recovered %v, want a *CPUPanic", driver, p)
				}
				if p.CPU != 5 || p.Value != "boom" || !strings.Contains(p.Task, "bomb") || !strings.Contains(p.Error(), "CPU 5") || len(p.Stack) == 0 {
					t.Errorf("%s: %+v", driver, p)
				}
			}()
			s.Run(10 * ms)
			t.Fatalf("%s: no panic", driver)
		}()
	}
}
