package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"slices"
	"testing"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
)

// Benchmark iterations are whole probes, so the default ns/op of
// BenchmarkPingPong and BenchmarkPipeRoundTrip is the cost of one probe
// call; the figures to read are the custom metrics. Run without -race.

// benchCPUs returns the allowed CPUs, skipping when fewer than 2.
func benchCPUs(b *testing.B) []int {
	b.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		b.Skipf("AllowedCPUs: %v", err)
	}
	if len(cpus) < 2 {
		b.Skipf("need at least 2 allowed CPUs, have %v", cpus)
	}
	return cpus
}

// benchPairs lists the CPU pairs to probe: every pair when at most 8 CPUs
// are allowed, otherwise the first allowed CPU against each other one.
func benchPairs(cpus []int) [][2]int {
	var pairs [][2]int
	for i := range cpus {
		for j := i + 1; j < len(cpus); j++ {
			if i == 0 || len(cpus) <= 8 {
				pairs = append(pairs, [2]int{cpus[i], cpus[j]})
			}
		}
	}
	return pairs
}

func median(v []float64) float64 { return summarize(v).median }

// BenchmarkPingPong reports the one-way cache-line transfer latency
// (median over iterations of each probe's median over batches) per pair,
// named by the pair's distance class on the detected host
// (BenchmarkPingPong/llc/cpu0-cpu1) and with the host preset's prediction.
func BenchmarkPingPong(b *testing.B) {
	host, err := hwmodel.DetectHost()
	if err != nil {
		b.Logf("host detection failed (%v); naming pairs without a class", err)
	}
	for _, p := range benchPairs(benchCPUs(b)) {
		class := "class?"
		if host != nil && p[0] < host.NumCPUs() && p[1] < host.NumCPUs() {
			class = host.Class(p[0], p[1]).String()
		}
		b.Run(fmt.Sprintf("%s/cpu%d-cpu%d", class, p[0], p[1]), func(b *testing.B) {

			var med, mins []float64
			for b.Loop() {
				r, err := PingPong(p[0], p[1], 20000)
				if err != nil {
					b.Fatal(err)
				}
				med = append(med, r.MedianNs)
				mins = append(mins, r.MinNs)
			}
			b.ReportMetric(median(med), "ns/one-way")
			b.ReportMetric(slices.Min(mins), "min-ns/one-way")
			if host != nil && class != "class?" {
				b.ReportMetric(weave.PredictPingPong(host, p[0], p[1]), "predicted-ns/one-way")
			}
		})
	}
}

// BenchmarkHammer reports aggregate ns/op and Mops/s of atomic adds by
// 1..len(allowed) writers pinned to distinct CPUs, and by 2× as many
// (oversubscribed: two writers per CPU, which measures time-slicing), on one
// shared line or on private padded lines.
func BenchmarkHammer(b *testing.B) {
	cpus, err := AllowedCPUs()
	if err != nil || len(cpus) == 0 {
		b.Skipf("AllowedCPUs: %v %v", cpus, err)
	}
	counts := make([]int, 0, len(cpus)+1)
	for n := 1; n <= len(cpus); n++ {
		counts = append(counts, n)
	}
	counts = append(counts, 2*len(cpus))
	for _, n := range counts {
		slots := make([]int, n)
		for i := range slots {
			slots[i] = i
		}
		plan := PlanPinning(slots, cpus)
		for _, shared := range []bool{true, false} {
			mode := "padded"
			if shared {
				mode = "shared"
			}
			b.Run(fmt.Sprintf("writers=%d/%s", n, mode), func(b *testing.B) {
				var ns, mops []float64
				for b.Loop() {
					r, err := Hammer(plan, shared, 20*time.Millisecond)
					if err != nil {
						b.Fatal(err)
					}
					ns = append(ns, r.NsPerOp)
					mops = append(mops, r.MopsPerSec)
				}
				b.ReportMetric(median(ns), "ns/op")
				b.ReportMetric(median(mops), "Mops/s")
			})
		}
	}
}

// BenchmarkPipeRoundTrip reports the pipe wakeup round trip between the
// first two allowed CPUs, as perf bench sched pipe does.
func BenchmarkPipeRoundTrip(b *testing.B) {
	cpus := benchCPUs(b)
	b.Run(fmt.Sprintf("cpu%d-cpu%d", cpus[0], cpus[1]), func(b *testing.B) {
		var us []float64
		for b.Loop() {
			r, err := PipeRoundTrip(cpus[0], cpus[1], 200)
			if err != nil {
				b.Fatal(err)
			}
			us = append(us, r.UsecsPerOp)
		}
		m := median(us)
		b.ReportMetric(m, "us/roundtrip")
		b.ReportMetric(1e6/m, "roundtrips/s")
	})
}
