package weave

import "github.com/rqemu/rqemu/hwmodel"

// PredictPingPong is the model's one-way latency of a CAS ping-pong
// between CPUs a and b with the line homed at a's node: each RMW finds
// the line in the other CPU's cache.
func PredictPingPong(m *hwmodel.Machine, a, b int) float64 {
	if a == b {
		return 0
	}
	lines := []*hwmodel.Line{m.NewLine(m.CPUs[a].Node)}
	const rounds = 64
	// Each side's RMW depends on the other's, so the streams are
	// interleaved in time: a at 2i, b at 2i+1, in units large enough that
	// no request waits for the line.
	gap := int64(10 * (m.Lat.Transfer[hwmodel.ClassRemote] + m.Lat.HomeRemote + m.Lat.MemRemote + m.Lat.MemLocal + 100))
	streams := make([][]Req, len(m.CPUs))
	for i := int64(0); i < rounds; i++ {
		streams[a] = append(streams[a], Req{T: 2 * i * gap, Op: hwmodel.RMW})
		streams[b] = append(streams[b], Req{T: (2*i + 1) * gap, Op: hwmodel.RMW})
	}
	res := Replay(m, lines, streams)
	// Skip the first fill; every later RMW is one transfer.
	total := 0.0
	for i := 1; i < rounds; i++ {
		total += res.Stall[a][i] + res.Stall[b][i]
	}
	return total / float64(2*(rounds-1))
}

// PredictHammer is the model's aggregate ns per atomic add when writers
// on the given CPUs each issue back-to-back atomic adds, on one shared
// line or each on its own padded line: the replay's makespan over the
// number of adds. Writers listed on the same CPU time-slice it, so they
// form one sequential stream.
func PredictHammer(m *hwmodel.Machine, cpus []int, shared bool) float64 {
	const perWriter = 512
	rmw := m.Lat.RMWLocal
	streams := make([][]Req, len(m.CPUs))
	var lines []*hwmodel.Line
	lineOf := map[int]int32{}
	for _, c := range cpus {
		li, ok := lineOf[c]
		if !ok {
			if shared && len(lines) > 0 {
				li = 0
			} else {
				li = int32(len(lines))
				l := m.NewLine(m.CPUs[c].Node)
				m.Access(l, c, hwmodel.RMW) // warm: the first writer has it
				lines = append(lines, l)
			}
			lineOf[c] = li
		}
		for k := 0; k < perWriter; k++ {
			// The CPU's own timeline: one RMW every rmw ns. Virtual
			// time is integer ns; the rounding only shifts when a
			// request queues behind the CPU's own previous one.
			n := len(streams[c])
			streams[c] = append(streams[c], Req{T: int64(float64(n) * rmw), Line: li, Op: hwmodel.RMW})
		}
	}
	res := Replay(m, lines, streams)
	makespan := 0.0
	for c, s := range streams {
		if len(s) > 0 {
			makespan = max(makespan, float64(s[len(s)-1].T)+res.CPUStall[c]+rmw)
		}
	}
	return makespan / float64(len(cpus)*perWriter)
}
