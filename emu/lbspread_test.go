package emu

import (
	"fmt"
	"math"
	"testing"
)

// spreadLLCResult is what stackedPairRun measured: the delay from the
// sibling going idle to a stacked hog landing on it, and the PELT signals
// at that idle transition.
type spreadLLCResult struct {
	moveDelay  int64  // ns; -1: no hog moved within the window
	cpuUtil    uint64 // the idle sibling's cfs util_avg when it went idle
	hogUtilMin uint64 // the smaller of the stacked hogs' util_avg then
	hogUtilMax uint64
}

// stackedPairRun builds the scenario on one 4-CPU LLC of hikey-8
// (the MC level, SD_SHARE_LLC: the cluster's L2 is the last cache): two
// hogs stacked on CPU 0, allowed on CPUs 0 and 1, and on CPU 1 a pinned
// task that runs 201.5 ms and then sleeps, leaving CPU 1 idle with ~1000 of
// blocked util. (CPUs 2 and 3 stay idle and empty: the hogs may not go
// there, and no busy CPU of the LLC competes for them; with busy siblings
// the overloaded CPU 0 would also lose a hog to their migrate_load pulls,
// the ordinary fairness rotation of 5 tasks on 4 CPUs.) It reports how
// long after CPU 1 went idle one of the stacked hogs reached it.
func stackedPairRun(t *testing.T, feat string) spreadLLCResult {
	s := newSim(t, "hikey-8", feat)
	res := spreadLLCResult{moveDelay: -1}
	var hogs []*Task
	n, idleAt := 0, int64(-1)
	mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 1, Prog: ProgramFunc(func(tk *Task) Action {
		if n++; n == 1 {
			// 1.5 ms past the tick at which CPU 0 last switched
			// hogs, so the waiting hog is cache-cold (task_hot():
			// exec_start over 500 us ago) when CPU 1 goes newly
			// idle. At a tick it has just run, and can_migrate_task()
			// refuses it in the fixed kernel too.
			return Run(201500 * us)
		} else if n == 2 {
			// The signals as the sleeper blocks (the serial driver:
			// reading CPU 0's tasks from here is safe).
			idleAt = tk.Now()
			res.cpuUtil = uint64(s.cpus[1].cfs.avg.UtilAvg)
			a, b := uint64(hogs[0].se.Avg.UtilAvg), uint64(hogs[1].se.Avg.UtilAvg)
			res.hogUtilMin, res.hogUtilMax = min(a, b), max(a, b)
			return Sleep(2000 * ms)
		}
		return Exit()
	})})
	for i := 0; i < 2; i++ {
		hogs = append(hogs, spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, CPUs: []int{0, 1}, Prog: Hog()}))
	}
	// Step 100 us at a time: the move's time to within a step.
	const step = ms / 10
	for now := step; now <= 600*ms; now += step {
		s.Run(now)
		moved := hogs[0].CPU() != 0 || hogs[1].CPU() != 0
		if idleAt < 0 {
			if moved {
				t.Fatalf("%s: a hog left CPU 0 (for CPU %d/%d) at %d us while every CPU of the LLC was busy", feat, hogs[0].CPU(), hogs[1].CPU(), s.now/1000)
			}
			continue
		}
		if moved {
			if hogs[0].CPU() != 1 && hogs[1].CPU() != 1 {
				t.Fatalf("%s: a hog went to CPU %d/%d, not the idle CPU 1", feat, hogs[0].CPU(), hogs[1].CPU())
			}
			res.moveDelay = s.now - idleAt
			break
		}
	}
	if idleAt < 0 {
		t.Fatalf("%s: the sleeper never slept", feat)
	}
	return res
}

