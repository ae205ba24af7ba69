package weave

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestReplayHomeArbitration: writers on both sockets of spr-2s hammer one
// line homed at node 0. A miss is re-presented to the home every round
// trip, so the home's package, whose round trip is a mesh transfer, wins
// the free line more often than the other package, whose round trip
// crosses UPI: the remote writers get fewer RMWs done and spend more of
// their time stalled. This is the asymmetry Aaron Lu
// measured on tg->load_avg on SPR 2S ("[RFC PATCH] sched/fair: Make
// tg->load_avg per node", 2023-03-27: update_cfs_group + update_load_avg
// 17.85% of cycles on the remote node's CPUs, 8.48% on the home node's,
// 2.1x); a first-come-first-served home gives both sockets the same
// share (5135 and 5136 RMWs here).
func TestReplayHomeArbitration(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	line := m.NewLine(0)
	m.Access(line, 0, hwmodel.RMW)
	// 16 cores of each socket (no SMT siblings), each issuing an RMW 200
	// ns after its previous one completed, 400 times.
	var local, remote []int
	for c := 0; c < 16; c++ {
		local = append(local, c)
		remote = append(remote, 56+c)
	}
	// Each writes again 200 ns after its previous RMW completed, for
	// longer than the 1 ms replayed: every writer contends throughout.
	const rounds, gap, until = 20000, 200, 1_000_000
	streams := make([][]Req, m.NumCPUs())
	for _, c := range append(append([]int(nil), local...), remote...) {
		for k := 0; k < rounds; k++ {
			streams[c] = append(streams[c], Req{T: int64(k * gap), Op: hwmodel.RMW})
		}
	}
	rp := NewReplayer(m)
	res := rp.Advance([]*hwmodel.Line{line}, streams, until)
	// The share of its time a writer spends stalled, and its RMWs done.
	share := func(cpus []int) (stalled float64, done int) {
		for _, c := range cpus {
			for _, x := range res.Served[c] {
				stalled += float64(x.StallPS) / 1000
				if !x.Partial {
					done++
				}
			}
		}
		return stalled / float64(len(cpus)*until), done
	}
	ls, ld := share(local)
	rs, rd := share(remote)
	st := res.Lines[0]
	all := 0
	for _, n := range st.Transfers {
		all += n
	}
	cross := st.Transfers[hwmodel.ClassRemote]
	t.Logf("stalled: home socket %.1f%% of its time (%d RMWs), other socket %.1f%% (%d RMWs); %d of %d transfers cross the link",
		100*ls, ld, 100*rs, rd, cross, all)
	if rd*3 > ld*2 {
		t.Errorf("the other socket did %d RMWs, the home socket %d: want at most 2/3 as many", rd, ld)
	}
	// The line still serves one RMW at a time: what was served took at
	// least one transfer plus the RMW each.
	if min := float64(ld+rd) * (m.Lat.Transfer[hwmodel.ClassLLC] + m.Lat.RMWLocal); float64(until) < min {
		t.Errorf("served %d RMWs in %d ns, less than %.0f (one transfer + RMW each)", ld+rd, until, min)
	}
}
