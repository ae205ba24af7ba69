package weave

import (
	"github.com/rqemu/rqemu/hwmodel"
	"math"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestReplayAlternating: two CPUs alternating RMWs on one line pay one
// transfer each at the class latency (after the first fill).
func TestReplayAlternating(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	for _, pair := range [][2]int{{0, 1}, {0, 112}, {0, 56}} {
		a, b := pair[0], pair[1]
		line := m.NewLine(0)
		m.Access(line, a, hwmodel.RMW) // a holds it
		streams := make([][]Req, m.NumCPUs())
		for i := int64(0); i < 10; i++ {
			streams[b] = append(streams[b], Req{T: 1000 * (2*i + 1), Op: hwmodel.RMW})
			streams[a] = append(streams[a], Req{T: 1000 * (2*i + 2), Op: hwmodel.RMW})
		}
		res := Replay(m, []*hwmodel.Line{line}, streams)
		want := m.Lat.Transfer[m.Class(a, b)]
		for i := 0; i < 10; i++ {
			if !near(res.Stall[a][i], want) || !near(res.Stall[b][i], want) {
				t.Fatalf("%d-%d request %d: stalls %v %v, want %v each", a, b, i, res.Stall[a][i], res.Stall[b][i], want)
			}
		}
		if got := res.Lines[0].Transfers[m.Class(a, b)]; got != 20 {
			t.Errorf("%d-%d: %d transfers, want 20", a, b, got)
		}
	}
}

// TestReplaySerializes: 100 CPUs of one socket doing an RMW at the same
// instant serialize; the k-th served waits for k transfers before it.
func TestReplaySerializes(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	line := m.NewLine(0)
	// 100 CPUs of socket 0: the first threads of cores 0-55 and the
	// second threads of cores 12-55, so no hand-over is between SMT
	// siblings.
	var cpus []int
	for c := 0; c < 56; c++ {
		cpus = append(cpus, c)
	}
	for c := 112 + 12; c < 168; c++ {
		cpus = append(cpus, c)
	}
	m.Access(line, 112, hwmodel.RMW) // CPU 112 (core 0's sibling) holds it, not taking part
	streams := make([][]Req, m.NumCPUs())
	for _, c := range cpus {
		streams[c] = []Req{{T: 5000, Op: hwmodel.RMW}}
	}
	res := Replay(m, []*hwmodel.Line{line}, streams)
	// The k-th served (the home draws the order) waits for the k earlier
	// RMWs (a transfer plus the RMW each), then pays its own transfer.
	wait := 0.0
	prev := 112
	for k, c := range servedOrder(res, cpus) {
		x := m.TransferNS(c, prev, 0)
		want := wait + x
		if !near(res.Stall[c][0], want) {
			t.Fatalf("%d-th CPU %d stalls %.3f, want %.3f", k, c, res.Stall[c][0], want)
		}
		wait += x + m.Lat.RMWLocal
		prev = c
	}
	var last float64
	for _, c := range cpus {
		last = max(last, res.Stall[c][0])
	}
	if last < 99*m.Lat.Transfer[hwmodel.ClassLLC] {
		t.Errorf("last waits %.1f ns, less than 99 transfers", last)
	}
}

// TestReplayLockFIFO: a lock is handed over first come first served and
// waiters wait for the holder's critical section. A waiter spins reading
// the lock's line (spinnerRead: qspinlock's pending or queue-head waiter
// reads lock->val, kernel/locking/qspinlock.c v6.6; mutex.c's reads
// lock->owner), so a release with a waiter invalidates its copy, and the
// handover is the waiter's read of the released word and its cmpxchg:
// three transactions from the holder's Unlock to the next Lock.
func TestReplayLockFIFO(t *testing.T) {
	m := mustLoad(t, "epyc-9654-2s")
	line := m.NewLine(0)
	streams := make([][]Req, m.NumCPUs())
	// CPU 0 holds the lock from t=0 to t=1000; CPUs 2 and 1 ask at 100
	// and 200 and hold it for 100 ns each.
	streams[0] = []Req{{T: 0, Op: hwmodel.Lock}, {T: 1000, Op: hwmodel.Unlock}}
	streams[2] = []Req{{T: 100, Op: hwmodel.Lock}, {T: 200, Op: hwmodel.Unlock}}
	streams[1] = []Req{{T: 200, Op: hwmodel.Lock}, {T: 300, Op: hwmodel.Unlock}}
	res := Replay(m, []*hwmodel.Line{line}, streams)
	// CPU 0's lock: a fill from DRAM.
	fill := m.Lat.MemLocal
	x := m.Lat.Transfer[hwmodel.ClassLLC]
	// CPU 0 releases at 1000 + fill (its own stall shifted the unlock).
	rel0 := 1000 + fill
	if !near(res.Stall[0][0], fill) {
		t.Errorf("CPU 0 lock stall %v, want the fill %v", res.Stall[0][0], fill)
	}
	// CPU 2 (asked first) gets the lock at rel0: the Unlock invalidates
	// its copy, then it reads the line from 0 and takes it.
	got2 := 100 + res.Stall[2][0]
	if !near(got2, rel0+3*x) {
		t.Errorf("CPU 2 holds the lock at %v, want %v", got2, rel0+3*x)
	}
	// CPU 1 waits for CPU 2's 100 ns critical section.
	// 2 logged its unlock 100 ns after asking; its stall shifts it.
	rel2 := got2 + 100
	got1 := 200 + res.Stall[1][0]
	if !near(got1, rel2+3*x) {
		t.Errorf("CPU 1 holds the lock at %v, want %v (after CPU 2's release at %v)", got1, rel2+3*x, rel2)
	}
	if res.Lines[0].LockWaits != 2 {
		t.Errorf("lock waits %d, want 2", res.Lines[0].LockWaits)
	}
	// The critical sections: 1000, 100 and 100 ns, each from its Lock's
	// completion (after the fill or transfer) to its Unlock's, the first
	// two with a spinner's copy to invalidate.
	if l := res.Lines[0]; l.Releases != 3 || !near(float64(l.HeldPS)/1000, 1200+2*x) {
		t.Errorf("held %d ps over %d releases, want %.1f ns over 3", l.HeldPS, l.Releases, 1200+2*x)
	}
}

// TestReplayLockQueuedWhileFree: a Lock that arrives while the lock is
// free but its line is busy (another CPU's store) queues behind the
// line's transaction with no reason to spin yet; when another Lock takes
// the lock first, its fast path's cmpxchg would fail, so from then on it
// spins reading the lock word (kernel/locking/qspinlock.c v6.6:
// queued_spin_lock_slowpath(); mutex.c v6.6: mutex_spin_on_owner()), as a
// Lock that found the lock held does (nextHead marks it): the holder's
// release invalidates its copy and its handover is three transactions,
// as in TestReplayLockFIFO, not one.
func TestReplayLockQueuedWhileFree(t *testing.T) {
	m := mustLoad(t, "epyc-9654-2s")
	line := m.NewLine(0)
	streams := make([][]Req, m.NumCPUs())
	// CPU 3 stores to the line at 0 (a fill from DRAM keeps it busy);
	// CPUs 2 and 1 ask for the lock, free, at 10 and 20 and hold it
	// for 100 ns each.
	streams[3] = []Req{{T: 0, Op: hwmodel.Write}}
	streams[2] = []Req{{T: 10, Op: hwmodel.Lock}, {T: 110, Op: hwmodel.Unlock}}
	streams[1] = []Req{{T: 20, Op: hwmodel.Lock}, {T: 120, Op: hwmodel.Unlock}}
	res := Replay(m, []*hwmodel.Line{line}, streams)
	x := m.Lat.Transfer[hwmodel.ClassLLC]
	// CPU 2 (asked first) takes the line from CPU 3 when the fill ends.
	got2 := 10 + res.Stall[2][0]
	if !near(got2, m.Lat.MemLocal+x) {
		t.Errorf("CPU 2 holds the lock at %v, want %v (the fill, then a transfer)", got2, m.Lat.MemLocal+x)
	}
	// CPU 1 spun on the lock from CPU 2's take: CPU 2's release
	// invalidates its copy, it reads the released word and takes it.
	rel2 := got2 + 100
	got1 := 20 + res.Stall[1][0]
	if !near(got1, rel2+3*x) {
		t.Errorf("CPU 1 holds the lock at %v, want %v (three transactions after CPU 2's release at %v)", got1, rel2+3*x, rel2)
	}
}

// TestReplayDeterministic: the same input gives the same output.
func TestReplayDeterministic(t *testing.T) {
	m := mustLoad(t, "epyc-9654-2s")
	mk := func() ([]*hwmodel.Line, [][]Req) {
		lines := []*hwmodel.Line{m.NewLine(0), m.NewLine(1), m.NewLine(0)}
		streams := make([][]Req, m.NumCPUs())
		seed := uint64(42)
		for c := 0; c < m.NumCPUs(); c += 7 {
			var tm int64
			for k := 0; k < 20; k++ {
				seed = seed*6364136223846793005 + 1442695040888963407
				tm += int64(seed>>60) * 3
				streams[c] = append(streams[c], Req{T: tm, Line: int32(seed >> 40 % 3), Op: hwmodel.Op(seed >> 50 % 3)})
			}
		}
		return lines, streams
	}
	l1, s1 := mk()
	l2, s2 := mk()
	r1, r2 := Replay(m, l1, s1), Replay(m, l2, s2)
	if !reflect.DeepEqual(r1, r2) {
		t.Fatal("two replays of the same streams differ")
	}
}

func TestReplayPanics(t *testing.T) {
	m := mustLoad(t, "hikey-8")
	for _, tc := range []struct {
		name    string
		streams [][]Req
		want    string
	}{
		{"unsorted", [][]Req{{{T: 10}, {T: 5}}}, "not sorted"},
		{"bad line", [][]Req{{{T: 0, Line: 3}}}, "names line 3"},
		{"unbalanced unlock", [][]Req{{{T: 0, Op: hwmodel.Unlock}}}, "releases lock"},
		{"lock never released", [][]Req{{{T: 0, Op: hwmodel.Lock}}, {{T: 1, Op: hwmodel.Lock}}}, "never served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			Replay(m, []*hwmodel.Line{m.NewLine(0)}, tc.streams)
		})
	}
}

