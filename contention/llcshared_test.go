package contention

import (
	"github.com/rqemu/rqemu/weave"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestLLCSharedLayout: struct sched_domain_shared is 16 bytes, one line.
func TestLLCSharedLayout(t *testing.T) {
	var h llcSharedLine
	if unsafe.Sizeof(h) != 16 || unsafe.Offsetof(h.nrBusyCPUs) != 4 || unsafe.Offsetof(h.hasIdleCores) != 8 || unsafe.Offsetof(h.nrIdleScan) != 12 {
		t.Errorf("sched_domain_shared: size %d, nr_busy_cpus %d, has_idle_cores %d, nr_idle_scan %d; want 16, 4, 8, 12",
			unsafe.Sizeof(h), unsafe.Offsetof(h.nrBusyCPUs), unsafe.Offsetof(h.hasIdleCores), unsafe.Offsetof(h.nrIdleScan))
	}
}

func TestLLCShared(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	c := NewLLCShared(s, "llc0.shared", 0)
	sis := s.Site("select_idle_cpu")
	idle, waker := s.NewLog(1), s.NewLog(2)
	c.SetHasIdleCores(idle, 0, s.Site("__update_idle_core"), true)
	if !c.HasIdleCores(waker, 1000, sis) {
		t.Error("has_idle_cores not set")
	}
	c.SetHasIdleCores(waker, 1100, sis, false)
	c.SetNrIdleScan(idle, 2000, s.Site("update_idle_cpu_scan"), 12)
	if got := c.NrIdleScan(waker, 3000, sis); got != 12 {
		t.Errorf("nr_idle_scan %d", got)
	}
	if c.IncBusy(idle, 4000, weave.NoSite) != 1 || c.IncBusy(waker, 4000, weave.NoSite) != 2 || c.DecBusy(idle, 5000, weave.NoSite) != 1 || c.NrBusy(waker, 6000, weave.NoSite) != 1 {
		t.Error("nr_busy_cpus arithmetic")
	}
	if h, n, b := c.Values(); h || n != 12 || b != 1 {
		t.Errorf("Values = %v %d %d", h, n, b)
	}
	res := s.Weave([]*weave.Log{idle, waker})
	ls := s.Stats().Lines[c.Line()]
	if ls.Accesses != 9 || ls.Ops[hwmodel.RMW] != 3 || ls.TotalTransfers() == 0 || res.SiteNS(2, sis) <= 0 {
		t.Errorf("line stats %+v, waker paid %.1f", ls, res.SiteNS(2, sis))
	}
}

// TestLLCSharedConcurrent: balanced busy inc/dec from many CPUs of the LLC
// leaves nr_busy_cpus at 0.
func TestLLCSharedConcurrent(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	c := NewLLCShared(s, "llc0.shared", 0)
	const goroutines = 8
	iters := 2000
	if testing.Short() {
		iters = 500
	}
	logs := make([]*weave.Log, goroutines)
	runGoroutines(goroutines, func(g int) {
		l := s.NewLog(g)
		logs[g] = l
		for k := range int64(iters) {
			c.IncBusy(l, 100*k, weave.NoSite)
			c.HasIdleCores(l, 100*k+10, weave.NoSite)
			c.SetHasIdleCores(l, 100*k+20, weave.NoSite, k%2 == 0)
			c.DecBusy(l, 100*k+50, weave.NoSite)
		}
	})
	if _, _, b := c.Values(); b != 0 {
		t.Errorf("nr_busy_cpus %d after balanced inc/dec", b)
	}
	s.Weave(logs)
}
