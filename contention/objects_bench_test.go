package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"runtime"
	"sync"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// The object benchmarks run each shared object under 1..GOMAXPROCS
// goroutines, each pinned to its own allowed host CPU when the host allows
// (unpinned otherwise), in layout variants:
//
//	padded       each goroutine uses its own instance, host-padded, own modeled line
//	falseshared  each goroutine uses its own instance, all packed in one Pack:
//	             adjacent in host memory and on one modeled line
//	shared       all goroutines use one instance (true sharing: one tg->load_avg,
//	             one contended rq lock, one LLC's sd_llc_shared)
//
// (the wake list and cfs_rq->removed are written remotely by nature:
// goroutine i pushes to / adds to goroutine i+1's instance and drains /
// takes its own.)
//
// Each b.Loop iteration is one round in which every goroutine performs
// benchOpsPerRound operations back to back (enough that waking the pinned
// goroutines, several µs, stays under 1 ns per operation). Metrics:
//
//	ns/op       host ns per operation, as one goroutine sees it (the
//	            round's wall time over benchOpsPerRound); it includes
//	            logging the accesses (a few ns)
//	spr-ns/op   the same operations priced on spr-2s by the weave: the
//	epyc-ns/op  uncontended cost of their accesses plus the stall, per
//	            operation, for the first benchModeledOps operations of the
//	            last round's logs. Goroutine i is
//	            the i-th CPU of spreadCPUs (spread across sockets and
//	            LLCs); its virtual time advances by the uncontended cost
//	            of each operation plus 1 ns of L1-hit work.
//
// Run without -race. Skipped with fewer than 2 allowed host CPUs.
const benchOpsPerRound = 8192

// benchModeledOps is how many operations of the last round each goroutine
// has priced by the weave.
const benchModeledOps = 2048

// benchOp is one goroutine's operation k, logging into l at virtual time now.
type benchOp func(g int, l *weave.Log, now int64, k int)

type objBench struct {
	name     string
	variants []string
	setup    func(s *weave.Space, variant string, n int) benchOp
}