// TestReplayIndependentReads: independent loads overlap up to MLP in
// flight; dependent ones are paid one after the other.
func TestReplayIndependentReads(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	run := func(indep bool) float64 {
		var lines []*hwmodel.Line
		streams := make([][]Req, m.NumCPUs())
		for i := 0; i < 32; i++ {
			l := m.NewLine(0)
			m.Access(l, 1+i, hwmodel.Write) // each line Modified on another core
			lines = append(lines, l)
			streams[0] = append(streams[0], Req{T: int64(i), Line: int32(i), Op: hwmodel.Read, Indep: indep})
		}
		// A dependent access at the end consumes the scan.
		extra := m.NewLine(0)
		lines = append(lines, extra)
		streams[0] = append(streams[0], Req{T: 40, Line: 32, Op: hwmodel.RMW})
		return Replay(m, lines, streams).CPUStall[0]
	}
	x := m.Lat.Transfer[hwmodel.ClassLLC]
	dep, ind := run(false), run(true)
	if dep < 32*x {
		t.Errorf("dependent scan of 32 lines stalls %.1f ns, want at least 32 transfers (%.1f)", dep, 32*x)
	}
	// 32 reads with 16 in flight: about two rounds of transfers.
	if ind > 3*x+m.Lat.MemLocal || ind < 2*x-40 {
		t.Errorf("independent scan of 32 lines (MLP %d) stalls %.1f ns, want about 2 transfers (%.1f each)", m.Lat.MLP, ind, x)
	}
}

