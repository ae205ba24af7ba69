package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// runGoroutines runs f(0..n-1) on n goroutines and waits for them.
func runGoroutines(n int, f func(g int)) {
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() { f(g) })
	}
	wg.Wait()
}

// TestCounterConcurrent: goroutines hammering one Counter lose no update:
// the final value is the sum of the deltas they added (kept by each
// goroutine), and every access was logged and weaves.
func TestCounterConcurrent(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	c := NewCounter(s, "tg.load_avg", 0)
	add, read := s.Site("update_tg_load_avg"), s.Site("calc_group_shares")
	const goroutines = 8
	iters := 4000
	if testing.Short() {
		iters = 1000
	}
	cpus := spreadCPUs(m)[:goroutines]
	logs := make([]*weave.Log, goroutines)
	deltas := make([][]int64, goroutines)
	runGoroutines(goroutines, func(g int) {
		l := s.NewLog(cpus[g])
		logs[g] = l
		rng := rand.New(rand.NewPCG(uint64(g), 1))
		for k := range iters {
			d := rng.Int64N(2001) - 1000
			deltas[g] = append(deltas[g], d)
			c.Add(l, int64(k)*20, add, d)
			c.Load(l, int64(k)*20+10, read)
		}
	})
	var want int64
	for _, ds := range deltas {
		for _, d := range ds {
			want += d
		}
	}
	if got := c.Value(); got != want {
		t.Errorf("counter %d, want the sum of the deltas %d", got, want)
	}
	for g, l := range logs {
		if l.Len() != 2*iters {
			t.Errorf("goroutine %d logged %d accesses, want %d", g, l.Len(), 2*iters)
		}
	}
	res := s.Weave(logs)
	st := s.Stats()
	if res.Accesses != 2*iters*goroutines || st.Lines[c.Line()].Ops[hwmodel.RMW] != int64(iters*goroutines) ||
		st.Sites[read].Ops[hwmodel.Read] != int64(iters*goroutines) {
		t.Errorf("weave counted %d accesses, %d RMWs", res.Accesses, st.Lines[c.Line()].Ops[hwmodel.RMW])
	}
}

// scalingRow is one row of the tg->load_avg scaling table.
type scalingRow struct {
	N              int
	RMWs, Reads    int64
	StallPerRMW    float64 // mean stall of one RMW, ns
	StallPerRead   float64 // mean stall of one read, ns
	ModeledPerRMW  float64 // uncontended RMW + mean stall, ns
	AggNSPerRMW    float64 // saturation: the line's makespan per RMW, ns
	CPUFraction    float64 // mean over the N CPUs of stall / (own time + stall)
	TransfersPerUS float64 // line transfers per µs of the window
}

// loadAvgSaturation is regime (a): N CPUs from spreadCPUs doing k
// back-to-back atomic adds each on one tg->load_avg homed at node 0. A
// CPU's own timeline issues one add every ceil(RMWLocal) ns (whole ns:
// 7 ns on spr-2s); the weave adds the waiting and the transfers.
func loadAvgSaturation(m *hwmodel.Machine, n, k int) scalingRow {
	s := weave.NewSpace(m)
	c := NewCounter(s, "tg.load_avg", 0)
	site := s.Site("update_tg_load_avg")
	cpus := spreadCPUs(m)[:n]
	// Warm: the first CPU owns the line, so no fill is priced below.
	w := s.NewLog(cpus[0])
	c.Add(w, 0, site, 1)
	s.Weave([]*weave.Log{w})
	period := int64(math.Ceil(m.Lat.RMWLocal))
	const start = 1000
	logs := make([]*weave.Log, n)
	for i, cpu := range cpus {
		logs[i] = s.NewLog(cpu)
		for j := range int64(k) {
			c.Add(logs[i], start+j*period, site, 1)
		}
	}
	res := s.Weave(logs)
	last := start + int64(k-1)*period
	makespan, frac := 0.0, 0.0
	for _, cpu := range cpus {
		makespan = max(makespan, float64(last-start)+res.ExactNS[cpu]+m.Lat.RMWLocal)
		frac += res.ExactNS[cpu] / (float64(int64(k)*period) + res.ExactNS[cpu])
	}
	ops := int64(n * k)
	tr := int64(0)
	for _, x := range s.Stats().Lines[c.Line()].Transfers {
		tr += x
	}
	return scalingRow{N: n, RMWs: ops, StallPerRMW: res.TotalNS / float64(ops),
		ModeledPerRMW: m.Lat.RMWLocal + res.TotalNS/float64(ops), AggNSPerRMW: makespan / float64(ops),
		CPUFraction: frac / float64(n), TransfersPerUS: float64(tr) / (makespan / 1000)}
}

