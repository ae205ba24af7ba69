package weave

import (
	"fmt"
	"math"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// cutReplay replays streams on a fresh Replayer cut into calls at the
// given barriers, as the engine does: each call gets the requests logged
// in its epoch, shifted by the stall the earlier calls reported for their
// CPU (the engine adds it to the CPU's clock), and the last call serves
// everything. It returns the total stall and each line's busy time.
// pendingScan counts what Pending counts from the CPUs' state: requests
// not yet issued, a CPU's own request waiting at its line, and its
// independent reads still waiting there.
func pendingScan(rp *Replayer) int {
	n := 0
	for c := range rp.cpus {
		cpu := &rp.cpus[c]
		n += len(cpu.reqs) - cpu.next
		if cpu.waiting && cpu.blockedOn < 0 && !cpu.sbWait {
			n++
		}
		for _, o := range cpu.out.live() {
			if o.finish == 0 {
				n++
			}
		}
		for _, e := range cpu.sb.live() {
			if e.finish == 0 {
				n++
			}
		}
	}
	return n
}

// cutter feeds one Replayer random streams cut at barriers the way the
// engine cuts them: each call gets the requests logged before its until,
// shifted by the stall the calls so far reported for their CPU.
type cutter struct {
	streams [][]Req
	next    []int
	told    []int64 // ps reported per CPU
	cut     [][]Req
}

func newCutter(streams [][]Req) *cutter {
	n := len(streams)
	return &cutter{streams: streams, next: make([]int, n), told: make([]int64, n), cut: make([][]Req, n)}
}

// epoch returns the streams of the call that ends at until.
func (k *cutter) epoch(until int64) [][]Req {
	for c, s := range k.streams {
		k.cut[c] = k.cut[c][:0]
		for k.next[c] < len(s) && s[k.next[c]].T < until {
			q := s[k.next[c]]
			q.T += k.told[c] / 1000
			k.cut[c] = append(k.cut[c], q)
			k.next[c]++
		}
	}
	return k.cut
}

// report takes in the stalls a call reported.
func (k *cutter) report(res *ReplayResult) {
	for c, sv := range res.Served {
		for _, x := range sv {
			k.told[c] += x.StallPS
		}
	}
}

// untilOf is the bound of call k of a replay cut at barriers.
func untilOf(barriers []int64, k int) int64 {
	if k < len(barriers) {
		return barriers[k]
	}
	return math.MaxInt64
}

func cutReplay(m *hwmodel.Machine, lines []*hwmodel.Line, streams [][]Req, barriers []int64) (float64, []int64) {
	rp := NewReplayer(m)
	feed := newCutter(streams)
	busy := make([]int64, len(lines))
	total := 0.0
	for k := 0; k <= len(barriers); k++ {
		until := untilOf(barriers, k)
		res := rp.Advance(lines, feed.epoch(until), until)
		if n, want := rp.Pending(), pendingScan(rp); n != want {
			panic(fmt.Sprintf("Pending() %d, the CPUs hold %d requests not yet served", n, want))
		}
		feed.report(res)
		for c := range res.Served {
			total += res.CPUStall[c]
		}
		for _, li := range res.Touched {
			busy[li] += res.Lines[li].BusyPS
		}
	}
	return total, busy
}

// randomStreams is the saturating random load of TestReplayCutEqualsWhole
// for one seed: 10 CPUs of spr-2s on both sockets, 60 requests each, about
// 20 ns apart, on 1-3 lines (the last one also a lock), and barriers to cut
// it at; mk makes the lines afresh.
func randomStreams(m *hwmodel.Machine, seed uint64) (mk func() []*hwmodel.Line, streams [][]Req, barriers []int64) {
	cpus := []int{0, 1, 2, 3, 56, 57, 112, 113, 168, 200}
	rng := seed * 0x9e3779b97f4a7c15
	rnd := func(n uint64) uint64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng % n
	}
	nlines := 1 + int(rnd(3))
	mk = func() []*hwmodel.Line {
		ls := make([]*hwmodel.Line, nlines)
		for i := range ls {
			ls[i] = m.NewLine(i % 2)
		}
		return ls
	}
	streams = make([][]Req, m.NumCPUs())
	for _, c := range cpus {
		var tm int64
		for k := 0; k < 60; k++ {
			tm += int64(rnd(40)) // saturating: ~20 ns apart per CPU
			li := int32(rnd(uint64(nlines)))
			switch r := rnd(10); {
			case r < 4:
				streams[c] = append(streams[c], Req{T: tm, Line: li, Op: hwmodel.RMW, Tag: 1})
			case r < 6:
				streams[c] = append(streams[c], Req{T: tm, Line: li, Op: hwmodel.Read, Tag: 2})
			case r < 8:
				streams[c] = append(streams[c], Req{T: tm, Line: li, Op: hwmodel.Read, Indep: true, Tag: 3})
			case r < 9:
				streams[c] = append(streams[c], Req{T: tm, Line: li, Op: hwmodel.Write, Tag: 4})
			default:
				// a critical section on the lock line (the last line)
				lk := int32(nlines - 1)
				streams[c] = append(streams[c], Req{T: tm, Line: lk, Op: hwmodel.Lock, Tag: 5})
				tm += int64(rnd(200))
				streams[c] = append(streams[c], Req{T: tm, Line: lk, Op: hwmodel.Unlock, Tag: 5})
			}
		}
	}
	for b := int64(1 + rnd(300)); b < 3000; b += int64(1 + rnd(300)) {
		barriers = append(barriers, b)
	}
	return mk, streams, barriers
}