// TestReplayHitNotQueued: a load of a line the CPU holds hits in its own
// cache at once, even while the line is busy with another CPU's transfer
// or others queue for it: it never reaches the home, so it neither waits
// nor takes part in the draw.
func TestReplayHitNotQueued(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	const a, b, c = 0, 1, 76 // b shares a's LLC; c is on the other socket
	line := m.NewLine(0)
	m.Access(line, a, hwmodel.Write) // a holds it Modified
	streams := make([][]Req, m.NumCPUs())
	// c reads it at 1 us: a forwards it (the line is busy for the
	// transfer) and keeps a Shared copy; b's RMW queues behind; a reads
	// its own copy 10 ns into the transfer.
	streams[c] = []Req{{T: 1000, Op: hwmodel.Read}}
	streams[b] = []Req{{T: 1005, Op: hwmodel.RMW}}
	streams[a] = []Req{{T: 1010, Op: hwmodel.Read}, {T: 1011, Op: hwmodel.Read}}
	res := Replay(m, []*hwmodel.Line{line}, streams)
	// Stall lists only the requests that stalled.
	if got := res.Stall[a]; len(got) != 0 {
		t.Errorf("a's loads of its own copy stalled %v ns, want none (hits)", got)
	}
	if want := m.Lat.Transfer[hwmodel.ClassRemote]; len(res.Stall[c]) != 1 || !near(res.Stall[c][0], want) {
		t.Errorf("c's read stalled %v ns, want the transfer %v", res.Stall[c][0], want)
	}
	if len(res.Stall[b]) != 1 || res.Stall[b][0] <= 0 {
		t.Errorf("b's RMW did not wait behind the transfer: stall %v", res.Stall[b][0])
	}
	st := res.Lines[0]
	if st.Accesses != 4 || st.Transfers[m.Class(a, c)] != 1 {
		t.Errorf("line stats %+v, want 4 accesses and one remote transfer", st)
	}
}