// TestLBSpreadLLC: two hogs stacked on one CPU of a 4-CPU LLC with an idle
// sibling CPU whose blocked utilization is still high (its task has just
// gone to sleep after 200 ms of running).
//
// With LB_SPREAD_LLC (16b0a7a1a0af, v5.10; fair.c: calculate_imbalance()
// in v5.15 and v6.6): the local group has spare capacity, the busiest is
// overloaded, and the domain has SD_SHARE_PKG_RESOURCES (SD_SHARE_LLC), so
// the imbalance is a task count (migrate_task), and the sibling's
// newidle balance pulls a hog at once.
//
// Without it (fair.c before 16b0a7a1a0af, v5.9: calculate_imbalance()):
// migrate_util with imbalance = group_capacity - group_util of the idle
// CPU, and detach_tasks() skips a task whose util exceeds it (v5.15
// detach_tasks(): "if (util > env->imbalance) goto next", not relaxed by
// nr_balance_failed before v6.8's 3af7524b1419). So no hog moves until the
// idle CPU's blocked util has decayed (update_blocked_averages(), a 32 ms
// half-life) below 1024 minus the hog's util: t* = 32 ms * log2(u / (1024 -
// u_hog)). The move comes at the first periodic idle balance after t*
// (the MC level's idle interval: 4 ms, its min_interval), done by the ILB
// on the tickless CPU's behalf. migrate_util never triggers active
// balancing (imbalanced_active_balance() is for migrate_task).
func TestLBSpreadLLC(t *testing.T) {
	for _, prof := range []string{"v5.15-cfs", "v6.6-eevdf"} {
		on := stackedPairRun(t, prof)
		off := stackedPairRun(t, prof+",-LB_SPREAD_LLC")
		t.Logf("%-11s LB_SPREAD_LLC: moved after %.1f ms; without: after %.1f ms (idle CPU util %d, hog util %d..%d)",
			prof, float64(on.moveDelay)/float64(ms), float64(off.moveDelay)/float64(ms), off.cpuUtil, off.hogUtilMin, off.hogUtilMax)
		if on.moveDelay < 0 || on.moveDelay > 4*ms {
			t.Errorf("%s: with LB_SPREAD_LLC the idle sibling got a hog after %d ms (want within the newidle balance, <= 4 ms)", prof, on.moveDelay/ms)
		}
		// The window in which the pre-fix kernel may first move a hog.
		halfLife := 32.768 // ms: y^32 = 1/2 with 1024 us PELT periods
		spare := func(u uint64) float64 { return float64(schedCapacityScale - u) }
		if off.cpuUtil+off.hogUtilMax <= schedCapacityScale {
			t.Fatalf("%s: scenario broken: idle CPU util %d leaves room for a hog (%d) at once", prof, off.cpuUtil, off.hogUtilMax)
		}
		lo := halfLife*math.Log2(float64(off.cpuUtil)/spare(off.hogUtilMin)) - 2
		hi := halfLife*math.Log2(float64(off.cpuUtil)/spare(off.hogUtilMax)) + 2*4 + 4
		got := float64(off.moveDelay) / float64(ms)
		if off.moveDelay < 0 || got < lo || got > hi {
			t.Errorf("%s: without LB_SPREAD_LLC a hog moved after %s; want it in [%.1f, %.1f] ms, once the idle CPU's blocked util (%d) has decayed below 1024 - hog util (%d..%d)",
				prof, fmtDelay(off.moveDelay), lo, hi, off.cpuUtil, off.hogUtilMin, off.hogUtilMax)
		}
	}
}

func fmtDelay(d int64) string {
	if d < 0 {
		return "never (600 ms)"
	}
	return fmt.Sprintf("%.1f ms", float64(d)/float64(ms))
}

