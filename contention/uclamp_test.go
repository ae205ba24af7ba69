package contention

import (
	"github.com/rqemu/rqemu/weave"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestUclampLayout: struct uclamp_rq is 48 bytes; rq->uclamp[2] is 96
// bytes, then uclamp_flags; line A holds MIN and MAX's value and bucket 0,
// line B MAX buckets 1-4 and the flags.
func TestUclampLayout(t *testing.T) {
	var u uclampLines
	if got := unsafe.Sizeof(u.rq[0]); got != 48 {
		t.Errorf("sizeof(uclamp_rq) = %d, want 48", got)
	}
	if got := unsafe.Sizeof(u.rq[0].bucket[0]); got != 8 {
		t.Errorf("sizeof(uclamp_bucket) = %d, want 8", got)
	}
	if unsafe.Offsetof(u.rq[0].bucket) != 8 || unsafe.Offsetof(u.rq) != 0 || unsafe.Sizeof(u.rq) != 96 || unsafe.Offsetof(u.flags) != 96 {
		t.Errorf("offsets: bucket %d, uclamp %d (size %d), flags %d; want 8, 0 (96), 96",
			unsafe.Offsetof(u.rq[0].bucket), unsafe.Offsetof(u.rq), unsafe.Sizeof(u.rq), unsafe.Offsetof(u.flags))
	}
	for b := range UclampBuckets {
		if uclampBucketLine[UclampMin][b] != 0 {
			t.Errorf("MIN bucket %d on line %d, want A", b, uclampBucketLine[UclampMin][b])
		}
		want := uint8(1)
		if b == 0 {
			want = 0
		}
		if uclampBucketLine[UclampMax][b] != want {
			t.Errorf("MAX bucket %d on line %d, want %d", b, uclampBucketLine[UclampMax][b], want)
		}
	}
	if uclampValueLine != [2]uint8{0, 0} || uclampFlagsLine != 1 {
		t.Errorf("values on lines %v, flags on %d; want A, A and B", uclampValueLine, uclampFlagsLine)
	}
	s := weave.NewSpace(machine(t, "spr-2s"))
	r := NewUclampRQ(s, "rq0.uclamp", 0)
	if p := uintptr(unsafe.Pointer(r.h)); p%hostLinePad != 0 {
		t.Errorf("uclamp hot words at %#x, not %d-aligned: lines A and B are not two host lines", p, hostLinePad)
	}
}

func TestUclampBucketID(t *testing.T) {
	if UclampBucketDelta != 205 {
		t.Fatalf("UCLAMP_BUCKET_DELTA = %d, want 205", UclampBucketDelta)
	}
	for _, tc := range []struct {
		v    uint32
		want int
	}{{0, 0}, {204, 0}, {205, 1}, {409, 1}, {410, 2}, {614, 2}, {615, 3}, {819, 3}, {820, 4}, {1023, 4}, {1024, 4}} {
		if got := BucketID(tc.v); got != tc.want {
			t.Errorf("BucketID(%d) = %d, want %d", tc.v, got, tc.want)
		}
	}
	b := mkBucket(1024, 1<<52+3)
	if b.value() != 1024 || b.tasks() != 1<<52+3 {
		t.Errorf("bucket packing: value %d tasks %d", b.value(), b.tasks())
	}
}

// TestUclampSemantics walks uclamp_rq_inc_id / uclamp_rq_dec_id through
// the cases that matter: local max aggregation, the 4 -> 0 rescan when the
// top bucket empties, UCLAMP_FLAG_IDLE retention and its reset.
func TestUclampSemantics(t *testing.T) {
	type step struct {
		inc       bool
		id        UclampID
		v         uint32
		wantValue uint32 // rq->uclamp[id].value after the step
		wantFlags uint32
		bucket    int    // a bucket to check, -1 for none
		tasks     uint64 // its task count
		bval      uint32 // and its value
	}
	const idle = UclampFlagIdle
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"max rescan", []step{
			{true, UclampMax, 1024, 1024, 0, 4, 1, 1024},
			{true, UclampMax, 300, 1024, 0, 1, 1, 300},
			{false, UclampMax, 1024, 300, 0, 4, 0, 1024},  // bucket 4 empties: rescan finds bucket 1
			{false, UclampMax, 300, 300, idle, 1, 0, 300}, // none left: keep the task's value, idle
		}},
		{"idle reset on next inc", []step{
			{true, UclampMax, 800, 800, 0, 3, 1, 800},
			{false, UclampMax, 800, 800, idle, -1, 0, 0},
			{true, UclampMin, 100, 100, idle, 0, 1, 100}, // MIN first: flag still set
			{true, UclampMax, 500, 500, 0, 2, 1, 500},    // reset to 500 though 500 < 800, then cleared
		}},
		{"local max aggregation", []step{
			{true, UclampMax, 900, 900, 0, 4, 1, 900},
			{true, UclampMax, 1000, 1000, 0, 4, 2, 1000},
			{true, UclampMax, 850, 1000, 0, 4, 3, 1000},
			{false, UclampMax, 1000, 1000, 0, 4, 2, 1000}, // tasks remain: overboost accepted
			{false, UclampMax, 850, 1000, 0, 4, 1, 1000},
			{false, UclampMax, 900, 900, idle, 4, 0, 1000}, // empty, 1000 >= 1000: no bucket left
		}},
		{"min returns to 0", []step{
			{true, UclampMin, 300, 300, 0, 1, 1, 300},
			{true, UclampMin, 100, 300, 0, 0, 1, 100},
			{false, UclampMin, 300, 100, 0, 1, 0, 300},
			{false, UclampMin, 100, 0, 0, 0, 0, 100}, // no flag for MIN
		}},
		{"lower bucket empties: no rescan", []step{
			{true, UclampMax, 1024, 1024, 0, -1, 0, 0},
			{true, UclampMax, 300, 1024, 0, 1, 1, 300},
			{false, UclampMax, 300, 1024, 0, 1, 0, 300},
		}},
		{"first task resets a stale bucket value", []step{
			{true, UclampMax, 400, 400, 0, 1, 1, 400},
			{false, UclampMax, 400, 400, idle, 1, 0, 400},
			{true, UclampMax, 250, 250, 0, 1, 1, 250},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := weave.NewSpace(machine(t, "spr-2s"))
			u := NewUclampRQ(s, "rq0.uclamp", 0)
			l := weave.NewLog(0)
			for i, st := range tc.steps {
				if st.inc {
					u.Inc(l, int64(i), weave.NoSite, st.id, st.v)
				} else {
					u.Dec(l, int64(i), weave.NoSite, st.id, st.v)
				}
				if got := u.Value(st.id); got != st.wantValue {
					t.Errorf("step %d: value %d, want %d", i, got, st.wantValue)
				}
				if got := u.Flags(); got != st.wantFlags {
					t.Errorf("step %d: flags %d, want %d", i, got, st.wantFlags)
				}
				if st.bucket >= 0 && (u.Tasks(st.id, st.bucket) != st.tasks || u.BucketValue(st.id, st.bucket) != st.bval) {
					t.Errorf("step %d: bucket %d has %d tasks value %d, want %d value %d", i, st.bucket,
						u.Tasks(st.id, st.bucket), u.BucketValue(st.id, st.bucket), st.tasks, st.bval)
				}
			}
		})
	}
}

