package emu

import (
	"slices"
	"testing"
)

// countRun has a writer on CPU 0 add one to a shared count every 300 ns
// and a reader on CPU 1 read it every 200 ns, for 50 µs; a third task on
// CPU 2 waits on its semaphore, which a barrier hook signals (as the
// reader) once the published count reaches 40. It returns what the
// reader saw, whether the writer always saw its own adds, the count, and
// when the waiter was woken.
func countRun(t *testing.T, driver string) (seen []int64, ownOK bool, final int64, wokenAt int64) {
	t.Helper()
	s, err := New(Config{Machine: machine(t, "spr-2s"), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Check: true, Driver: driver})
	if err != nil {
		t.Fatal(err)
	}
	c := s.NewSharedCount("test")
	ownOK = true
	var adds int64
	mustTask(t, s, TaskSpec{Comm: "writer", CPU: 0, Prog: ProgramFunc(func(tk *Task) Action {
		c.Add(tk, 1)
		adds++
		if c.Read(tk) < adds { // the published value can only lag its own adds
			ownOK = false
		}
		return Run(300)
	})})
	reader := mustTask(t, s, TaskSpec{Comm: "reader", CPU: 1, Prog: ProgramFunc(func(tk *Task) Action {
		seen = append(seen, c.Read(tk))
		return Run(200)
	})})
	sem := NewSem("waiter", 0)
	woken := false
	mustTask(t, s, TaskSpec{Comm: "waiter", CPU: 2, Sems: []*Sem{sem}, Prog: ProgramFunc(func(tk *Task) Action {
		if woken {
			if wokenAt == 0 {
				wokenAt = tk.Now()
			}
			return Sleep(1_000_000)
		}
		woken = true
		return Wait(sem)
	})})
	signalled := false
	s.OnBarrier(func(cpus []int) {
		if !slices.IsSorted(cpus) {
			t.Errorf("barrier hook: CPUs %v not in order", cpus)
		}
		if !signalled && c.Value() >= 40 {
			signalled = true
			s.SignalAtBarrier(reader, sem, true)
		}
	})
	s.RunUntil(50_000, func() bool { return false })
	return seen, ownOK, c.Value(), wokenAt
}

// A shared count follows the view pattern: its writer sees its own adds
// at once, another CPU sees them only as published at barriers (never
// more than the writer has added, never going back), the barrier's value
// is exact, and a barrier hook's signal wakes a sleeper. Both drivers
// give the same reads.
func TestSharedCountView(t *testing.T) {
	seen, ownOK, final, wokenAt := countRun(t, "serial")
	if !ownOK {
		t.Error("the writer read less than its own adds")
	}
	if final < 100 {
		t.Fatalf("count %d after 50 µs of adds every 300 ns", final)
	}
	lagged := false
	for i, v := range seen {
		if i > 0 && v < seen[i-1] {
			t.Fatalf("read %d: %d after %d: the count went back", i, v, seen[i-1])
		}
		if v > final {
			t.Fatalf("read %d: %d, more than the final %d", i, v, final)
		}
		// The reader reads every 200 ns, the writer adds every 300: a
		// reader seeing every add at once would never read the same
		// value three times in a row.
		if i >= 2 && v == seen[i-1] && v == seen[i-2] {
			lagged = true
		}
	}
	if !lagged {
		t.Error("the reader never saw the count stand still: it sees the writer's adds within the epoch")
	}
	if wokenAt == 0 {
		t.Error("the waiter was not woken by the barrier hook's signal")
	}
	par, _, pfinal, pwoken := countRun(t, "parallel")
	if !slices.Equal(seen, par) || final != pfinal || wokenAt != pwoken {
		t.Errorf("drivers differ: serial %d reads, final %d, woken at %d; parallel %d reads, final %d, woken at %d",
			len(seen), final, wokenAt, len(par), pfinal, pwoken)
	}
}

// The barrier-only calls refuse to run outside a barrier hook.
func TestSharedCountOutsideHook(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	c := s.NewSharedCount("x")
	sem := NewSem("x", 0)
	tk := mustTask(t, s, TaskSpec{Comm: "t", CPU: 0, Sems: []*Sem{sem}, Prog: Hog()})
	for name, f := range map[string]func(){
		"AddAtBarrier":    func() { c.AddAtBarrier(s, 1) },
		"SignalAtBarrier": func() { s.SignalAtBarrier(tk, sem, false) },
		"AsleepOn":        func() { s.AsleepOn(tk, sem) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s outside a barrier hook did not panic", name)
				}
			}()
			f()
		}()
	}
}
