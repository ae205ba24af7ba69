package bench

import (
	"bytes"
	"testing"
	"time"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// benchRun runs a workload b.N times and reports the engine's speed:
// events handled per host second and virtual µs per host second.
func benchRun(b *testing.B, topo, driver, name string, args ...string) {
	benchOn(b, machine(b, topo), driver, name, args...)
}

// benchOn is benchRun on a machine already built; it also reports host
// ms per virtual ms.
func benchOn(b *testing.B, m *hwmodel.Machine, driver, name string, args ...string) {
	benchWarm(b, m, driver, 0, name, args...)
}

// benchWarm is benchOn that, for warm > 0 (virtual ns, a multiple of
// Chunk), also reports the host ms per virtual ms of the run after its
// first warm ns: the engine's speed at the load's steady state, without
// the start-up (every CPU forks its tasks, then newidle-balances at each
// idle entry until avg_idle, which starts at 2 * sysctl_sched_migration_cost,
// has decayed below the balance's cost: the first ~2 ms of a 224-CPU
// netperf, where the weave replays several times the accesses per virtual
// ms that it does later).
func benchWarm(b *testing.B, m *hwmodel.Machine, driver string, warm int64, name string, args ...string) {
	if warm%Chunk != 0 {
		// Progress fires at Chunk boundaries only: a warm-up between
		// two would time from the next one and divide by the wrong span.
		b.Fatalf("benchWarm: warm-up %d ns is not a multiple of Chunk (%d ns)", warm, Chunk)
	}
	f, _, err := emu.ParseFeatures("v6.6-eevdf")
	if err != nil {
		b.Fatal(err)
	}
	var events, virt, accesses, warmVirt int64
	var host, warmHost time.Duration
	b.ReportAllocs()
	for b.Loop() {
		w, err := build(m, name, args...)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		var tw time.Time
		cfg := RunConfig{Machine: m, Features: f, Seed: 1, Driver: driver}
		if warm > 0 {
			cfg.Progress = func(now, _ int64) {
				if now >= warm && tw.IsZero() {
					tw = time.Now()
				}
			}
		}
		res, err := Execute(w, cfg)
		if err != nil {
			b.Fatal(err)
		}
		host += time.Since(t0)
		events += res.Sim.EventsHandled()
		virt += res.Sim.Now()
		accesses += res.Sim.Space().Stats().Accesses
		if warm > 0 {
			if tw.IsZero() || res.Sim.Now() <= warm {
				b.Fatalf("%s ran %d ns of virtual time, not past its %d ns warm-up", name, res.Sim.Now(), warm)
			}
			warmHost += time.Since(tw)
			warmVirt += res.Sim.Now() - warm
		}
	}
	if warm > 0 {
		b.ReportMetric(float64(warmHost.Nanoseconds())/float64(warmVirt), "steady-host-ms/virtual-ms")
	}
	b.ReportMetric(float64(events)/host.Seconds(), "events/s")
	b.ReportMetric(float64(virt)/1e3/host.Seconds(), "virtual-µs/s")
	b.ReportMetric(float64(host.Nanoseconds())/float64(virt), "host-ms/virtual-ms")
	// The shared accesses the weave priced, per virtual ms and per host
	// µs of the run: the work the kernel model did, whatever the machine
	// size (BenchmarkScaling: a larger machine's scans read more lines).
	b.ReportMetric(float64(accesses)*1e6/float64(virt), "accesses/virtual-ms")
	b.ReportMetric(float64(host.Nanoseconds())/float64(max(accesses, 1)), "host-ns/access")
	b.ReportMetric(float64(accesses)/float64(max(events, 1)), "accesses/event")
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

// BenchmarkNetperfUDPRRSteady is BenchmarkNetperfUDPRR run for 6 ms, of
// which the last 4 are timed apart (steady-host-ms/virtual-ms): the speed
// a study at steady state sees, where the 2 ms run mostly times the
// start-up's newidle balancing (benchWarm).
func BenchmarkNetperfUDPRRSteady(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-2s/100%/"+d, func(b *testing.B) {
			benchWarm(b, machine(b, "spr-2s"), d, 2*Chunk, "netperf", "-t", "UDP_RR", "-nr", "100%", "-l", "0.006", "-cgroup", "docker")
		})
	}
}