// TestUclampLinesTouched: a default task (min 0 -> MIN bucket 0 on line A,
// max 1024 -> MAX bucket 4 on line B) reads then writes both lines on
// enqueue and on dequeue (the load of bucket->tasks++ is logged: under a
// store buffer it is what stalls).
func TestUclampLinesTouched(t *testing.T) {
	s := weave.NewSpace(machine(t, "spr-2s"))
	u := NewUclampRQ(s, "rq0.uclamp", 0)
	a, b := u.Lines()[0], u.Lines()[1]
	l := weave.NewLog(0)
	e := func(t int64, line weave.LineID, op hwmodel.Op) weave.Entry {
		return weave.Entry{T: t, Line: line, Op: op, Site: weave.NoSite}
	}
	check := func(what string, want ...weave.Entry) {
		t.Helper()
		if got := l.Entries(); !slices.Equal(got, want) {
			t.Errorf("%s logged %+v, want %+v", what, got, want)
		}
		l.Reset()
	}
	u.IncTask(l, 0, weave.NoSite, 0, SchedCapacityScale)
	check("IncTask", e(0, a, hwmodel.Read), e(0, a, hwmodel.Write), e(0, b, hwmodel.Read), e(0, b, hwmodel.Write))
	u.DecTask(l, 1, weave.NoSite, 0, SchedCapacityScale)
	check("DecTask", e(1, a, hwmodel.Read), e(1, a, hwmodel.Write), e(1, b, hwmodel.Read), e(1, b, hwmodel.Write))
	u.LogIncTask(l, 1, weave.NoSite, 0, SchedCapacityScale)
	check("LogIncTask", e(1, a, hwmodel.Read), e(1, a, hwmodel.Write), e(1, b, hwmodel.Read), e(1, b, hwmodel.Write))
	// Per id: MIN's bucket 0 is on A, and the idle-flag test reads B.
	u.Inc(l, 2, weave.NoSite, UclampMin, 0)
	want := []weave.Entry{e(2, a, hwmodel.Read), e(2, a, hwmodel.Write), e(2, b, hwmodel.Read)}
	if got := l.Entries(); !slices.Equal(got, want) {
		t.Errorf("Inc(MIN, 0) logged %+v, want %+v", got, want)
	}
	if got := u.Get(l, 3, weave.NoSite, UclampMin); got != 0 || l.Entries()[3].Line != a {
		t.Errorf("Get = %d, logged %+v", got, l.Entries()[3])
	}
}