// TestReplayCutEqualsWhole: the weave's queues are the machine's, not the
// epoch's. Replaying random streams whole, and cut at random barriers the
// way the engine cuts them (each epoch's requests shifted by the stall
// reported so far), gives the same per-line busy time and the same total
// stall within 1%. A replay that started every line free at each barrier
// serves a saturated line's backlog and the next epoch's requests at once
// and fails this by a wide margin.
func TestReplayCutEqualsWhole(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	for seed := uint64(1); seed <= 40; seed++ {
		mk, streams, barriers := randomStreams(m, seed)
		whole, busyWhole := cutReplay(m, mk(), streams, nil)
		cut, busyCut := cutReplay(m, mk(), streams, barriers)
		if whole <= 0 {
			t.Fatalf("seed %d: no stall at all", seed)
		}
		if d := math.Abs(cut-whole) / whole; d > 0.01 {
			t.Errorf("seed %d: total stall whole %.1f ns, cut at %d barriers %.1f ns (%.2f%% apart)", seed, whole, len(barriers), cut, 100*d)
		}
		for li := range busyWhole {
			bw, bc := float64(busyWhole[li]), float64(busyCut[li])
			if math.Abs(bc-bw) > 0.01*bw+1 {
				t.Errorf("seed %d line %d: busy whole %.1f ns, cut %.1f ns", seed, li, bw/1000, bc/1000)
			}
		}
	}
}

// TestReplayLockAcrossBarrier: a lock taken before a barrier and released
// after it (its holder stalled) stays held: the next epoch's locker waits
// for the release.
func TestReplayLockAcrossBarrier(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	lines := []*hwmodel.Line{m.NewLine(0)}
	rp := NewReplayer(m)
	s1 := make([][]Req, m.NumCPUs())
	// CPU 0 takes the lock at 990 and, its critical section logged by
	// the same event, releases it at 1500: past the barrier at 1000.
	s1[0] = []Req{{T: 990, Op: hwmodel.Lock}, {T: 1500, Op: hwmodel.Unlock}}
	res := rp.Advance(lines, s1, 1000)
	if rp.Pending() == 0 {
		t.Fatal("the unlock was served before its time")
	}
	lockAt := 990 + float64(res.Served[0][0].StallPS)/1000 // the fill
	s2 := make([][]Req, m.NumCPUs())
	s2[1] = []Req{{T: 1100, Op: hwmodel.Lock}, {T: 1110, Op: hwmodel.Unlock}}
	res = rp.Advance(lines, s2, 3000)
	var stall1 float64
	for _, x := range res.Served[1] {
		stall1 = float64(x.StallPS) / 1000
		break
	}
	// CPU 0 releases at 1500 plus its lock's stall, invalidating CPU 1's
	// spinning copy; CPU 1 then reads the line from CPU 0 and takes it
	// (spinnerRead).
	release := 1500 + (lockAt - 990)
	want := release - 1100 + 3*m.TransferNS(1, 0, 0)
	if !near(stall1, want) {
		t.Errorf("CPU 1's lock stalls %.1f ns, want %.1f (the release at %.1f, then three transactions)", stall1, want, release)
	}
	if res.Lines[0].LockWaits != 1 {
		t.Errorf("lock waits %d, want 1", res.Lines[0].LockWaits)
	}
}

// TestReplayWaitAccrues: a CPU still waiting on a saturated line at a
// barrier is charged its wait so far at that barrier (it does not run on),
// and the rest when it is served; the two add up to its whole stall.
func TestReplayWaitAccrues(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	streams := make([][]Req, m.NumCPUs())
	for c := 0; c < 56; c++ {
		streams[c] = []Req{{T: 100, Op: hwmodel.RMW, Tag: int32(c)}}
	}
	whole := Replay(m, []*hwmodel.Line{m.NewLine(0)}, streams)
	rp := NewReplayer(m)
	lines := []*hwmodel.Line{m.NewLine(0)}
	first := rp.Advance(lines, streams, 1000)
	last := streams[55]
	_ = last
	// The last CPU served waits 55 RMWs of ~60 ns: past the barrier.
	var partial int64
	for _, x := range first.Served[55] {
		if !x.Partial {
			t.Fatalf("CPU 55 served before the barrier at 1000 ns: %+v", x)
		}
		partial += x.StallPS
	}
	if partial != (1000-100)*1000 {
		t.Errorf("CPU 55 accrued %d ps at the barrier, want the wait so far, %d", partial, (1000-100)*1000)
	}
	rest := rp.Advance(lines, make([][]Req, m.NumCPUs()), math.MaxInt64)
	var all int64 = partial
	for _, x := range rest.Served[55] {
		all += x.StallPS
	}
	if got, want := float64(all)/1000, whole.Stall[55][0]; !near(got, want) {
		t.Errorf("CPU 55's stall cut at the barrier adds up to %.3f ns, whole %.3f", got, want)
	}
}
