package emu

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// mixedWorkload spreads a wake/sleep mix over the machine: ping-pong
// pairs within and across LLCs and sockets, timed sleepers and hogs, half
// of it in a task group, and two tasks hopping CPUs. Scaled to the machine so every preset gets load
// everywhere but runs in well under a second.
func mixedWorkload(tb testing.TB, s *Sim) {
	n := s.m.NumCPUs()
	g, err := s.NewGroup("docker", nil, 100)
	if err != nil {
		tb.Fatal(err)
	}
	pairs := max(2, n/8)
	for i := 0; i < pairs; i++ {
		a := (i * 7) % n
		b := (a + n/2 + i) % n
		var grp *TaskGroup
		if i%2 == 0 {
			grp = g
		}
		crossPingPong(tb, s, a, b, int64(3_000+i%5*1_000), grp)
	}
	for i := 0; i < max(2, n/16); i++ {
		spawn(tb, s, TaskSpec{Comm: "sleeper", CPU: (i * 5) % n, Group: g, Prog: sleeper(int64(200_000+i*10_000), int64(300_000+i*7_000))})
		spawn(tb, s, TaskSpec{Comm: "hog", CPU: (i*11 + 3) % n, Nice: i % 3, Prog: Hog()})
	}
	// Two hoppers: sched_setaffinity() onto another CPU after each
	// burst, moved by the stopper (affinity.go).
	for i := range 2 {
		b, ran := int64(150_000+i*50_000), false
		mustTask(tb, s, TaskSpec{Comm: "hopper", CPU: (i*13 + 1) % n, Prog: ProgramFunc(func(p *Task) Action {
			if !ran {
				ran = true
				return Run(b)
			}
			ran = false
			return SetAffinity((p.CPU() + n/3 + 1) % n)
		})})
	}
}

func runDriver(tb testing.TB, m *hwmodel.Machine, driver string, seed uint64, dur int64) []byte {
	return runDriverKernel(tb, m, "v6.6-eevdf", driver, seed, dur)
}

// runDriverKernel is runDriver under a feature set that may carry
// tunables (emu.ParseKernel).
func runDriverKernel(tb testing.TB, m *hwmodel.Machine, kernel, driver string, seed uint64, dur int64) []byte {
	return runWorkers(tb, m, kernel, Config{Driver: driver, Seed: seed}, dur)
}

// runWorkers is runDriverKernel with the driver's settings (Driver, Seed,
// Workers, Pin) from cfg.
func runWorkers(tb testing.TB, m *hwmodel.Machine, kernel string, cfg Config, dur int64) []byte {
	f, set, _, err := ParseKernel(kernel)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(Config{Machine: m, Features: f, Sched: set, Seed: cfg.Seed, Check: true, Driver: cfg.Driver, Workers: cfg.Workers, Pin: cfg.Pin})
	if err != nil {
		tb.Fatal(err)
	}
	s.EnableCallChains()
	mixedWorkload(tb, s)
	s.Run(dur)
	var b bytes.Buffer
	fmt.Fprintf(&b, "epochs %d\n", s.Epochs)
	s.WriteSchedstat(&b)
	s.WriteTaskStats(&b)
	s.WriteSchedDebug(&b)
	s.WriteProfile(&b, nil, "all CPUs")
	return b.Bytes()
}

