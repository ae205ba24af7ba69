package hwmodel

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestReplayAlternating: two CPUs alternating RMWs on one line pay one
// transfer each at the class latency (after the first fill).
func TestReplayAlternating(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	for _, pair := range [][2]int{{0, 1}, {0, 112}, {0, 56}} {
		a, b := pair[0], pair[1]
		line := m.NewLine(0)
		m.Access(line, a, RMW) // a holds it
		streams := make([][]Req, m.NumCPUs())
		for i := int64(0); i < 10; i++ {
			streams[b] = append(streams[b], Req{T: 1000 * (2*i + 1), Op: RMW})
			streams[a] = append(streams[a], Req{T: 1000 * (2*i + 2), Op: RMW})
		}
		res := m.Replay([]*Line{line}, streams)
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
	m.Access(line, 112, RMW) // CPU 112 (core 0's sibling) holds it, not taking part
	streams := make([][]Req, m.NumCPUs())
	for _, c := range cpus {
		streams[c] = []Req{{T: 5000, Op: RMW}}
	}
	res := m.Replay([]*Line{line}, streams)
	// Served in CPU order; the k-th waits for the k earlier RMWs (a
	// transfer plus the RMW each), then pays its own transfer.
	wait := 0.0
	prev := 112
	for k, c := range cpus {
		x := m.TransferNS(c, prev, 0)
		want := wait + x
		if !near(res.Stall[c][0], want) {
			t.Fatalf("%d-th CPU %d stalls %.3f, want %.3f", k, c, res.Stall[c][0], want)
		}
		wait += x + m.Lat.RMWLocal
		prev = c
	}
	last := res.Stall[cpus[99]][0]
	if last < 99*m.Lat.Transfer[ClassLLC] {
		t.Errorf("last waits %.1f ns, less than 99 transfers", last)
	}
}

// TestReplayLockFIFO: a lock is handed over first come first served and
// waiters wait for the holder's critical section.
func TestReplayLockFIFO(t *testing.T) {
	m := mustLoad(t, "epyc-9654-2s")
	line := m.NewLine(0)
	streams := make([][]Req, m.NumCPUs())
	// CPU 0 holds the lock from t=0 to t=1000; CPUs 2 and 1 ask at 100
	// and 200 and hold it for 100 ns each.
	streams[0] = []Req{{T: 0, Op: Lock}, {T: 1000, Op: Unlock}}
	streams[2] = []Req{{T: 100, Op: Lock}, {T: 200, Op: Unlock}}
	streams[1] = []Req{{T: 200, Op: Lock}, {T: 300, Op: Unlock}}
	res := m.Replay([]*Line{line}, streams)
	// CPU 0's lock: a fill from DRAM.
	fill := m.Lat.MemLocal
	x := m.Lat.Transfer[ClassLLC]
	// CPU 0 releases at 1000 + fill (its own stall shifted the unlock).
	rel0 := 1000 + fill
	if !near(res.Stall[0][0], fill) {
		t.Errorf("CPU 0 lock stall %v, want the fill %v", res.Stall[0][0], fill)
	}
	// CPU 2 (asked first) gets the lock at rel0: the Unlock left the line
	// free at once (a hit), then the transfer from 0.
	got2 := 100 + res.Stall[2][0]
	if !near(got2, rel0+x) {
		t.Errorf("CPU 2 holds the lock at %v, want %v", got2, rel0+x)
	}
	// CPU 1 waits for CPU 2's 100 ns critical section.
	// 2 logged its unlock 100 ns after asking; its stall shifts it.
	rel2 := got2 + 100
	got1 := 200 + res.Stall[1][0]
	if !near(got1, rel2+x) {
		t.Errorf("CPU 1 holds the lock at %v, want %v (after CPU 2's release at %v)", got1, rel2+x, rel2)
	}
	if res.Lines[0].LockWaits != 2 {
		t.Errorf("lock waits %d, want 2", res.Lines[0].LockWaits)
	}
}

// TestReplayDeterministic: the same input gives the same output.
func TestReplayDeterministic(t *testing.T) {
	m := mustLoad(t, "epyc-9654-2s")
	mk := func() ([]*Line, [][]Req) {
		lines := []*Line{m.NewLine(0), m.NewLine(1), m.NewLine(0)}
		streams := make([][]Req, m.NumCPUs())
		seed := uint64(42)
		for c := 0; c < m.NumCPUs(); c += 7 {
			var tm int64
			for k := 0; k < 20; k++ {
				seed = seed*6364136223846793005 + 1442695040888963407
				tm += int64(seed>>60) * 3
				streams[c] = append(streams[c], Req{T: tm, Line: int32(seed >> 40 % 3), Op: Op(seed >> 50 % 3)})
			}
		}
		return lines, streams
	}
	l1, s1 := mk()
	l2, s2 := mk()
	r1, r2 := m.Replay(l1, s1), m.Replay(l2, s2)
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
		{"unbalanced unlock", [][]Req{{{T: 0, Op: Unlock}}}, "releases lock"},
		{"lock never released", [][]Req{{{T: 0, Op: Lock}}, {{T: 1, Op: Lock}}}, "never served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			m.Replay([]*Line{m.NewLine(0)}, tc.streams)
		})
	}
}