func objectBenches() []objBench {
	site := func(s *weave.Space) weave.Site { return s.Site("bench") }
	return []objBench{
		{"Counter.Add", []string{"padded", "falseshared", "shared"}, func(s *weave.Space, v string, n int) benchOp {
			cs := benchCounters(s, v, n)
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) { cs[g].Add(l, now, st, 1) }
		}},
		{"Counter.Load", []string{"padded", "falseshared", "shared"}, func(s *weave.Space, v string, n int) benchOp {
			cs := benchCounters(s, v, n)
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) { cs[g].Load(l, now, st) }
		}},
		{"SpinLock", []string{"padded", "falseshared", "shared"}, func(s *weave.Space, v string, n int) benchOp {
			ls := make([]*SpinLock, n)
			var p *Pack
			if v == "falseshared" {
				p = NewPack(s, "rq.locks", 0, n)
			}
			for i := range ls {
				switch {
				case v == "shared" && i > 0:
					ls[i] = ls[0]
				case p != nil:
					ls[i] = p.SpinLock(fmt.Sprintf("rq%d.lock", i))
				default:
					ls[i] = NewSpinLock(s, fmt.Sprintf("rq%d.lock", i), 0)
				}
			}
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) {
				ls[g].Lock(l, now, st)
				ls[g].Unlock(l, now, st)
			}
		}},
		{"WakeList.PushDrain", []string{"padded", "falseshared"}, func(s *weave.Space, v string, n int) benchOp {
			ws := make([]*WakeList, n)
			var p *Pack
			if v == "falseshared" {
				p = NewPack(s, "wakelists", 0, n)
			}
			for i := range ws {
				if p != nil {
					ws[i] = p.WakeList(fmt.Sprintf("cpu%d", i))
				} else {
					ws[i] = NewWakeList(s, fmt.Sprintf("cpu%d", i), 0)
				}
			}
			pools := make([][]WakeEntry, n)
			for i := range pools {
				pools[i] = make([]WakeEntry, 64)
			}
			bufs := make([][]*WakeEntry, n)
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) {
				e := &pools[g][k%len(pools[g])]
				if e.Queued() { // the neighbour has not drained it yet
					e = new(WakeEntry)
				}
				ws[(g+1)%n].Push(l, now, st, e)
				bufs[g] = ws[g].AppendDrain(bufs[g][:0], l, now, st)
			}
		}},
		{"UclampRQ.IncDec", []string{"padded", "falseshared"}, func(s *weave.Space, v string, n int) benchOp {
			us := make([]*UclampRQ, n)
			var p *Pack
			if v == "falseshared" {
				p = NewPack(s, "uclamps", 0, n)
			}
			for i := range us {
				if p != nil {
					us[i] = p.UclampRQ(fmt.Sprintf("rq%d.uclamp", i))
				} else {
					us[i] = NewUclampRQ(s, fmt.Sprintf("rq%d.uclamp", i), 0)
				}
			}
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) {
				us[g].IncTask(l, now, st, 0, SchedCapacityScale)
				us[g].DecTask(l, now, st, 0, SchedCapacityScale)
			}
		}},
		{"LLCShared.ReadWrite", []string{"padded", "falseshared", "shared"}, func(s *weave.Space, v string, n int) benchOp {
			cs := make([]*LLCShared, n)
			var p *Pack
			if v == "falseshared" {
				p = NewPack(s, "llcs", 0, n)
			}
			for i := range cs {
				switch {
				case v == "shared" && i > 0:
					cs[i] = cs[0]
				case p != nil:
					cs[i] = p.LLCShared(fmt.Sprintf("llc%d", i))
				default:
					cs[i] = NewLLCShared(s, fmt.Sprintf("llc%d", i), 0)
				}
			}
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) {
				cs[g].HasIdleCores(l, now, st)
				cs[g].SetHasIdleCores(l, now, st, k&1 == 0)
			}
		}},
		{"Removed.AddTake", []string{"padded", "falseshared"}, func(s *weave.Space, v string, n int) benchOp {
			rs := make([]*Removed, n)
			var p *Pack
			if v == "falseshared" {
				p = NewPack(s, "removed", 0, n)
			}
			for i := range rs {
				if p != nil {
					rs[i] = p.Removed(fmt.Sprintf("cfs%d.removed", i))
				} else {
					rs[i] = NewRemoved(s, fmt.Sprintf("cfs%d.removed", i), 0)
				}
			}
			st := site(s)
			return func(g int, l *weave.Log, now int64, k int) {
				rs[(g+1)%n].Add(l, now, st, 3, 2, 1)
				rs[g].Take(l, now, st)
			}
		}},
	}
}

func benchCounters(s *weave.Space, variant string, n int) []*Counter {
	cs := make([]*Counter, n)
	var p *Pack
	if variant == "falseshared" {
		p = NewPack(s, "tg.packed", 0, n)
	}
	for i := range cs {
		switch {
		case variant == "shared" && i > 0:
			cs[i] = cs[0]
		case p != nil:
			cs[i] = p.Counter(fmt.Sprintf("tg%d.load_avg", i))
		default:
			cs[i] = NewCounter(s, fmt.Sprintf("tg%d.load_avg", i), 0)
		}
	}
	return cs
}

// benchGoroutineCounts is 1, 2, 4, ... up to the usable host CPUs, and that
// maximum itself.
func benchGoroutineCounts(max int) []int {
	var ns []int
	for n := 1; n < max; n *= 2 {
		ns = append(ns, n)
	}
	return append(ns, max)
}

func BenchmarkObjects(b *testing.B) {
	allowed := benchCPUs(b)
	maxG := min(runtime.GOMAXPROCS(0), len(allowed))
	if maxG < 2 {
		b.Skipf("GOMAXPROCS %d: need 2", maxG)
	}
	targets := []*hwmodel.Machine{machine(b, "spr-2s"), machine(b, "epyc-9654-2s")}
	for _, ob := range objectBenches() {
		for _, v := range ob.variants {
			for _, n := range benchGoroutineCounts(maxG) {
				b.Run(fmt.Sprintf("%s/%s/g=%d", ob.name, v, n), func(b *testing.B) {
					runObjectBench(b, targets, ob, v, n, allowed)
				})
			}
		}
	}
}