// TestDriversAgree: for each preset and three seeds, the serial and the
// parallel driver produce byte-identical schedstat, task statistics,
// sched_debug and profile on a mixed wake/sleep workload, and two parallel runs agree;
// then, one seed each, the same under non-default tunables (a shorter
// slice, migration cost and nr_migrate, a 2 ms tg->load_avg ratelimit,
// and a system uclamp default, which turns uclamp on).
func TestDriversAgree(t *testing.T) {
	// Every preset and the host; under the race detector (CI) one seed of
	// 1 ms each, which is what the detector needs to see the drivers'
	// goroutines share the objects; otherwise three seeds of 5 ms.
	dur, seeds := 5*ms, uint64(3)
	if testing.Short() || raceEnabled {
		dur, seeds = ms, 1
	}
	for _, topo := range hwmodel.PresetNames() { // host last
		m := machine(t, topo)
		var seed1 []byte // seed 1's output, serial
		for seed := uint64(1); seed <= seeds; seed++ {
			serial := runDriver(t, m, "serial", seed, dur)
			if seed == 1 {
				seed1 = serial
			}
			par1 := runDriver(t, m, "parallel", seed, dur)
			par2 := runDriver(t, m, "parallel", seed, dur)
			if !bytes.Equal(serial, par1) {
				t.Errorf("%s seed %d: serial and parallel differ:\n%s", topo, seed, firstDiff(serial, par1))
			}
			if !bytes.Equal(par1, par2) {
				t.Errorf("%s seed %d: two parallel runs differ:\n%s", topo, seed, firstDiff(par1, par2))
			}
		}
		if raceEnabled && topo != "hikey-8" && topo != "spr-2s" {
			// Under the race detector the other kernels run on a small
			// and a big preset: the detector needs the goroutines, not
			// every machine; scripts/test runs this test again without
			// it, every kernel on every preset.
			continue
		}
		const tuned = "v6.7-eevdf;sched:base_slice_ns=1200000,migration_cost_ns=150000,nr_migrate=4," +
			"tg_load_avg_ratelimit_ns=2000000,sched_util_clamp_min=800,sched_util_clamp_max=900"
		serial := runDriverKernel(t, m, tuned, "serial", 1, dur)
		par := runDriverKernel(t, m, tuned, "parallel", 1, dur)
		if !bytes.Equal(serial, par) {
			t.Errorf("%s with tunables: serial and parallel differ:\n%s", topo, firstDiff(serial, par))
		}
		if bytes.Equal(seed1, serial) {
			t.Errorf("%s: the tunables changed nothing", topo)
		}
		// SIS_PROP's per-CPU wake_avg_idle and avg_scan_cost, and the
		// pre-v6.0 NUMA allowance.
		serial = runDriverKernel(t, m, "v5.19-cfs", "serial", 1, dur)
		par = runDriverKernel(t, m, "v5.19-cfs", "parallel", 1, dur)
		if !bytes.Equal(serial, par) {
			t.Errorf("%s v5.19-cfs: serial and parallel differ:\n%s", topo, firstDiff(serial, par))
		}
		// The current-kernel profiles: delayed dequeue, its
		// ttwu_runnable() wakeups at barriers, PREEMPT_SHORT.
		for _, k := range []string{"v6.11-eevdf", "v6.12-eevdf"} {
			serial := runDriverKernel(t, m, k, "serial", 1, dur)
			par := runDriverKernel(t, m, k, "parallel", 1, dur)
			if !bytes.Equal(serial, par) {
				t.Errorf("%s %s: serial and parallel differ:\n%s", topo, k, firstDiff(serial, par))
			}
			if bytes.Equal(seed1, serial) {
				t.Errorf("%s: %s gave v6.6-eevdf's bytes", topo, k)
			}
		}
	}
}

// TestDriverWorkersAgree: the parallel driver gives the serial driver's
// bytes whatever its number of workers (one, two, three over two LLCs,
// more than the host has, one per modeled CPU) and pinned: the CPUs a
// worker steps, and who steals them, move nothing.
func TestDriverWorkersAgree(t *testing.T) {
	dur := 2 * ms
	if testing.Short() || raceEnabled {
		dur = ms
	}
	for _, topo := range []string{"hikey-8", "spr-2s"} {
		m := machine(t, topo)
		serial := runWorkers(t, m, "v6.6-eevdf", Config{Driver: "serial", Seed: 2}, dur)
		for _, cfg := range []Config{
			{Workers: 1}, {Workers: 2}, {Workers: 3}, {Workers: 16}, {Workers: m.NumCPUs()}, {Workers: 2, Pin: true},
		} {
			cfg.Driver, cfg.Seed = "parallel", 2
			if got := runWorkers(t, m, "v6.6-eevdf", cfg, dur); !bytes.Equal(serial, got) {
				t.Errorf("%s, %d workers (pin %v): serial and parallel differ:\n%s", topo, cfg.Workers, cfg.Pin, firstDiff(serial, got))
			}
		}
	}
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d lines", len(la), len(lb))
}
