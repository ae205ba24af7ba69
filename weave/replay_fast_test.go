package weave

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// fastStreams is a load for the fast path: each CPU has a private line
// (reads, writes, RMWs, its own lock), all read a read-mostly line that one
// CPU sometimes writes, and all hammer a contended line and lock; some
// reads are independent, some requests Notify.
func fastStreams(m *hwmodel.Machine, cpus []int, seed uint64) (mk func() []*hwmodel.Line, streams [][]Req, barriers []int64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := len(cpus)
	// lines: 0..n-1 private, n read-mostly, n+1 contended, n+2 lock
	mk = func() []*hwmodel.Line {
		ls := make([]*hwmodel.Line, n+3)
		for i := range ls {
			ls[i] = m.NewLine(i % len(m.Nodes))
		}
		return ls
	}
	streams = make([][]Req, m.NumCPUs())
	ro, hot, lk := int32(n), int32(n+1), int32(n+2)
	for i, c := range cpus {
		var tm int64
		own := int32(i)
		for k := 0; k < 150; k++ {
			tm += int64(rng.IntN(30))
			r := Req{T: tm, Line: own, Op: hwmodel.Read, Tag: int32(1 + rng.IntN(4))}
			switch x := rng.IntN(20); {
			case x < 5:
			case x < 7:
				r.Op = hwmodel.Write
			case x < 9:
				r.Op = hwmodel.RMW
			case x < 10:
				r.Indep = true
			case x < 14:
				r.Line = ro
				r.Indep = rng.IntN(2) == 0
				if i == 0 && rng.IntN(8) == 0 {
					r.Op, r.Indep = hwmodel.Write, false
				}
			case x < 16:
				// a private access, then a burst on the hot line
				streams[c] = append(streams[c], Req{T: tm, Line: own, Op: hwmodel.Write, Tag: 7})
				tm += int64(rng.IntN(3))
				r.Line, r.Op = hot, hwmodel.RMW
			case x < 17:
				r.Line = hot
			case x < 18:
				// a critical section on the shared lock
				streams[c] = append(streams[c], Req{T: tm, Line: lk, Op: hwmodel.Lock, Tag: 5})
				tm += int64(rng.IntN(100))
				r = Req{T: tm, Line: lk, Op: hwmodel.Unlock, Tag: 5, Notify: rng.IntN(2) == 0}
			default:
				// its own lock on its private line
				streams[c] = append(streams[c], Req{T: tm, Line: own, Op: hwmodel.Lock, Tag: 6})
				tm += int64(rng.IntN(50))
				r = Req{T: tm, Line: own, Op: hwmodel.Unlock, Tag: 6}
			}
			r.Notify = r.Notify || rng.IntN(40) == 0
			streams[c] = append(streams[c], r)
		}
	}
	for b := int64(1 + rng.IntN(400)); b < 6000; b += int64(1 + rng.IntN(400)) {
		barriers = append(barriers, b)
	}
	return mk, streams, barriers
}

// TestReplayFastPathExact: the fast path gives the ordered replay's results
// exactly (every stall, per CPU and line, the line statistics, the
// notices in their order, what is pending, behind and owed at each
// barrier) on loads that mix private, read-only and contended lines, cut
// into epochs at random barriers.
func TestReplayFastPathExact(t *testing.T) {
	for _, topo := range []string{"spr-2s", "hikey-8"} {
		m := mustLoad(t, topo)
		cpus := []int{0, 1, 2, 3, 4, 5, 6, 7}
		if m.NumCPUs() > 8 {
			cpus = []int{0, 1, 2, 56, 57, 112, 113, 168, 200}
		}
		for seed := uint64(1); seed <= 150; seed++ {
			mk, streams, barriers := fastStreams(m, cpus, seed)
			var got [2][]string
			var went int
			for k, ordered := range []bool{true, false} {
				rp := NewReplayer(m)
				rp.ordered = ordered
				lines := mk()
				feed := newCutter(streams)
				for b := 0; b <= len(barriers); b++ {
					until := untilOf(barriers, b)
					res := rp.Advance(lines, feed.epoch(until), until)
					feed.report(res)
					var owes []bool
					for _, c := range cpus {
						owes = append(owes, rp.Behind(c), rp.Stalled(c), rp.Owes(c))
					}
					got[k] = append(got[k], fmt.Sprint(res.CPUs, res.Served, res.CPUStall, res.Notices, rp.Pending(), owes))
					// Touched is a set (the order lines were first touched in
					// moves with the fast path): by line.
					for _, li := range slices.Sorted(slices.Values(res.Touched)) {
						got[k] = append(got[k], fmt.Sprint(li, res.Lines[li]))
					}
				}
				if !ordered {
					hits, own := rp.AheadServed()
					went += int(hits + own)
				}
			}
			if !reflect.DeepEqual(got[0], got[1]) {
				for i := range got[0] {
					if i >= len(got[1]) || got[0][i] != got[1][i] {
						t.Fatalf("%s seed %d: step %d differs:\nordered %s\nfast    %s", topo, seed, i, got[0][i], got[1][min(i, len(got[1])-1)])
					}
				}
				t.Fatalf("%s seed %d: %d steps ordered, %d fast", topo, seed, len(got[0]), len(got[1]))
			}
			if seed == 1 && went == 0 {
				t.Errorf("%s: the fast path never went ahead", topo)
			}
		}
	}
}

// TestReplayFastPathKeeperOrder: CPU 1 goes ahead through a hit on its
// private line at 100 ns and stops at its RMW of the line it owns and
// keeps, at 101. CPU 0's RMW of that line arrives at 100 too, before CPU
// 1's request at 100 in the event order: the keeper is not yet due then
// (keeperDue sees CPU 1 due at 100, with the hit next), so CPU 0 takes the
// free line at once, as in the ordered replay.
func TestReplayFastPathKeeperOrder(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	if m.Lat.Burst < 2 {
		t.Fatalf("spr-2s burst %d: the keeper needs 2", m.Lat.Burst)
	}
	var stall [2][]float64
	for k, ordered := range []bool{true, false} {
		own, hot := m.NewLine(0), m.NewLine(0)
		m.Access(own, 1, hwmodel.Write)
		m.Access(hot, 1, hwmodel.RMW) // CPU 1 keeps it: burst 1
		streams := make([][]Req, m.NumCPUs())
		streams[0] = []Req{{T: 100, Line: 1, Op: hwmodel.RMW}}
		streams[1] = []Req{{T: 50, Line: 0, Op: hwmodel.Read}, {T: 100, Line: 0, Op: hwmodel.Read}, {T: 101, Line: 1, Op: hwmodel.RMW}}
		rp := NewReplayer(m)
		rp.ordered = ordered
		res := rp.Advance([]*hwmodel.Line{own, hot}, streams, 10_000)
		stall[k] = []float64{res.CPUStall[0], res.CPUStall[1]}
		if hits, own := rp.AheadServed(); !ordered && (hits != 1 || own != 0) {
			t.Fatalf("%d hits and %d private requests served ahead, want CPU 1's hit at 100", hits, own)
		}
	}
	if stall[0][0] != stall[1][0] || stall[0][1] != stall[1][1] {
		t.Errorf("stalls of CPUs 0 and 1: ordered %v, fast %v", stall[0], stall[1])
	}
	if want := m.Lat.Transfer[m.Class(0, 1)]; stall[0][0] != want {
		t.Errorf("CPU 0 stalled %.1f ns, want the transfer from CPU 1 (%.1f): it did not wait for the keeper", stall[0][0], want)
	}
}
