package weave

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// BenchmarkReplay times the replay's inner loop (Replayer.Advance) on
// spr-2s, every one of its 224 CPUs issuing 200 requests per call, and
// reports host ns per request. The cases split the cost of an event from
// that of a request: "hits" spaces each CPU's reads of its own line 5 ns
// apart, so each is an event of its own (an act popped from the event
// queue); "hits-same-instant" issues them at one instant, so each CPU's
// run is one act; "own-rmw" has every access served at once by a line the
// CPU owns (50 ns apart: past the RMW's own latency, as the Space issues
// a CPU's accesses); "shared-mix" makes every tenth access an RMW of a line two
// CPUs share, which queues, transfers and serves (a backlog may carry
// from one call to the next, as in the engine).
func BenchmarkReplay(b *testing.B) {
	own := func(c, _ int) (int32, hwmodel.Op) { return int32(c), hwmodel.Read }
	for _, tc := range []struct {
		name string
		gap  int64
		mix  func(c, i int) (int32, hwmodel.Op)
	}{
		{"hits", 5, own},
		{"hits-same-instant", 0, own},
		{"own-rmw", 50, func(c, _ int) (int32, hwmodel.Op) { return int32(c), hwmodel.RMW }},
		{"shared-mix", 5, func(c, i int) (int32, hwmodel.Op) {
			if i%10 == 0 {
				return int32(447 - (c+i)%224), hwmodel.RMW
			}
			return int32(c), hwmodel.Read
		}},
	} {
		b.Run(tc.name, func(b *testing.B) { benchReplay(b, tc.gap, tc.mix) })
	}
}

func benchReplay(b *testing.B, gap int64, mix func(c, i int) (int32, hwmodel.Op)) {
	const per = 200
	m := mustLoad(b, "spr-2s")
	n := m.NumCPUs()
	lines := make([]*hwmodel.Line, 2*n)
	for i := range lines {
		lines[i] = m.NewLine(0)
	}
	rp := NewReplayer(m)
	rp.KeepTotals()
	streams := make([][]Req, n)
	var t0 int64
	reqs := 0
	for b.Loop() {
		for c := range streams {
			s := streams[c][:0]
			for i := range per {
				li, op := mix(c, i)
				s = append(s, Req{T: t0 + int64(i)*gap + int64(c%5), Line: li, Op: op})
			}
			streams[c] = s
		}
		t0 += per*gap + 1000
		rp.Advance(lines, streams, t0)
		reqs += n * per
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(reqs), "ns/req")
}