func TestUclampPanics(t *testing.T) {
	s := weave.NewSpace(machine(t, "spr-2s"))
	u := NewUclampRQ(s, "rq0.uclamp", 0)
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { u.Dec(weave.NewLog(0), 0, weave.NoSite, UclampMax, 1024) }, "with no task"},
		{func() { u.Inc(weave.NewLog(0), 0, weave.NoSite, UclampMax, 1025) }, "1025 > 1024"},
		{func() { u.Inc(weave.NewLog(0), 0, weave.NoSite, 2, 5) }, "uclamp id 2"},
	} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %q, want %q", msg, tc.want)
				}
			}()
			tc.f()
		}()
	}
}

// TestUclampConcurrent: CPUs enqueueing and dequeueing tasks on one rq
// (remote direct wakeups) under its SpinLock leave every bucket empty after
// balanced incs and decs.
func TestUclampConcurrent(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	lk := NewSpinLock(s, "rq0.lock", 0)
	u := NewUclampRQ(s, "rq0.uclamp", 0)
	enq, deq := s.Site("enqueue_task"), s.Site("dequeue_task")
	const goroutines = 6
	iters := 1500
	if testing.Short() {
		iters = 400
	}
	cpus := spreadCPUs(m)[:goroutines]
	logs := make([]*weave.Log, goroutines)
	runGoroutines(goroutines, func(g int) {
		l := s.NewLog(cpus[g])
		logs[g] = l
		rng := rand.New(rand.NewPCG(uint64(g), 7))
		type clamps struct{ lo, hi uint32 }
		var queued []clamps
		now := int64(0)
		for k := range iters {
			now += 100
			lk.Lock(l, now, enq)
			if len(queued) > 0 && (rng.IntN(2) == 0 || k == iters-1) {
				c := queued[len(queued)-1]
				queued = queued[:len(queued)-1]
				u.DecTask(l, now+1, deq, c.lo, c.hi)
			} else {
				c := clamps{uint32(rng.IntN(400)), uint32(600 + rng.IntN(425))}
				queued = append(queued, c)
				u.IncTask(l, now+1, enq, c.lo, c.hi)
			}
			lk.Unlock(l, now+2, enq)
		}
		for len(queued) > 0 {
			now += 100
			c := queued[len(queued)-1]
			queued = queued[:len(queued)-1]
			lk.Lock(l, now, deq)
			u.DecTask(l, now+1, deq, c.lo, c.hi)
			lk.Unlock(l, now+2, deq)
		}
	})
	for id := UclampMin; id <= UclampMax; id++ {
		for b := range UclampBuckets {
			if n := u.Tasks(id, b); n != 0 {
				t.Errorf("%s bucket %d has %d tasks after balanced inc/dec", uclampIDName(id), b, n)
			}
		}
	}
	if u.Value(UclampMin) != 0 || u.Flags() != UclampFlagIdle {
		t.Errorf("MIN value %d, flags %d; want 0 and UCLAMP_FLAG_IDLE", u.Value(UclampMin), u.Flags())
	}
	res := s.Weave(logs)
	if st := s.Stats(); st.Lines[u.Lines()[0]].Accesses == 0 || st.Lines[u.Lines()[1]].Accesses == 0 || res.TotalNS <= 0 {
		t.Errorf("weave: line A %d accesses, line B %d, stall %.1f", st.Lines[u.Lines()[0]].Accesses, st.Lines[u.Lines()[1]].Accesses, res.TotalNS)
	}
}
