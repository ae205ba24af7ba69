package emu

import (
	"testing"
)

// Migration starvation under the v5.15 CFS ("[PATCH 0/2] sched/fair: Fix
// starvation caused by task migration", Tim Chen, 2022-03-25, on v5.15;
// kernel-mechanisms.md section 9), checked against v5.15 fair.c:
//
//   - place_entity(initial=0) (v5.15): a task that slept is placed at
//     max(vruntime, min_vruntime - sysctl_sched_latency/2): a sleeper
//     credit of up to 12 ms (latency 6 ms x (1 + ilog2(8))) left of
//     min_vruntime;
//   - dequeue_entity() without DEQUEUE_SLEEP (move_queued_task(), the hop
//     of a task that called sched_setaffinity() on itself: the stopper's
//     migration_cpu_stop() -> __migrate_task()) subtracts the source's
//     min_vruntime after update_curr(); enqueue_entity() without
//     ENQUEUE_WAKEUP adds the destination's and calls no place_entity():
//     the offset v - min_vruntime is carried unbounded, the credit too;
//   - update_min_vruntime(): max(min_vruntime, min(curr, leftmost)): while
//     tasks placed left of min_vruntime keep arriving and running, it does
//     not move, and a task waiting at or right of it is overtaken by every
//     one of them. Its wait is the credit the arrivals carry (each run pays
//     back only its own runtime), not the length of the queue.
//
// PLACE_MIGRATE (the RFC's place_entity_migrate()) places a migrated
// entity at min_vruntime or min_vruntime + sched_vslice() instead of
// carrying the offset; v6.6 EEVDF has no sleeper credit (a sleeper keeps
// its lag, place_entity() scales it) and clamps the lag a migration
// carries (update_entity_lag()).

// starveScene is what starveRun measures under one feature set.
type starveScene struct {
	victimWait  int64 // the victim's longest stretch running at most two bursts
	hopperWait  int64 // the hoppers' longest runnable wait after their sleep
	minvAdvance int64 // CPU 0's min_vruntime advance over that stretch
	credit      int64 // a hopper's v - min_vruntime on CPU 1 just after its wakeup
}

// starveRun builds two CPUs of hikey-8 (8 CPUs: sysctl_sched_latency
// 24 ms, so the sleeper threshold is 12 ms). CPU 0 runs the victim, a
// task computing 200 µs and sleeping 1 ms, alone; CPU 1 runs a hog and n
// hoppers that first sleep 60 ms while the hog runs (so that under CFS
// they wake with the whole sleeper credit), then run b ns and move
// themselves to the other CPU with sched_setaffinity(), over and over.
func starveRun(t *testing.T, feat string, n int, b int64) starveScene {
	t.Helper()
	s := newSim(t, "hikey-8", feat)
	const sleep = 60 * ms
	victim := mustTask(t, s, TaskSpec{Comm: "victim", CPU: 0, Prog: Loop(Run(200_000), Sleep(ms))})
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 1, Prog: Hog()})
	hoppers := make(map[*Task]bool, n)
	for range n {
		slept, ran := false, false
		p := mustTask(t, s, TaskSpec{Comm: "hopper", CPU: 1, Prog: ProgramFunc(func(p *Task) Action {
			switch {
			case !slept:
				slept = true
				return Sleep(sleep)
			case !ran:
				ran = true
				return Run(b)
			}
			ran = false
			return SetAffinity(1 - p.CPU())
		})})
		hoppers[p] = true
	}
	var sc starveScene
	s.OnRunDelay(func(p *Task, d int64) {
		switch {
		case hoppers[p] && p.Now() > sleep:
			sc.hopperWait = max(sc.hopperWait, d)
		}
	})
	// Step 100 µs at a time; keep CPU 0's min_vruntime over the
	// victim's longest stretch in which it ran at most two of its bursts
	// (it is runnable through most of it, so CPU 0 is busy with hoppers
	// meanwhile; a moment when every hopper is on CPU 1 or on its way,
	// moved by a stopper, lets it run a burst without ending the
	// starvation).
	rq0 := s.RQ(0)
	type sample struct {
		at, ran int64
		minv    uint64
	}
	win := []sample{{0, victim.SumExecRuntime(), rq0.cfs.q.MinVruntime}}
	var longest int64
	for at := int64(100_000); at <= sleep+600*ms; at += 100_000 {
		s.Run(at)
		if sc.credit == 0 && at > sleep {
			for p := range hoppers {
				if p.state == TaskRunnable && p.cpu == 1 {
					sc.credit = int64(p.se.Vruntime - p.se.cfsRq.q.MinVruntime)
					break
				}
			}
		}
		r := victim.SumExecRuntime()
		win = append(win, sample{at, r, rq0.cfs.q.MinVruntime})
		for r-win[0].ran > 2*200_000 {
			win = win[1:]
		}
		if d := at - win[0].at; d > longest {
			longest, sc.minvAdvance = d, int64(rq0.cfs.q.MinVruntime-win[0].minv)
		}
	}
	sc.victimWait = longest
	return sc
}