// BenchmarkHackbench is the default `emu run`: hackbench -g 10 on spr-2s.
func BenchmarkHackbench(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-2s/g10/"+d, func(b *testing.B) { benchRun(b, "spr-2s", d, "hackbench") })
	}
}

// BenchmarkSysbench is sysbench --threads with as many threads as CPUs on
// spr-2s in the docker cgroup, for 2 ms (issue 41's third load, shorter).
func BenchmarkSysbench(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-2s/100%/"+d, func(b *testing.B) {
			benchRun(b, "spr-2s", d, "sysbench", "--threads", "100%", "--time", "0.002", "-cgroup", "docker")
		})
	}
}

// BenchmarkHackbenchEpyc is the L2 study's load: hackbench -g 32 -f 20 -T
// -p on the 384-CPU epyc-9654-2s in a depth-3 cgroup.
func BenchmarkHackbenchEpyc(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("epyc-9654-2s/g32/"+d, func(b *testing.B) {
			benchRun(b, "epyc-9654-2s", d, "hackbench", "-g", "32", "-f", "20", "-T", "-p", "-l", "10",
				"-cgroup", "system.slice/docker/c1")
		})
	}
}

// BenchmarkHackbenchSPR1s is the RUN_TO_PARITY load: hackbench -g 112 -f
// 20 -T on the 112-CPU spr-1s.
func BenchmarkHackbenchSPR1s(b *testing.B) {
	for _, d := range []string{"parallel", "serial"} {
		b.Run("spr-1s/g112/"+d, func(b *testing.B) {
			benchRun(b, "spr-1s", d, "hackbench", "-g", "112", "-f", "20", "-T", "-l", "2")
		})
	}
}

// BenchmarkScaling runs the same small load (netperf UDP_RR with 4 pairs,
// 10 ms) on machines of 8, 224 and 1,024 CPUs: the host time per virtual
// ms should follow the CPUs that have work and what they do (the
// accesses/virtual-ms metric: select_idle_cpu() and newidle balancing
// read more rq lines in a larger LLC), not the CPUs there are; the
// barrier visits only the CPUs with something to settle (emu/visit.go).
func BenchmarkScaling(b *testing.B) {
	for _, tc := range []struct {
		name string
		m    func(testing.TB) *hwmodel.Machine
	}{
		{"hikey-8", func(t testing.TB) *hwmodel.Machine { return machine(t, "hikey-8") }},
		{"spr-2s", func(t testing.TB) *hwmodel.Machine { return machine(t, "spr-2s") }},
		{"gen-1024", gen1024},
	} {
		b.Run(tc.name+"/4pairs", func(b *testing.B) {
			benchOn(b, tc.m(b), "serial", "netperf", "-t", "UDP_RR", "-nr", "4", "-l", "0.01")
		})
	}
}

// gen1024 is a generated 1,024-CPU machine: spr-2s's latencies and costs
// on 4 sockets of 128 cores x 2 threads, one LLC and one node per socket.
func gen1024(t testing.TB) *hwmodel.Machine {
	t.Helper()
	data, err := hwmodel.PresetSpec("spr-2s")
	if err != nil {
		t.Fatal(err)
	}
	s, err := hwmodel.DecodeSpec(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "gen-1024"
	s.Layout.Sockets, s.Layout.CoresPerLLC = 4, 128
	s.NUMADistance = [][]int{{10, 21, 21, 21}, {21, 10, 21, 21}, {21, 21, 10, 21}, {21, 21, 21, 10}}
	m, err := hwmodel.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if m.NumCPUs() != 1024 {
		t.Fatalf("gen-1024 has %d CPUs", m.NumCPUs())
	}
	return m
}