// Regime (b): every CPU runs at its share of Aaron Lu's netperf UDP_RR base
// load on SPR 2S (224 CPUs, before the v6.7 ratelimit; hardware.md C4,
// kernel-mechanisms.md 4.5-4.6): 21 M wakeups and 14 M migrations per 5 s,
// i.e. 4.2 M wakeups/s and 2.8 M migrations/s machine-wide.
//
//	writes (atomic_long_add in update_tg_load_avg): up to 2 per wakeup
//	  migration (attach on the destination + the removed-load drain on the
//	  source): 2 x 2.8 M/s = 5.6 M/s machine-wide = 25,000/s per CPU,
//	  one every 40 us;
//	reads (atomic_long_read in calc_group_shares, d = 1 cgroup level): one
//	  per enqueue and one per dequeue, and every wakeup is an enqueue after
//	  a dequeue (sleep): 2 x 4.2 M/s = 8.4 M/s = 37,500/s per CPU, one
//	  every 26.7 us.
//
// Each CPU issues these at those rates (Poisson, seeded per CPU) whatever
// N, so at N = 224 the line sees the full 5.6 M RMW/s + 8.4 M reads/s;
// nearly every read finds the line invalidated by a write since that CPU's
// last read, so about 14 M line transfers/s are offered. At ~55 ns per
// same-socket and ~122 ns per cross-socket transfer (plus the RMW) one line
// can serve only about 10 M/s, so the base load saturates it: that is the
// C4 sanity check. The weave's closed loop (a stalled CPU issues its next
// access later) settles where the line is busy all the time; the mean stall
// per access and the fraction of a CPU's time lost come from the replay.
const (
	udpRRWritesPerCPUPerS = 2 * 2.8e6 / 224
	udpRRReadsPerCPUPerS  = 2 * 4.2e6 / 224
)

func loadAvgUDPRR(m *hwmodel.Machine, n int, windowNS int64) scalingRow {
	s := weave.NewSpace(m)
	c := NewCounter(s, "tg.load_avg", 0)
	write, read := s.Site("update_tg_load_avg"), s.Site("calc_group_shares")
	cpus := spreadCPUs(m)[:n]
	warm := s.NewLog(cpus[0]) // the first CPU owns the line: no fill priced below
	c.Add(warm, 0, write, 1)
	s.Weave([]*weave.Log{warm})
	rate := (udpRRWritesPerCPUPerS + udpRRReadsPerCPUPerS) / 1e9 // per ns
	pWrite := udpRRWritesPerCPUPerS / (udpRRWritesPerCPUPerS + udpRRReadsPerCPUPerS)
	logs := make([]*weave.Log, n)
	var writes, reads int64
	for i, cpu := range cpus {
		l := s.NewLog(cpu)
		logs[i] = l
		rng := rand.New(rand.NewPCG(uint64(cpu), 0x10ad))
		for t := 1 + int64(rng.ExpFloat64()/rate); t < windowNS; t += int64(rng.ExpFloat64()/rate) + 1 {
			if rng.Float64() < pWrite {
				c.Add(l, t, write, 1)
				writes++
			} else {
				c.Load(l, t, read)
				reads++
			}
		}
	}
	res := s.Weave(logs)
	var wNS, rNS, frac float64
	for _, cpu := range cpus {
		wNS += res.SiteNS(cpu, write)
		rNS += res.SiteNS(cpu, read)
		frac += res.ExactNS[cpu] / (float64(windowNS) + res.ExactNS[cpu])
	}
	tr := int64(0)
	for _, x := range s.Stats().Lines[c.Line()].Transfers {
		tr += x
	}
	return scalingRow{N: n, RMWs: writes, Reads: reads, StallPerRMW: wNS / float64(max(writes, 1)),
		StallPerRead: rNS / float64(max(reads, 1)), ModeledPerRMW: m.Lat.RMWLocal + wNS/float64(max(writes, 1)),
		CPUFraction: frac / float64(n), TransfersPerUS: float64(tr) / (float64(windowNS) / 1000)}
}