func runObjectBench(b *testing.B, targets []*hwmodel.Machine, ob objBench, variant string, n int, allowed []int) {
	s := weave.NewSpace(targets[0])
	op := ob.setup(s, variant, n)
	hostCPUs := PlanPinning(allowed[:n], allowed)
	logs := make([]*weave.Log, n)
	start := make([]chan bool, n)
	var wg, exited sync.WaitGroup
	for g := range n {
		logs[g] = weave.NewLog(g)
		start[g] = make(chan bool, 1)
		exited.Add(1)
		go func() {
			defer exited.Done()
			_ = PinCurrentThread(hostCPUs[g]) // unpinned if not allowed; the goroutine exits locked
			l := logs[g]
			k := 0
			for <-start[g] {
				l.Reset()
				for range benchOpsPerRound {
					op(g, l, int64(k), k)
					k++
				}
				wg.Done()
			}
		}()
	}
	rounds := 0
	for b.Loop() {
		wg.Add(n)
		for g := range n {
			start[g] <- true
		}
		wg.Wait()
		rounds++
	}
	elapsed := b.Elapsed()
	for g := range n {
		start[g] <- false
	}
	exited.Wait()
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(rounds*benchOpsPerRound), "ns/op")
	for _, m := range targets {
		b.ReportMetric(modeledNSPerOp(s, m, logs), m.Name+"-ns/op")
	}
}

// modeledNSPerOp relogs the logs (one round of operations, each logged at
// its operation index) for target m: goroutine g becomes the g-th CPU of
// spreadCPUs(m), and operation k starts when operation k-1's accesses have
// retired uncontended plus 1 ns. It weaves them in a fresh clone of s for m
// and returns the mean modeled ns per operation: uncontended cost + stall.
func modeledNSPerOp(s *weave.Space, m *hwmodel.Machine, logs []*weave.Log) float64 {
	c := s.CloneFor(m)
	cpus := spreadCPUs(m)
	relogged := make([]*weave.Log, len(logs))
	var charged float64
	ops := 0
	for g, l := range logs {
		r := weave.NewLog(cpus[g])
		relogged[g] = r
		es := l.Entries()
		acc := 0.0
		for i, n := 0, 0; i < len(es) && n < benchModeledOps; n++ {
			j := i
			cost := 1.0
			for ; j < len(es) && es[j].T == es[i].T; j++ {
				r.Record(int64(acc), es[j].Line, es[j].Op, es[j].Site)
				cost += m.UncontendedNS(es[j].Op)
			}
			acc += cost
			charged += cost - 1
			ops++
			i = j
		}
	}
	if ops == 0 {
		return 0
	}
	res := c.Weave(relogged)
	return (charged + res.TotalNS) / float64(ops)
}

// BenchmarkLoadAvgScaling reports the tg->load_avg scaling table of
// TestLoadAvgScaling as metrics: the modeled stall per RMW (and per read)
// on spr-2s against the number of writing CPUs, back-to-back writers and
// at the UDP_RR base load. Each iteration runs the weave once.
func BenchmarkLoadAvgScaling(b *testing.B) {
	m := machine(b, "spr-2s")
	k, window := scalingParams()
	for _, n := range scalingNs {
		b.Run(fmt.Sprintf("saturation/N=%d", n), func(b *testing.B) {
			var r scalingRow
			for b.Loop() {
				r = loadAvgSaturation(m, n, k)
			}
			b.ReportMetric(r.StallPerRMW, "stall-ns/RMW")
			b.ReportMetric(r.AggNSPerRMW, "line-ns/RMW")
			b.ReportMetric(100*r.CPUFraction, "%cpu-lost")
		})
		b.Run(fmt.Sprintf("udp_rr/N=%d", n), func(b *testing.B) {
			var r scalingRow
			for b.Loop() {
				r = loadAvgUDPRR(m, n, window)
			}
			b.ReportMetric(r.StallPerRMW, "stall-ns/RMW")
			b.ReportMetric(r.StallPerRead, "stall-ns/read")
			b.ReportMetric(100*r.CPUFraction, "%cpu-lost")
		})
	}
}
