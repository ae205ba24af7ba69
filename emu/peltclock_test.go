package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// simOn builds a checked serial machine on m (a preset, possibly edited).
func simOn(t *testing.T, m *hwmodel.Machine, feat string) *Sim {
	t.Helper()
	s, err := New(Config{Machine: m, Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFreqInvariantUtil: pelt.h update_rq_clock_pelt() (v6.6): a CPU below
// the frequency-invariance reference advances its PELT clock by
// delta x arch_scale_freq_capacity() / 1024 while a task runs, and syncs it
// back to clock_task when idle, so a task that runs half the time reads as
// half of the scaled capacity: on spr-2s (3.0 GHz against the 3.8 GHz
// 4-core turbo, scale 808) util_avg settles near 0.79 of what it reaches
// at full scale. A task that never lets its CPU idle has no idle time to
// give back (update_idle_rq_clock_pelt(): lost_idle_time) and still reaches
// the full 1024.
func TestFreqInvariantUtil(t *testing.T) {
	spr := machine(t, "spr-2s")
	if spr.FreqScale != 808 {
		t.Fatalf("spr-2s arch_scale_freq_capacity = %d, want 808 (3000/3800 MHz)", spr.FreqScale)
	}
	full := *spr
	full.FreqScale = 1024
	util := func(m *hwmodel.Machine, duty bool) uint64 {
		s := simOn(t, m, "v6.6-eevdf")
		n := 0
		p := mustTask(t, s, TaskSpec{Comm: "duty", CPU: 0, Prog: ProgramFunc(func(*Task) Action {
			n++
			if duty && n%2 == 0 {
				return Sleep(ms)
			}
			return Run(ms)
		})})
		s.Run(400 * ms)
		return p.se.Avg.UtilAvg
	}
	half, halfScaled := util(&full, true), util(spr, true)
	hog, hogScaled := util(&full, false), util(spr, false)
	t.Logf("run 1 ms / sleep 1 ms: util_avg %d at scale 1024, %d at 808; hog: %d and %d", half, halfScaled, hog, hogScaled)
	if r := float64(halfScaled) / float64(half); r < 0.76 || r > 0.82 {
		t.Errorf("half-duty task's util at scale 808 is %.3f of its util at 1024, want 808/1024 = 0.789", r)
	}
	if half < 450 || half > 580 {
		t.Errorf("half-duty task at full scale: util_avg %d, want about 512", half)
	}
	for _, u := range []uint64{hog, hogScaled} {
		if u < 1000 {
			t.Errorf("an always-running task's util_avg is %d, want about 1024 (no idle to give back)", u)
		}
	}
}

// TestGroupEntityAttachedOnline: fair.c online_fair_sched_group() ->
// attach_entity_cfs_rq() (v6.6) attaches a cgroup's entities when the
// group is created, so the first task's util reaches the root queue once,
// through propagate_entity_load_avg(), not also through a DO_ATTACH of the
// group entity at its first enqueue: the root's util_avg equals the
// group queue's.
func TestGroupEntityAttachedOnline(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	g, err := s.NewGroup("docker", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	mustTask(t, s, TaskSpec{Comm: "t", CPU: 2, Group: g, Prog: ProgramFunc(func(*Task) Action { return Run(ms) })})
	s.Run(ms / 10)
	root, grp := s.cpus[2].cfs.avg.UtilAvg, g.cfsRq[2].avg.UtilAvg
	t.Logf("after the first enqueue: root util_avg %d, group queue %d", root, grp)
	if grp == 0 || root > grp+2 || root+2 < grp {
		t.Errorf("root cfs_rq util_avg %d, group cfs_rq %d: want equal (the group entity carries its queue's util once)", root, grp)
	}
}

// TestCPUUtilCapped: fair.c cpu_util() (v6.6) returns
// min(util, capacity_orig_of(cpu)): a CPU whose root util_avg passed 1024
// (a migrated task's util arrives whole) counts as 1024 in the load
// balancer's group_util and SIS_UTIL's sum_util.
func TestCPUUtilCapped(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	rq := s.cpus[1]
	rq.cfs.avg.UtilAvg = 1400
	if got := rq.exactSnap().cpuUtil(); got != 1024 {
		t.Errorf("cpu_util_cfs() with util_avg 1400 = %d, want 1024", got)
	}
	rq.cfs.avg.UtilAvg = 700
	if got := rq.exactSnap().cpuUtil(); got != 700 {
		t.Errorf("cpu_util_cfs() with util_avg 700 = %d, want 700", got)
	}
}