// TestReplayFreeLineServedAtArrival: a request that finds its line free
// and unqueued is served at once; of two arriving at the same instant the
// lower CPU is, and the other queues behind its transaction.
func TestReplayFreeLineServedAtArrival(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	const a, b = 3, 5 // one LLC
	for i := int64(0); i < 16; i++ {
		line := m.NewLine(0)
		m.Access(line, 40, hwmodel.Write) // a third CPU holds it
		streams := make([][]Req, m.NumCPUs())
		at := 1000 + 37*i
		streams[a] = []Req{{T: at, Op: hwmodel.RMW}}
		streams[b] = []Req{{T: at, Op: hwmodel.RMW}}
		res := Replay(m, []*hwmodel.Line{line}, streams)
		xfer := m.Lat.Transfer[m.Class(a, 40)]
		if len(res.Stall[a]) != 1 || !near(res.Stall[a][0], xfer) {
			t.Fatalf("t=%d: CPU %d stalled %v, want only the transfer %v (served at arrival)", at, a, res.Stall[a], xfer)
		}
		if want := xfer + m.Lat.RMWLocal + m.Lat.Transfer[m.Class(a, b)]; len(res.Stall[b]) != 1 || !near(res.Stall[b][0], want) {
			t.Fatalf("t=%d: CPU %d stalled %v, want %v: behind CPU %d's transaction, then its transfer", at, b, res.Stall[b], want, a)
		}
	}
}

// TestReplayOwes: a CPU whose independent load still waits behind a
// queue of RMWs when a call ends has issued everything (not Behind), yet
// a later call charges it the wait: Owes says so, so that the caller
// keeps the CPU in view until it has been charged (emu's barrier visits
// it; before, an idle CPU with loads in flight could be charged by a
// barrier that did not visit it).
func TestReplayOwes(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	line := m.NewLine(0)
	lines := []*hwmodel.Line{line}
	rp := NewReplayer(m)
	streams := make([][]Req, m.NumCPUs())
	for c := 1; c <= 16; c++ {
		streams[c] = []Req{{T: 0, Op: hwmodel.RMW}}
	}
	streams[0] = []Req{{T: 1, Op: hwmodel.Read, Indep: true}}
	res := rp.Advance(lines, streams, 100)
	if len(res.Served[0]) != 0 {
		t.Fatalf("CPU 0 served by t=100 ns: %+v; want its load still queued behind 16 RMWs", res.Served[0])
	}
	if rp.Behind(0) {
		t.Fatal("CPU 0 Behind with its only request issued")
	}
	if !rp.Owes(0) {
		t.Fatal("CPU 0 has a load in flight and Owes is false")
	}
	var charged float64
	for range 100 {
		res = rp.Advance(lines, make([][]Req, m.NumCPUs()), rp.Now()+100)
		charged += res.CPUStall[0]
		if !rp.Owes(0) {
			break
		}
	}
	if rp.Owes(0) {
		t.Fatal("CPU 0 still owes after 10 us")
	}
	if charged <= 0 {
		t.Errorf("CPU 0 was never charged for a load that waited behind 16 RMWs")
	}
	if rp.Owes(1) {
		t.Error("CPU 1, served, still owes")
	}
}

