package emu

import (
	"math"
	"testing"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// expectedShares recomputes calc_group_shares() for tg on cpu from the
// current state, as a check on what the group entity carries.
func expectedShares(tg *TaskGroup, cpu int) float64 {
	c := tg.cfsRq[cpu]
	load := max(int64(eevdf.ScaleLoadDown(c.load.Weight)), int64(c.avg.LoadAvg))
	w := tg.published - int64(c.tgLoadAvgContrib) + load
	return float64(eevdf.ScaleLoadDown(tg.shares)) * float64(load) / float64(w)
}

// TestGroupShares: two CPUs' group entities get weights that follow
// calc_group_shares() as the loads change: 1 vs 3 hogs gives about 1/4 and
// 3/4 of the group's 1024, and moving two hogs over flips it.
func TestGroupShares(t *testing.T) {
	for _, prof := range []string{"v6.6-eevdf", "v6.7-eevdf", "v5.15-cfs"} {
		t.Run(prof, func(t *testing.T) {
			s := newSim(t, "hikey-8", prof)
			g, err := s.NewGroup("docker", nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			mustTask(t, s, TaskSpec{Comm: "a", CPU: 0, Group: g, Prog: Hog()})
			var onOne []*Task
			for i := 0; i < 3; i++ {
				onOne = append(onOne, mustTask(t, s, TaskSpec{Comm: "b", CPU: 1, Group: g, Prog: Hog()}))
			}
			checkShares := func(when string, want0, want1 float64) {
				t.Helper()
				w0, w1 := float64(g.Weight(0)), float64(g.Weight(1))
				t.Logf("%s: shares %.0f / %.0f (tg->load_avg %d), want ~%.0f / %.0f", when, w0, w1, g.LoadAvg(), want0, want1)
				for cpu, w := range []float64{w0, w1} {
					if exp := expectedShares(g, cpu); math.Abs(w-exp) > 0.05*exp+2 {
						t.Errorf("%s: CPU %d group weight %.0f, calc_group_shares() gives %.0f", when, cpu, w, exp)
					}
				}
				if math.Abs(w0-want0) > 0.1*want0 || math.Abs(w1-want1) > 0.1*want1 {
					t.Errorf("%s: shares %.0f / %.0f, want about %.0f / %.0f", when, w0, w1, want0, want1)
				}
			}
			s.Run(2000 * ms)
			checkShares("1 vs 3 hogs", 256, 768)
			// Move two waiting hogs from CPU 1 to CPU 0 (as load
			// balancing would).
			var move []*Task
			for _, p := range onOne {
				if len(move) < 2 && p.state == TaskRunnable && s.RQ(1).curr != p {
					move = append(move, p)
				}
			}
			if len(move) != 2 {
				t.Fatalf("only %d hogs waiting on CPU 1", len(move))
			}
			s.RQ(1).enterKernel()
			s.RQ(0).enterKernel()
			for _, p := range move {
				s.moveQueuedTask(p, 0)
			}
			s.RQ(1).resume()
			s.RQ(0).resume()
			s.Run(4000 * ms)
			checkShares("3 vs 1 hogs", 768, 256)
		})
	}
}

// TestTgLoadRatelimit: with TG_LOAD_RATELIMIT a cfs_rq writes
// tg->load_avg at most once per virtual ms; without it a migration-heavy
// load (each move detaches on one CPU and attaches on the other, kernel-
// mechanisms.md 4.5) writes far more often.
func TestTgLoadRatelimit(t *testing.T) {
	writes := map[string][]int64{}
	const dur = 200 * ms
	for _, prof := range []string{"v6.6-eevdf", "v6.7-eevdf"} {
		s := newSim(t, "hikey-8", prof)
		g, _ := s.NewGroup("docker", nil, 100)
		for cpu := 0; cpu < 2; cpu++ {
			mustTask(t, s, TaskSpec{Comm: "hog", CPU: cpu, Group: g, Prog: Hog()})
			mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: cpu, Group: g, Prog: sleeper(30_000, 60_000)})
		}
		hopper := mustTask(t, s, TaskSpec{Comm: "hopper", CPU: 0, Group: g, Prog: Hog()})
		moves := 0
		for at := int64(50_000); at <= dur; at += 50_000 {
			s.Run(at)
			if hopOver(s, hopper, nil) {
				moves++
			}
		}
		for cpu := 0; cpu < 2; cpu++ {
			st := s.RQ(cpu).Stats
			writes[prof] = append(writes[prof], st.TgLoadAvgWrites)
			t.Logf("%s CPU %d: %d moves, %d writes, %d reads, %d ratelimited, %d under threshold",
				prof, cpu, moves, st.TgLoadAvgWrites, st.TgLoadAvgReads, st.TgRatelimitSkips, st.TgThresholdSkips)
		}
	}
	for cpu, w := range writes["v6.7-eevdf"] {
		if w > dur/ms+1 {
			t.Errorf("ratelimited CPU %d wrote tg->load_avg %d times in %d ms", cpu, w, dur/ms)
		}
		if base := writes["v6.6-eevdf"][cpu]; base < 2*w {
			t.Errorf("CPU %d: %d writes without the ratelimit vs %d with: expected many more", cpu, base, w)
		}
	}
}