// TestMigrateStarvationSleeperCredit: v5.15 fair.c place_entity(),
// dequeue_entity()/enqueue_entity() normalisation and
// update_min_vruntime(), as above. Under v5.15-cfs the hoppers wake on
// CPU 1 at min_vruntime - 12 ms and carry that credit through every
// queued migration; on CPU 0 they land in front of the victim and
// min_vruntime stays where it is, so the victim waits for the credit the
// hoppers bring to CPU 0, about n/2 x 12 ms, while each hopper waits only
// for the few bursts queued in front of it. +PLACE_MIGRATE drops the
// credit at the first hop and v6.6 EEVDF never grants it: the victim
// waits no longer than the hoppers do.
func TestMigrateStarvationSleeperCredit(t *testing.T) {
	const b = 100_000
	thresh := int64(newSim(t, "hikey-8", "v5.15-cfs").tun.Latency / 2) // GENTLE_FAIR_SLEEPERS
	legacy := map[int]starveScene{}
	for _, n := range []int{8, 16} {
		sc := starveRun(t, "v5.15-cfs", n, b)
		legacy[n] = sc
		t.Logf("v5.15-cfs, %d hoppers: victim starved (at most two bursts run) for %.3f ms (min_vruntime +%.3f ms meanwhile), hoppers' %.3f ms; a hopper at wakeup: v - min_vruntime %.3f ms",
			n, float64(sc.victimWait)/1e6, float64(sc.minvAdvance)/1e6, float64(sc.hopperWait)/1e6, float64(sc.credit)/1e6)
		if sc.credit != -thresh {
			t.Errorf("v5.15-cfs: a hopper woke at min_vruntime %+d ns, want the sleeper threshold -%d ns", sc.credit, thresh)
		}
		// The credit CPU 0 receives: half the hoppers' (CPU 1 spends
		// the other half).
		if want := int64(n) / 2 * thresh; sc.victimWait < want/2 || sc.victimWait > 2*want {
			t.Errorf("v5.15-cfs, %d hoppers: victim waited %d us, want about the credit brought to CPU 0, %d us", n, sc.victimWait/1000, want/1000)
		}
		if sc.victimWait < 5*sc.hopperWait {
			t.Errorf("v5.15-cfs, %d hoppers: victim waited %d us, hoppers %d us: want the victim singled out", n, sc.victimWait/1000, sc.hopperWait/1000)
		}
		if sc.minvAdvance > sc.victimWait/100 {
			t.Errorf("v5.15-cfs, %d hoppers: CPU 0's min_vruntime advanced %d us during the victim's %d us wait, want it held", n, sc.minvAdvance/1000, sc.victimWait/1000)
		}
	}
	for _, feat := range []string{"v5.15-cfs,+PLACE_MIGRATE", "v6.6-eevdf"} {
		sc := starveRun(t, feat, 16, b)
		t.Logf("%s, 16 hoppers: victim starved for %.3f ms, hoppers' %.3f ms; a hopper at wakeup: v - min_vruntime %.3f ms",
			feat, float64(sc.victimWait)/1e6, float64(sc.hopperWait)/1e6, float64(sc.credit)/1e6)
		if sc.victimWait > 2*sc.hopperWait || 3*sc.victimWait > 2*legacy[16].victimWait {
			t.Errorf("%s: victim waited %d us, hoppers %d us (v5.15-cfs: %d us): want it not singled out",
				feat, sc.victimWait/1000, sc.hopperWait/1000, legacy[16].victimWait/1000)
		}
	}
}