// TestReplayKeepTotals: a Replayer that KeepTotals ends with per-line
// totals equal to the sums of another's per-call Lines over the same calls
// (the random cut loads of TestReplayCutEqualsWhole), and lists no
// touched lines.
func TestReplayKeepTotals(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	for seed := uint64(1); seed <= 20; seed++ {
		mk, streams, barriers := randomStreams(m, seed)
		lines := [2][]*hwmodel.Line{mk(), mk()}
		rps := [2]*Replayer{NewReplayer(m), NewReplayer(m)}
		rps[1].KeepTotals()
		sum := make([]LineCounts, len(lines[0]))
		feeds := [2]*cutter{newCutter(streams), newCutter(streams)}
		for k := 0; k <= len(barriers); k++ {
			until := untilOf(barriers, k)
			for i, rp := range rps {
				res := rp.Advance(lines[i], feeds[i].epoch(until), until)
				feeds[i].report(res)
				if i == 1 {
					if len(res.Touched) != 0 {
						t.Fatalf("seed %d: KeepTotals lists %d touched lines", seed, len(res.Touched))
					}
					continue
				}
				for _, li := range res.Touched {
					a, b := &sum[li], &res.Lines[li]
					a.Accesses += b.Accesses
					for op := range a.Ops {
						a.Ops[op] += b.Ops[op]
					}
					for c := range a.Transfers {
						a.Transfers[c] += b.Transfers[c]
					}
					a.Invalidations += b.Invalidations
					a.Fills += b.Fills
					a.LockWaits += b.LockWaits
					a.StallNS += b.StallNS
					a.BusyPS += b.BusyPS
					a.HeldPS += b.HeldPS
					a.Releases += b.Releases
				}
			}
		}
		tot := rps[1].Totals()
		for li := range sum {
			want, got := sum[li], tot[li]
			if math.Abs(got.StallNS-want.StallNS) > 1e-6*max(1, want.StallNS) {
				t.Errorf("seed %d line %d: total stall %.3f ns, the calls sum to %.3f", seed, li, got.StallNS, want.StallNS)
			}
			got.StallNS, want.StallNS = 0, 0
			if got != want {
				t.Errorf("seed %d line %d: totals %+v, the calls sum to %+v", seed, li, got, want)
			}
		}
	}
}

// TestReplayLogged: after every call, Logged counts each request added so
// far, by line and op, whether served, waiting at its line or not yet
// issued (the random cut loads, whose barriers leave requests pending).
func TestReplayLogged(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	pendingSeen := false
	for seed := uint64(1); seed <= 20; seed++ {
		mk, streams, barriers := randomStreams(m, seed)
		lines := mk()
		rp := NewReplayer(m)
		rp.KeepTotals()
		want := make([][hwmodel.NumOps]int64, len(lines))
		feed := newCutter(streams)
		for k := 0; k <= len(barriers); k++ {
			until := untilOf(barriers, k)
			cut := feed.epoch(until)
			for _, s := range cut {
				for _, q := range s {
					want[q.Line][q.Op]++
				}
			}
			feed.report(rp.Advance(lines, cut, until))
			pendingSeen = pendingSeen || rp.Pending() > 0
			if got := rp.Logged(); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d call %d: Logged %v, added %v (%d pending)", seed, k, got, want, rp.Pending())
			}
		}
	}
	if !pendingSeen {
		t.Fatal("no call ended with requests pending: the test checks only served ones")
	}
}