// TestUclampLines: with the static key on, every enqueue and dequeue
// reads and writes both rq->uclamp lines (logged, so the weave sees them); with it
// off, neither is touched. A task that sets a clamp turns the key on.
func TestUclampLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		feat  string
		clamp *[2]uint32
		on    bool
	}{
		{"off", "v6.6-eevdf", nil, false},
		{"feature", "v6.6-eevdf,+UCLAMP", nil, true},
		{"task clamp", "v6.6-eevdf", &[2]uint32{100, 800}, true},
	} {
		s := newSim(t, "hikey-8", tc.feat)
		mustTask(t, s, TaskSpec{Comm: "a", CPU: 0, Prog: sleeper(100_000, 300_000), Clamp: tc.clamp})
		mustTask(t, s, TaskSpec{Comm: "b", CPU: 0, Prog: sleeper(200_000, 100_000)})
		s.Run(100 * ms)
		s.barrier(nil)
		rq := s.RQ(0)
		lines := rq.uclamp.Lines()
		st := s.Space().Stats()
		touched := [2]int64{st.Lines[lines[0]].Accesses, st.Lines[lines[1]].Accesses}
		ops := rq.Stats.Enqueues + rq.Stats.Dequeues
		t.Logf("%s: %d enqueues+dequeues, uclamp line accesses %v", tc.name, ops, touched)
		if !tc.on {
			if touched != [2]int64{} {
				t.Errorf("%s: key off but the uclamp lines were touched %v times", tc.name, touched)
			}
			continue
		}
		// Each uclamp_rq_inc/dec reads then writes each line once (a
		// task's clamp turns the key on before its first enqueue).
		if touched[0] != 2*ops || touched[1] != 2*ops {
			t.Errorf("%s: %d enqueues+dequeues but uclamp lines touched %v times (want each read and written once per operation)", tc.name, ops, touched)
		}
		if v := rq.uclamp.Value(contention.UclampMax); v == 0 {
			t.Errorf("%s: rq uclamp max is 0", tc.name)
		}
	}
}

// hopOver moves p, if it waits queued (not running), from its CPU of 0 and
// 1 to the other as load balancing's detach_task() + attach_task() do, and
// hands saw the accesses the move logged on the source CPU.
func hopOver(s *Sim, p *Task, saw func(src *RQ, logged []weave.Entry)) bool {
	src := s.RQ(p.cpu)
	if p.state != TaskRunnable || src.curr == p {
		return false
	}
	dst := s.RQ(1 - p.cpu)
	src.enterKernel()
	dst.enterKernel()
	n := src.log.Len()
	s.moveQueuedTask(p, dst.cpu)
	if saw != nil {
		saw(src, src.log.Entries()[n:])
	}
	src.resume()
	dst.resume()
	return true
}

// TestSetTaskCPUReadsTgLine: with CONFIG_RT_GROUP_SCHED, sched.h
// set_task_rq() (v5.15, v6.6) reads tg->rt_rq and tg->rt_se, which sit on
// tg->load_avg's cache line (struct task_group: load_avg
// ____cacheline_aligned, then rt_se, rt_rq), so every migration of a task
// in a cgroup reads that line, charged to set_task_cpu(); without the
// option it reads only tg->se and tg->cfs_rq, on the line before. A task
// of a group moved by load balancing (detach_task() + attach_task())
// between two CPUs running hogs of the group logs exactly one such read
// on the moving CPU per move with RT_GROUP_SCHED, and none without; a
// task of the root group none either way.
func TestSetTaskCPUReadsTgLine(t *testing.T) {
	const moves = 6
	for _, tc := range []struct {
		feat    string
		grouped bool
		want    int
	}{
		{"v6.6-eevdf", true, moves},
		{"v6.6-eevdf,-RT_GROUP_SCHED", true, 0},
		{"v6.6-eevdf", false, 0},
	} {
		s := newSim(t, "hikey-8", tc.feat)
		var g *TaskGroup
		if tc.grouped {
			g, _ = s.NewGroup("docker", nil, 100)
		}
		for cpu := 0; cpu < 2; cpu++ {
			mustTask(t, s, TaskSpec{Comm: "hog", CPU: cpu, Group: g, Prog: Hog()})
		}
		mover := mustTask(t, s, TaskSpec{Comm: "mover", CPU: 0, Group: g, Prog: Hog()})
		done, reads := 0, 0
		for at := int64(50_000); done < moves; at += 50_000 {
			s.Run(at)
			if hopOver(s, mover, func(src *RQ, logged []weave.Entry) {
				for _, e := range logged {
					if e.Site == src.site(SymSetTaskCPU) && e.Op == hwmodel.Read {
						reads++
					}
				}
			}) {
				done++
			}
		}
		if reads != tc.want {
			t.Errorf("%s, grouped %v: %d reads charged to set_task_cpu over %d moves, want %d", tc.feat, tc.grouped, reads, moves, tc.want)
		}
	}
}
