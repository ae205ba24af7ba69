package contention

import (
	"github.com/rqemu/rqemu/weave"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestAlignedHot: hot words start on a 128-byte boundary with 128 bytes of
// untouched memory on each side.
func TestAlignedHot(t *testing.T) {
	for range 20 {
		p := alignedHot[uclampLines]()
		if uintptr(unsafe.Pointer(p))%hostLinePad != 0 {
			t.Fatalf("alignedHot at %p, not %d-aligned", p, hostLinePad)
		}
		c := alignedHot[atomic.Int64]()
		if uintptr(unsafe.Pointer(c))%hostLinePad != 0 {
			t.Fatalf("alignedHot at %p, not %d-aligned", c, hostLinePad)
		}
	}
	// The guard: the buffer holds at least hostLinePad bytes before and
	// after the value (checked on the arithmetic the allocator uses).
	size := int(unsafe.Sizeof(uclampLines{}))
	words := (3*hostLinePad + size + 7) / 8
	for slack := 0; slack < hostLinePad; slack += 8 {
		start := hostLinePad + slack
		if start+size+hostLinePad > words*8 {
			t.Errorf("slack %d: no room for the trailing guard", slack)
		}
	}
	var pw padded[wakeHead]
	if off := unsafe.Offsetof(pw.v); off != hostLinePad || unsafe.Sizeof(pw)-off-unsafe.Sizeof(pw.v) != hostLinePad {
		t.Errorf("padded: value at %d, %d bytes after it", off, unsafe.Sizeof(pw)-off-unsafe.Sizeof(pw.v))
	}
}

func TestHasPointers(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{rqLine0{}, false}, {uclampLines{}, false}, {llcSharedLine{}, false}, {removedLine{}, false},
		{atomic.Int64{}, false}, {wakeHead{}, true}, {struct{ s string }{}, true}, {[2]*int{}, true},
	} {
		if got := hasPointers(reflect.TypeOf(tc.v)); got != tc.want {
			t.Errorf("hasPointers(%T) = %v, want %v", tc.v, got, tc.want)
		}
	}
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "holds pointers") {
			t.Errorf("panic %q", msg)
		}
	}()
	alignedHot[wakeHead]()
}

// TestPack: packed objects are adjacent in host memory and share modeled
// lines, and they still work.
func TestPack(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	p := NewPack(s, "tg.false", 0, 4)
	cs := []*Counter{p.Counter("a"), p.Counter("b"), p.Counter("c")}
	for i := 1; i < len(cs); i++ {
		if d := uintptr(unsafe.Pointer(cs[i].v)) - uintptr(unsafe.Pointer(cs[i-1].v)); d != 8 {
			t.Errorf("packed counters %d bytes apart, want 8", d)
		}
		if cs[i].Line() != cs[0].Line() {
			t.Errorf("packed counters on different modeled lines")
		}
	}
	w1, w2 := p.WakeList("cpu1"), p.WakeList("cpu2")
	if w1.ListLine() != w2.ListLine() || w1.PendingLine() != w2.PendingLine() || w1.ListLine() == w1.PendingLine() {
		t.Errorf("packed wake lists: lines %d/%d and %d/%d", w1.ListLine(), w1.PendingLine(), w2.ListLine(), w2.PendingLine())
	}
	if w1.ListLine() != cs[0].Line() || len(p.Lines()) != 2 {
		t.Errorf("pack lines %v", p.Lines())
	}
	l := weave.NewLog(0)
	cs[1].Add(l, 0, weave.NoSite, 5)
	if cs[0].Value() != 0 || cs[1].Value() != 5 {
		t.Error("packed counters alias")
	}
	w1.Push(l, 1, weave.NoSite, &WakeEntry{})
	if len(w2.Drain(l, 2, weave.NoSite)) != 0 || len(w1.Drain(l, 3, weave.NoSite)) != 1 {
		t.Error("packed wake lists alias")
	}
	lk, r := p.SpinLock("x"), p.Removed("x")
	p.UclampRQ("x")
	p.LLCShared("x")
	l.Reset()
	lk.Lock(l, 10, weave.NoSite)
	lk.Unlock(l, 11, weave.NoSite)
	r.Add(l, 12, weave.NoSite, 1, 1, 1)
	if es := l.Entries(); es[0].Op != hwmodel.RMW || es[1].Op != hwmodel.Write || es[2].Op != hwmodel.RMW || es[7].Op != hwmodel.Write {
		t.Errorf("packed locks logged %+v, want RMW/Write", es)
	}
	s.Weave([]*weave.Log{l})
	p.Counter("d")
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "holds 4 objects") {
			t.Errorf("panic %q", msg)
		}
	}()
	p.Counter("e")
}