// TestReplayNotices: a Notify request is reported with its completion
// time by the call that serves it, also when it waits across calls: CPU
// 1 holds the lock until 500 ns; CPU 0's Lock waits for it, and its marked
// Unlock completes after that, in the second call.
func TestReplayNotices(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	lines := []*hwmodel.Line{m.NewLine(0)}
	rp := NewReplayer(m)
	streams := [][]Req{
		{{T: 100, Line: 0, Op: hwmodel.Lock}, {T: 110, Line: 0, Op: hwmodel.Unlock, Notify: true}},
		{{T: 0, Line: 0, Op: hwmodel.Lock}, {T: 500, Line: 0, Op: hwmodel.Unlock}},
	}
	res := rp.Advance(lines, streams, 300)
	if len(res.Notices) != 0 {
		t.Fatalf("notices before the lock is free: %+v", res.Notices)
	}
	res = rp.Advance(lines, [][]Req{nil, nil}, 2000)
	if len(res.Notices) != 1 || res.Notices[0].CPU != 0 {
		t.Fatalf("notices %+v, want one of CPU 0", res.Notices)
	}
	if ns := res.Notices[0].T; ns < 500+10 {
		t.Errorf("CPU 0's Unlock completed at %d ns, before CPU 1's release at 500 ns plus its own 10 ns", ns)
	}
}

// TestReplayLockSpinTags: mutex.c's waiters spin (mutex_optimistic_spin(),
// v6.6) on the owner at the queue's head and in osq_lock() behind it, and
// perf charges those functions, not mutex_lock(): with SetLockSpin the
// wait of a Lock that finds the lock held goes to the spin tags, the
// transactions that take the lock to the Lock's own; without, all of it
// is the Lock's, the same total. (The head's reads of lock->owner are
// priced either way, as every lock's spinner's are: spinnerRead.)
// TestReplayLockFIFO's schedule: CPU 0 holds the lock 1000 ns, CPU 2 asks
// at 100 (first waiter: on the owner), CPU 1 at 200 (behind CPU 2:
// queued, then on the owner, CPU 2, from the handover to CPU 2).
func TestReplayLockSpinTags(t *testing.T) {
	const lock, onOwner, queued = 1, 2, 3
	m := mustLoad(t, "epyc-9654-2s")
	// run replays the schedule in calls that end at cuts (the waits
	// reported in parts: accrue), summing each CPU's stall by tag.
	run := func(spin bool, cuts ...int64) [3]map[int32]float64 {
		streams := make([][]Req, m.NumCPUs())
		streams[0] = []Req{{T: 0, Op: hwmodel.Lock, Tag: lock}, {T: 1000, Op: hwmodel.Unlock, Tag: lock}}
		streams[2] = []Req{{T: 100, Op: hwmodel.Lock, Tag: lock}, {T: 200, Op: hwmodel.Unlock, Tag: lock}}
		streams[1] = []Req{{T: 200, Op: hwmodel.Lock, Tag: lock}, {T: 300, Op: hwmodel.Unlock, Tag: lock}}
		rp := NewReplayer(m)
		if spin {
			rp.SetLockSpin(lock, onOwner, queued)
		}
		lines := []*hwmodel.Line{m.NewLine(0)}
		sums := [3]map[int32]float64{{}, {}, {}}
		for _, until := range append(cuts, math.MaxInt64) {
			res := rp.Advance(lines, streams, until)
			for c := range sums {
				for _, x := range res.Served[c] {
					sums[c][x.Tag] += float64(x.StallPS) / 1000
				}
			}
			streams = make([][]Req, m.NumCPUs())
		}
		rp.checkDone()
		return sums
	}
	plain, spun := run(false), run(true)
	if cut := run(true, 150, 700, 1130, 1200); !reflect.DeepEqual(roundTags(cut), roundTags(spun)) {
		t.Errorf("replayed in five calls: %v, in one: %v", cut, spun)
	}
	// All three CPUs are on one CCX: every transaction is an LLC-class
	// transfer or an invalidation of a copy there, x each.
	x := m.Lat.Transfer[hwmodel.ClassLLC]
	for c := range 3 {
		t.Logf("CPU %d: without %v, with %v", c, plain[c], spun[c])
		if len(plain[c]) > 1 || !near(spun[c][lock]+spun[c][onOwner]+spun[c][queued], plain[c][lock]) {
			t.Errorf("CPU %d: the stall moved: %v without the spin tags, %v with", c, plain[c], spun[c])
		}
	}
	fill := m.Lat.MemLocal
	if s := spun[0]; s[onOwner]+s[queued] != 0 {
		t.Errorf("CPU 0 found the lock free, yet spun: %v", s)
	}
	// CPU 2 spins from 100 until CPU 0's release, which now invalidates
	// its copy (x later), then reads the owner and takes the line (2x).
	if s := spun[2]; !near(s[lock], 2*x) || !near(s[onOwner], 1000+fill+x-100) || s[queued] != 0 {
		t.Errorf("CPU 2, the first waiter: %v, want %.1f ns on the owner and %.1f (read, then cmpxchg) at the lock", s, 1000+fill+x-100, 2*x)
	}
	// CPU 1 is queued until that handover, then spins on CPU 2 through
	// its two transactions, its 100 ns critical section and its release
	// (which invalidates CPU 1's copy), then takes the lock in two.
	handover := 1000 + fill + x
	if s := spun[1]; !near(s[lock], 2*x) || !near(s[queued], handover-200) || !near(s[onOwner], 2*x+100+x) {
		t.Errorf("CPU 1, queued behind CPU 2: %v, want %.1f ns on the osq, %.1f on the owner and %.1f at the lock", s, handover-200, 3*x+100, 2*x)
	}
}

