package contention

import (
	"github.com/rqemu/rqemu/weave"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestRemovedLayout: cfs_rq->removed is 32 bytes: lock, nr, three sums.
func TestRemovedLayout(t *testing.T) {
	var h removedLine
	if unsafe.Sizeof(h) != 32 || unsafe.Offsetof(h.nr) != 4 || unsafe.Offsetof(h.load) != 8 || unsafe.Offsetof(h.runnable) != 24 {
		t.Errorf("removed: size %d, nr %d, load_avg %d, runnable_avg %d; want 32, 4, 8, 24",
			unsafe.Sizeof(h), unsafe.Offsetof(h.nr), unsafe.Offsetof(h.load), unsafe.Offsetof(h.runnable))
	}
}

func TestRemovedAddTake(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	r := NewRemoved(s, "cpu3.cfs.removed", 0)
	waker, owner := s.NewLog(60), s.NewLog(3)
	rm := s.Site("remove_entity_load_avg")
	r.Add(waker, 0, rm, 10, 20, 30)
	r.Add(waker, 100, rm, 1, 2, 3)
	if r.Pending(owner, 200, weave.NoSite) != 2 {
		t.Error("Pending != 2")
	}
	nr, load, util, run := r.Take(owner, 300, s.Site("update_cfs_rq_load_avg"))
	if nr != 2 || load != 11 || util != 22 || run != 33 {
		t.Errorf("Take = %d %d %d %d", nr, load, util, run)
	}
	if nr, load, _, _ := r.Values(); nr != 0 || load != 0 {
		t.Errorf("not empty after Take: %d %d", nr, load)
	}
	want := []hwmodel.Op{hwmodel.Lock, hwmodel.Write, hwmodel.Write, hwmodel.Write, hwmodel.Write, hwmodel.Unlock}
	for i, e := range waker.Entries()[:6] {
		if e.Op != want[i] || e.Line != r.Line() {
			t.Errorf("Add entry %d: %+v, want %v", i, e, want[i])
		}
	}
	res := s.Weave([]*weave.Log{waker, owner})
	// The owner (socket 0) takes the line back from the waker (socket 1).
	if res.ExactNS[3] < m.Lat.Transfer[hwmodel.ClassRemote] {
		t.Errorf("owner stall %.1f, want at least a cross-socket transfer", res.ExactNS[3])
	}
}

// TestRemovedConcurrent: remote CPUs adding while the owner takes: what
// was taken plus what is left equals what was added.
func TestRemovedConcurrent(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	r := NewRemoved(s, "cpu0.cfs.removed", 0)
	const adders = 6
	iters := 2000
	if testing.Short() {
		iters = 500
	}
	var stop atomic.Bool
	var took [4]uint64
	var added [adders][4]uint64
	logs := make([]*weave.Log, adders+1)
	cpus := spreadCPUs(m)[1 : adders+1]
	takerDone := make(chan struct{})
	go func() { // the owner
		defer close(takerDone)
		l := s.NewLog(0)
		logs[adders] = l
		for now := int64(0); !stop.Load(); now += 500 {
			nr, load, util, run := r.Take(l, now, weave.NoSite)
			took[0] += nr
			took[1] += load
			took[2] += util
			took[3] += run
			yield()
		}
	}()
	runGoroutines(adders, func(g int) {
		l := s.NewLog(cpus[g])
		logs[g] = l
		for k := range iters {
			load, util, run := uint64(k%7+1), uint64(g+1), uint64(k%3)
			r.Add(l, int64(k)*100, weave.NoSite, load, util, run)
			added[g][0]++
			added[g][1] += load
			added[g][2] += util
			added[g][3] += run
		}
	})
	stop.Store(true)
	<-takerDone
	nr, load, util, run := r.Values()
	left := [4]uint64{nr, load, util, run}
	for i := range 4 {
		var sum uint64
		for g := range adders {
			sum += added[g][i]
		}
		if took[i]+left[i] != sum {
			t.Errorf("field %d: took %d + left %d != added %d", i, took[i], left[i], sum)
		}
	}
	s.Weave(logs)
}
