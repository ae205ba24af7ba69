package contention

import (
	"github.com/rqemu/rqemu/weave"
	"strings"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestSpinLockLayout: rq->__lock and rq->nr_running share rq line 0, at
// offsets 0 and 4 as in struct rq.
func TestSpinLockLayout(t *testing.T) {
	var h rqLine0
	if unsafe.Offsetof(h.lock) != 0 || unsafe.Offsetof(h.nrRunning) != 4 || unsafe.Sizeof(h) != 8 {
		t.Errorf("rqLine0: lock at %d, nr_running at %d, size %d; want 0, 4, 8",
			unsafe.Offsetof(h.lock), unsafe.Offsetof(h.nrRunning), unsafe.Sizeof(h))
	}
}

// TestSpinLockMutualExclusion: a plain counter incremented under the lock
// by many goroutines loses no increment (and -race sees no race), and the
// weave prices the waiting.
func TestSpinLockMutualExclusion(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	lk := NewSpinLock(s, "rq0.lock", 0)
	site := s.Site("raw_spin_rq_lock")
	const goroutines = 8
	iters := 2000
	if testing.Short() {
		iters = 500
	}
	cpus := spreadCPUs(m)[:goroutines]
	logs := make([]*weave.Log, goroutines)
	plain := 0 // guarded by lk
	runGoroutines(goroutines, func(g int) {
		l := s.NewLog(cpus[g])
		logs[g] = l
		for k := range int64(iters) {
			now := k * 1000
			lk.Lock(l, now, site)
			plain++
			lk.SetNrRunning(l, now+10, site, uint32(plain))
			if h := lk.Holder(); h != cpus[g] {
				t.Errorf("holder %d inside CPU %d's critical section", h, cpus[g])
			}
			lk.Unlock(l, now+20, site)
			lk.NrRunning(l, now+30, site)
		}
	})
	if plain != goroutines*iters || lk.NrRunningValue() != uint32(plain) || lk.Holder() != -1 {
		t.Errorf("counter %d, nr_running %d, holder %d; want %d, %d, -1", plain, lk.NrRunningValue(), lk.Holder(), goroutines*iters, plain)
	}
	res := s.Weave(logs)
	ls := s.Stats().Lines[lk.Line()]
	if ls.Ops[hwmodel.Lock] != int64(goroutines*iters) || ls.LockWaits == 0 || res.TotalNS <= 0 {
		t.Errorf("weave: %d locks, %d lock waits, stall %.1f", ls.Ops[hwmodel.Lock], ls.LockWaits, res.TotalNS)
	}
}

// TestSpinLockWeaveFIFO: a waiter pays for the holder's critical section.
func TestSpinLockWeaveFIFO(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	lk := NewSpinLock(s, "rq0.lock", 0)
	site := s.Site("ttwu")
	a, b := s.NewLog(0), s.NewLog(1)
	warm := s.NewLog(0)
	lk.Lock(warm, 0, site)
	lk.Unlock(warm, 1, site)
	s.Weave([]*weave.Log{warm})
	// Logs are recorded in virtual time, not host order: build them one
	// after the other on this goroutine.
	lk.Lock(a, 1000, site)
	lk.Unlock(a, 2000, site)
	lk.Lock(b, 1100, weave.NoSite) // physically free again; modeled, it waits
	lk.Unlock(b, 1200, weave.NoSite)
	res := s.Weave([]*weave.Log{a, b})
	// b asks at 1100 and spins reading the lock word: a's release at
	// 2000 invalidates its copy, then b reads the word and takes it
	// (weave.Replayer.spinnerRead), three same-LLC transactions.
	if want := 900 + 3*m.Lat.Transfer[hwmodel.ClassLLC]; !nearNS(res.ExactNS[1], want) {
		t.Errorf("waiter stall %.3f, want %.3f", res.ExactNS[1], want)
	}
	if res.ExactNS[0] != 0 {
		t.Errorf("holder stall %.3f, want 0 (it owned the line)", res.ExactNS[0])
	}
}

func TestSpinLockTryLock(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	lk := NewSpinLock(s, "rq0.lock", 0)
	a, b := s.NewLog(0), s.NewLog(1)
	if !lk.TryLock(a, 0, weave.NoSite) {
		t.Fatal("TryLock of a free lock failed")
	}
	if lk.TryLock(b, 1, weave.NoSite) {
		t.Fatal("TryLock of a held lock succeeded")
	}
	lk.Unlock(a, 2, weave.NoSite)
	if got := []hwmodel.Op{a.Entries()[0].Op, b.Entries()[0].Op}; got[0] != hwmodel.Lock || got[1] != hwmodel.RMW {
		t.Errorf("logged %v, want a Lock and a failed RMW", got)
	}
	s.Weave([]*weave.Log{a, b})
}

func TestSpinLockPanics(t *testing.T) {
	m := machine(t, "spr-2s")
	for _, tc := range []struct {
		name string
		f    func(lk *SpinLock, a, b *weave.Log)
		want string
	}{
		{"unlock by another CPU", func(lk *SpinLock, a, b *weave.Log) {
			lk.Lock(a, 0, weave.NoSite)
			defer lk.Unlock(a, 2, weave.NoSite)
			lk.Unlock(b, 1, weave.NoSite)
		}, `SpinLock "rq.lock": CPU 9 unlocks it but CPU 4 holds it`},
		{"unlock of a free lock", func(lk *SpinLock, a, b *weave.Log) { lk.Unlock(b, 1, weave.NoSite) }, "nobody holds it"},
		{"recursive lock", func(lk *SpinLock, a, b *weave.Log) {
			lk.Lock(a, 0, weave.NoSite)
			defer lk.Unlock(a, 2, weave.NoSite)
			lk.Lock(a, 1, weave.NoSite)
		}, "takes it again"},
		{"nr_running without the lock", func(lk *SpinLock, a, b *weave.Log) { lk.SetNrRunning(b, 0, weave.NoSite, 1) }, "without the lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := weave.NewSpace(m)
			lk := NewSpinLock(s, "rq.lock", 0)
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want %q", msg, tc.want)
				}
			}()
			tc.f(lk, weave.NewLog(4), weave.NewLog(9))
		})
	}
}
