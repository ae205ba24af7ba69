package emu

import (
	"fmt"
	"testing"

	"github.com/rqemu/rqemu/weave"
)

// TestRQLockSpinnerReadsLock: wakers on eight CPUs of one LLC wake, every
// 20 us, one sleeper each on CPU 0, so each try_to_wake_up() takes CPU 0's
// rq lock (v5.15's ttwu_queue(): cpus_share_cache(), no wake list); at the
// same instants, they queue on it. A waiter spins reading the lock word
// (kernel/locking/qspinlock.c v6.6: queued_spin_lock_slowpath()'s pending
// waiter and MCS head read lock->val), so the holder's release
// invalidates its copy and the handover is a read of the released word
// and the waiter's atomic (weave.Replayer.spinnerRead): against the same
// wakers 2 us apart, the lock's line has about two more invalidations per
// more Lock that found it held (429 over 211 here; before spinnerRead 20
// over 124).
func TestRQLockSpinnerReadsLock(t *testing.T) {
	together, apart := rqLockWakers(t, 0), rqLockWakers(t, 2000)
	for _, x := range []struct {
		name string
		l    weave.LineStats
	}{{"together", together}, {"2 us apart", apart}} {
		t.Logf("wakers %s: CPU 0's rq lock line: %d accesses, %d Locks found it held, %d invalidations, %d transfers",
			x.name, x.l.Accesses, x.l.LockWaits, x.l.Invalidations, x.l.TotalTransfers())
	}
	waits := together.LockWaits - apart.LockWaits
	if waits < 100 {
		t.Fatalf("%d Locks found CPU 0's rq lock held with the wakers together, %d with them apart: want the wakers to queue on it", together.LockWaits, apart.LockWaits)
	}
	if inv := together.Invalidations - apart.Invalidations; float64(inv) < 1.5*float64(waits) {
		t.Errorf("%d more invalidations of the lock's line with the wakers together, over %d more contended Locks: want about two each (the release, the waiter's atomic)", inv, waits)
	}
}

// rqLockWakers runs TestRQLockSpinnerReadsLock's load, waker i starting
// i*stagger ns late, and returns CPU 0's rq lock line.
func rqLockWakers(t *testing.T, stagger int64) weave.LineStats {
	s := newSim(t, "spr-2s", "v5.15-cfs")
	const wakers, rounds = 8, 100
	for i := 1; i <= wakers; i++ {
		sem := NewSem(fmt.Sprintf("s%d", i), 0)
		n := 0
		mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Sems: []*Sem{sem}, Prog: ProgramFunc(func(*Task) Action {
			n++
			switch {
			case n > 2*rounds:
				return Exit()
			case n%2 == 1:
				return Wait(sem)
			}
			return Run(50)
		})})
		k := 0
		mustTask(t, s, TaskSpec{Comm: "waker", CPU: i, Prog: ProgramFunc(func(*Task) Action {
			k++
			switch {
			case k == 1:
				return Run(1000 + int64(i)*stagger)
			case k > 2*rounds+1:
				return Exit()
			case k%2 == 0:
				return Run(20_000) // every waker signals at the same instants
			}
			return Signal(sem)
		})})
	}
	if !s.RunUntil(50*ms, func() bool { return s.Live() == 0 }) {
		t.Fatalf("stagger %d: %d tasks live after 50 ms", stagger, s.Live())
	}
	return s.space.Stats().Lines[s.cpus[0].lock.Line()]
}
