package contention

import (
	"github.com/rqemu/rqemu/weave"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

func TestWakeListFIFO(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	w := NewWakeList(s, "cpu7", 0)
	waker, owner := s.NewLog(0), s.NewLog(7)
	site := s.Site("__ttwu_queue_wakelist")
	es := make([]*WakeEntry, 5)
	for i := range es {
		es[i] = &WakeEntry{Task: i}
		if empty := w.Push(waker, int64(i), site, es[i]); empty != (i == 0) {
			t.Errorf("push %d: wasEmpty %v", i, empty)
		}
	}
	if !w.Pending(owner, 10, site) || w.Empty(owner, 10, site) {
		t.Error("pending flag not set or list empty after pushes")
	}
	got := w.Drain(owner, 20, s.Site("sched_ttwu_pending"))
	if len(got) != 5 {
		t.Fatalf("drained %d entries", len(got))
	}
	for i, e := range got {
		if e.Task.(int) != i || e.Queued() {
			t.Errorf("drained[%d] = task %v queued %v, want task %d in push order", i, e.Task, e.Queued(), i)
		}
	}
	if w.Pending(owner, 21, site) || !w.Empty(owner, 21, site) || len(w.Drain(owner, 22, site)) != 0 {
		t.Error("list not empty after drain")
	}
	// A drained entry may be pushed again.
	if !w.Push(waker, 30, site, es[2]) {
		t.Error("push to the drained list: not empty")
	}
	if d := w.AppendDrain([]*WakeEntry{es[0]}, owner, 40, site); len(d) != 2 || d[1] != es[2] {
		t.Errorf("AppendDrain = %v", d)
	}
	// The logs: a push writes ttwu_pending then does the llist_add RMW.
	e0 := waker.Entries()[:2]
	if e0[0].Line != w.PendingLine() || e0[0].Op != hwmodel.Write || e0[1].Line != w.ListLine() || e0[1].Op != hwmodel.RMW {
		t.Errorf("push logged %+v", e0)
	}
	s.Weave([]*weave.Log{waker, owner})
}

func TestWakeListDoublePush(t *testing.T) {
	s := weave.NewSpace(machine(t, "spr-2s"))
	w := NewWakeList(s, "cpu1", 0)
	e := &WakeEntry{Task: "p"}
	l := weave.NewLog(0)
	w.Push(l, 0, weave.NoSite, e)
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "already queued") {
			t.Errorf("panic %q", msg)
		}
	}()
	w.Push(l, 1, weave.NoSite, e)
}

// TestWakeListConcurrent: several pushers and one drainer; every pushed
// wakeup is drained exactly once, entries are recycled after each drain,
// and each pusher's entries come out in its push order.
func TestWakeListConcurrent(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	w := NewWakeList(s, "cpu0", 0)
	const pushers = 6
	const entries = 16 // per pusher, recycled
	pushes := 3000
	if testing.Short() {
		pushes = 800
	}
	type task struct{ pusher, seq int }
	// busy[p][i] is set by pusher p when it pushes its entry i and cleared
	// by the drainer once it has read the entry's Task: Drain makes an entry
	// pushable again at once, but its Task belongs to the drainer until it
	// has processed it (in the kernel, the task is not woken again before
	// sched_ttwu_pending() has activated it).
	busy := make([][]atomic.Bool, pushers)
	for p := range busy {
		busy[p] = make([]atomic.Bool, entries)
	}
	var done atomic.Int32
	counts := make([][]int, pushers) // drained count per pusher per seq; drainer only
	for p := range counts {
		counts[p] = make([]int, pushes)
	}
	lastSeq := make([]int, pushers)
	for p := range lastSeq {
		lastSeq[p] = -1
	}
	cpus := spreadCPUs(m)[1 : pushers+1]
	logs := make([]*weave.Log, pushers+1)
	runGoroutines(pushers+1, func(g int) {
		if g == pushers { // the drainer, CPU 0
			l := s.NewLog(0)
			logs[g] = l
			var buf []*WakeEntry
			for now := int64(0); ; now += 100 {
				finished := done.Load() == pushers
				buf = w.AppendDrain(buf[:0], l, now, weave.NoSite)
				for _, e := range buf {
					tk := e.Task.(task)
					counts[tk.pusher][tk.seq]++
					if tk.seq <= lastSeq[tk.pusher] {
						t.Errorf("pusher %d: seq %d drained after %d", tk.pusher, tk.seq, lastSeq[tk.pusher])
					}
					lastSeq[tk.pusher] = tk.seq
					busy[tk.pusher][tk.seq%entries].Store(false)
				}
				if finished && len(buf) == 0 {
					return
				}
				if len(buf) == 0 {
					yield()
				}
			}
		}
		l := s.NewLog(cpus[g])
		logs[g] = l
		pool := make([]WakeEntry, entries)
		for k := range pushes {
			e := &pool[k%entries]
			for busy[g][k%entries].Load() { // not processed yet: wait for the drainer
				yield()
			}
			busy[g][k%entries].Store(true)
			e.Task = task{g, k}
			w.Push(l, int64(k)*50, weave.NoSite, e)
		}
		done.Add(1)
	})
	for p := range counts {
		for k, n := range counts[p] {
			if n != 1 {
				t.Fatalf("pusher %d wakeup %d drained %d times", p, k, n)
			}
		}
	}
	res := s.Weave(logs)
	if res.Accesses == 0 || s.Stats().Lines[w.ListLine()].Ops[hwmodel.RMW] < int64(pushers*pushes) {
		t.Errorf("weave saw %d accesses", res.Accesses)
	}
}

func yield() { runtime.Gosched() }
