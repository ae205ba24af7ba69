package bench

import (
	"testing"
	"time"

	"github.com/rqemu/rqemu/emu"
)

// benchRun runs a workload b.N times and reports the engine's speed:
// events handled per host second and virtual µs per host second.
func benchRun(b *testing.B, topo, driver, name string, args ...string) {
	m := machine(b, topo)
	f, _, err := emu.ParseFeatures("v6.6-eevdf")
	if err != nil {
		b.Fatal(err)
	}
	var events, virt int64
	var host time.Duration
	b.ReportAllocs()
	for b.Loop() {
		w, err := build(m, name, args...)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		res, err := Execute(w, RunConfig{Machine: m, Features: f, Seed: 1, Driver: driver})
		if err != nil {
			b.Fatal(err)
		}
		host += time.Since(t0)
		events += res.Sim.EventsHandled()
		virt += res.Sim.Now()
	}
	b.ReportMetric(float64(events)/host.Seconds(), "events/s")
	b.ReportMetric(float64(virt)/1e3/host.Seconds(), "virtual-µs/s")
}

// BenchmarkPipe is perf bench sched pipe on the 8-CPU HiKey: the engine's
// single-pair fast path.
func BenchmarkPipe(b *testing.B) {
	for _, d := range []string{"serial", "parallel"} {
		b.Run(d, func(b *testing.B) { benchRun(b, "hikey-8", d, "pipe", "-l", "20000") })
	}
}
