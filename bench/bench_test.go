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

// BenchmarkNetperfUDPRR is the tgload-udprr load: netperf UDP_RR with as
// many client/server pairs as CPUs (448 tasks) on the 224-CPU spr-2s, in
// the docker cgroup, for 2 ms of virtual time per iteration.
func BenchmarkNetperfUDPRR(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-2s/100%/"+d, func(b *testing.B) {
			benchRun(b, "spr-2s", d, "netperf", "-t", "UDP_RR", "-nr", "100%", "-l", "0.002", "-cgroup", "docker")
		})
	}
}

// BenchmarkHackbench is the default `emu run`: hackbench -g 10 on spr-2s.
func BenchmarkHackbench(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-2s/g10/"+d, func(b *testing.B) { benchRun(b, "spr-2s", d, "hackbench") })
	}
}