// roundTags rounds stalls to 0.1 ns, for comparing sums of parts.
func roundTags(r [3]map[int32]float64) [3]map[int32]float64 {
	var o [3]map[int32]float64
	for c, m := range r {
		o[c] = map[int32]float64{}
		for k, v := range m {
			if v = math.Round(v*10) / 10; v != 0 {
				o[c][k] = v
			}
		}
	}
	return o
}

// TestPendSize: a request waiting in a CPU's queue is 24 bytes (the
// weave writes one per access).
func TestPendSize(t *testing.T) {
	if got := unsafe.Sizeof(pend{}); got != 24 {
		t.Errorf("sizeof(pend) = %d, want 24", got)
	}
}

// TestReplayLineSize: a line's record is at most 224 bytes (192 before
// the lock hold time: HeldPS, Releases and lockedAt), with what a request
// served at once touches in the first two host cache lines.
func TestReplayLineSize(t *testing.T) {
	var l replayLine
	if got := unsafe.Sizeof(l); got > 224 {
		t.Errorf("sizeof(replayLine) = %d, want at most 224", got)
	}
	for name, end := range map[string]uintptr{
		"st.Ops[Write]":  unsafe.Offsetof(l.st) + unsafe.Offsetof(l.st.Ops) + 2*8,
		"st.Transfers":   unsafe.Offsetof(l.st) + unsafe.Offsetof(l.st.Transfers) + unsafe.Sizeof(l.st.Transfers),
		"waiters, home":  unsafe.Offsetof(l.home) + 4,
		"st.BusyPS":      unsafe.Offsetof(l.st) + unsafe.Offsetof(l.st.BusyPS) + 8,
		"st.StallNS":     unsafe.Offsetof(l.st) + unsafe.Offsetof(l.st.StallNS) + 8,
		"st.Accesses":    unsafe.Offsetof(l.st) + unsafe.Offsetof(l.st.Accesses) + 8,
		"freeAt, holder": unsafe.Offsetof(l.holder) + 4,
	} {
		if end > 128 {
			t.Errorf("%s ends at byte %d, past the record's first two host cache lines", name, end)
		}
	}
}