var scalingNs = []int{1, 2, 8, 56, 112, 224}

func scalingParams() (k int, window int64) {
	if testing.Short() {
		return 64, 400_000
	}
	return 256, 2_000_000
}

// TestLoadAvgScaling prints the modeled cost of a tg->load_avg RMW on
// spr-2s against the number of writing CPUs, in the two regimes (see
// loadAvgSaturation and the UDP_RR arithmetic above), and checks the
// shapes: cost grows with N, one writer pays nothing, and under the UDP_RR
// base load the cost at 224 CPUs is a large fraction of CPU time.
func TestLoadAvgScaling(t *testing.T) {
	m := machine(t, "spr-2s")
	k, window := scalingParams()
	var b strings.Builder
	fmt.Fprintf(&b, "tg->load_avg on %s, one line homed on node 0, CPUs spread over both sockets\n", m.Name)
	fmt.Fprintf(&b, "(a) back-to-back writers, %d atomic adds each\n", k)
	fmt.Fprintf(&b, "%5s %12s %14s %14s %12s %10s\n", "N", "stall/RMW", "modeled/RMW", "line ns/RMW", "transfers/us", "CPU lost")
	var sat []scalingRow
	for _, n := range scalingNs {
		r := loadAvgSaturation(m, n, k)
		sat = append(sat, r)
		fmt.Fprintf(&b, "%5d %12.1f %14.1f %14.1f %12.2f %9.1f%%\n", r.N, r.StallPerRMW, r.ModeledPerRMW, r.AggNSPerRMW, r.TransfersPerUS, 100*r.CPUFraction)
	}
	fmt.Fprintf(&b, "(b) netperf UDP_RR base load per CPU: %.0f RMW/s + %.0f reads/s, %.1f ms window\n",
		udpRRWritesPerCPUPerS, udpRRReadsPerCPUPerS, float64(window)/1e6)
	fmt.Fprintf(&b, "%5s %9s %9s %12s %12s %12s %10s\n", "N", "RMWs", "reads", "stall/RMW", "stall/read", "transfers/us", "CPU lost")
	var udp []scalingRow
	for _, n := range scalingNs {
		r := loadAvgUDPRR(m, n, window)
		udp = append(udp, r)
		fmt.Fprintf(&b, "%5d %9d %9d %12.1f %12.1f %12.2f %9.2f%%\n", r.N, r.RMWs, r.Reads, r.StallPerRMW, r.StallPerRead, r.TransfersPerUS, 100*r.CPUFraction)
	}
	t.Logf("\n%s", b.String())

	if sat[0].StallPerRMW > 1 {
		t.Errorf("one writer stalls %.1f ns per RMW, want ~0", sat[0].StallPerRMW)
	}
	for i := 1; i < len(sat); i++ {
		if sat[i].StallPerRMW <= sat[i-1].StallPerRMW {
			t.Errorf("saturation: stall per RMW does not grow from N=%d (%.1f) to N=%d (%.1f)", sat[i-1].N, sat[i-1].StallPerRMW, sat[i].N, sat[i].StallPerRMW)
		}
	}
	// N back-to-back writers: each RMW waits for about the other N-1.
	last := sat[len(sat)-1]
	if last.StallPerRMW < 100*m.Lat.Transfer[hwmodel.ClassLLC]/float64(m.Lat.Burst) {
		t.Errorf("224 back-to-back writers stall only %.1f ns per RMW", last.StallPerRMW)
	}
	if udp[0].CPUFraction > 0.001 {
		t.Errorf("UDP_RR with one CPU loses %.2f%% of its time", 100*udp[0].CPUFraction)
	}
	if u := udp[len(udp)-1]; u.CPUFraction < 0.05 || u.StallPerRMW < m.Lat.Transfer[hwmodel.ClassRemote] {
		t.Errorf("UDP_RR at 224 CPUs: %.1f ns per RMW, %.1f%% of CPU time; want a contended line", u.StallPerRMW, 100*u.CPUFraction)
	}
}