// stackedWakeRun is the wakeup round of classic schbench on one cluster
// of hikey-8 (the MC level is the LLC): hogs on CPUs 4 and 5; workers A
// (last ran on CPU 7) and B (last ran on CPU 6) have each run 200 ms and
// sleep; the message thread, pinned to CPU 7, wakes A, then B, then
// sleeps. select_idle_sibling() puts A on the idle CPU 6; B's prev CPU 6
// is then busy with A and no CPU of the LLC is idle (the waker runs on
// 7), so B is queued on 6 behind A (v5.15 fair.c: select_idle_cpu()
// finds none; wake_affine_weight() keeps prev, whose load is B's own).
// It returns each worker's delay from its wakeup to its first run after
// it, and where it ran.
func stackedWakeRun(t *testing.T, feat string) (delay [2]int64, cpu [2]int) {
	s := newSim(t, "hikey-8", feat)
	for _, c := range []int{4, 5} {
		mustTask(t, s, TaskSpec{Comm: "hog", CPU: c, Prog: Hog()})
	}
	wokeAt := [2]int64{-1, -1}
	delay = [2]int64{-1, -1}
	var workers [2]*Task
	worker := func(i int) Program {
		n := 0
		return ProgramFunc(func(tk *Task) Action {
			switch n++; n {
			case 1:
				return Run(200 * ms)
			case 2:
				return Block()
			case 3:
				delay[i], cpu[i] = tk.Now()-wokeAt[i], tk.CPU()
				return Run(50 * ms)
			}
			return Exit()
		})
	}
	for i, c := range []int{7, 6} {
		workers[i] = spawn(t, s, TaskSpec{Comm: "worker", CPU: c, CPUs: []int{4, 5, 6, 7}, Prog: worker(i)})
	}
	step := 0
	mustTask(t, s, TaskSpec{Comm: "msg", CPU: 7, Prog: ProgramFunc(func(tk *Task) Action {
		switch step++; step {
		case 1:
			return Sleep(210 * ms)
		case 2, 3:
			i := step - 2
			wokeAt[i] = tk.Now()
			return Wake(workers[i])
		}
		return Block()
	})})
	s.Run(240 * ms)
	for i := range delay {
		if wokeAt[i] < 0 || delay[i] < 0 {
			t.Fatalf("%s: worker %d not woken (at %d) or not run after it", feat, i, wokeAt[i])
		}
	}
	return delay, cpu
}

// TestNewidleSeesOwnEnqueues: the waker's own direct enqueues are on the
// target's queue when it goes idle right after (v5.15 core.c:
// ttwu_queue() -> ttwu_do_activate() under the target's rq lock;
// add_nr_running() sets rd->overload when nr_running reaches 2), so its
// newidle balance (v5.15 fair.c: newidle_balance() -> load_balance() at
// the MC level) finds the stacked CPU and pulls the waiting worker at
// once: with LB_SPREAD_LLC the imbalance is a task (migrate_task). No
// worker waits for a tick's balance.
func TestNewidleSeesOwnEnqueues(t *testing.T) {
	checkPulledAtOnce(t, "v5.15-cfs", "the waker's newidle balance pulls it")
}

// checkPulledAtOnce runs stackedWakeRun under feat and checks that both
// workers ran within 100 us of their wakeups, on different CPUs (why says
// what pulls the stacked one).
func checkPulledAtOnce(t *testing.T, feat, why string) {
	t.Helper()
	delay, cpu := stackedWakeRun(t, feat)
	t.Logf("%s: workers ran %.1f and %.1f us after their wakeups, on CPUs %d and %d",
		feat, float64(delay[0])/1e3, float64(delay[1])/1e3, cpu[0], cpu[1])
	for i, d := range delay {
		if d > 100_000 {
			t.Errorf("%s: worker %d waited %.1f us for a CPU (on CPU %d); want <= 100 us: %s", feat, i, float64(d)/1e3, cpu[i], why)
		}
	}
	if cpu[0] == cpu[1] {
		t.Errorf("%s: both workers ran on CPU %d", feat, cpu[0])
	}
}

// TestNewidleOwnRemovedUtil: the same round before 16b0a7a1a0af
// (-LB_SPREAD_LLC). calculate_imbalance() (v5.9, and v5.15 without the
// SD_SHARE_PKG_RESOURCES test) asks for migrate_util, imbalance =
// capacity - the local CPU's util, and detach_tasks() skips a task whose
// util exceeds it. The waker's CPU 7 held A's util (200 ms of running),
// but A's wakeup migration took it off: set_task_cpu() ->
// migrate_task_rq_fair() -> remove_entity_load_avg() queues it on CPU 7's
// cfs_rq->removed, and update_cfs_rq_load_avg() applies it (the waker's
// own dequeue_entity() as it sleeps, then newidle_balance()'s
// update_blocked_averages()) before load_balance() reads cpu_util(). So
// the spare capacity is the whole CPU and the newidle balance pulls the
// stacked worker at once here too: the pre-fix kernel stacks only where
// the idle CPU's util belongs to a task still sleeping there
// (TestLBSpreadLLC).
func TestNewidleOwnRemovedUtil(t *testing.T) {
	checkPulledAtOnce(t, "v5.15-cfs,-LB_SPREAD_LLC", "CPU 7's util without A's leaves room for it")
}
