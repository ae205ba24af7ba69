package emu

import (
	"math"
	"testing"

	"github.com/rqemu/rqemu/emu/pelt"
)

// utilEstSum is Σ _task_util_est() over the tasks runnable on rq (its
// cfs_tasks list: queued and running), what util_est.enqueued must hold.
func utilEstSum(rq *RQ) uint64 {
	var sum uint64
	for p := rq.cfsTasks.head; p != nil; p = p.tlNext {
		sum += pelt.TaskUtilEst(&p.se.Avg)
	}
	return sum
}

// TestUtilEstAcrossSleep: fair.c (v5.15, v6.6) util_est_update() at a
// sleep-dequeue and cpu_util() as the wakeup finds it. A task pinned to
// CPU 0 of hikey-8 spins 1 s (util_avg ~1000), sleeps 60 ms (util_avg
// decays by 2^(-60/32), to ~270) and wakes: its util_est keeps the ~1000
// it had at the sleep (UTIL_EST_FASTUP: ewma jumps to the sample), the
// root cfs_rq's util_est.enqueued is that estimate while it is runnable
// and 0 while it sleeps, and cpu_util() of the CPU is the max of the two
// signals. With -UTIL_EST nothing is sampled and cpu_util() is util_avg.
func TestUtilEstAcrossSleep(t *testing.T) {
	type seen struct {
		utilAtSleep, utilAtWake, estAtWake, rqEstAtWake, rqEstAsleep, cpuUtilAtWake uint64
	}
	run := func(feat string) seen {
		s := newSim(t, "hikey-8", feat)
		var r seen
		n := 0
		mustTask(t, s, TaskSpec{Comm: "worker", CPU: 0, Prog: ProgramFunc(func(tk *Task) Action {
			n++
			switch n {
			case 1:
				return Run(1000 * ms)
			case 2:
				r.utilAtSleep = tk.se.Avg.UtilAvg
				return Sleep(60 * ms)
			case 3:
				rq := s.cpus[0]
				r.utilAtWake = tk.se.Avg.UtilAvg
				r.estAtWake = pelt.TaskUtilEst(&tk.se.Avg)
				r.rqEstAtWake = uint64(rq.cfs.avg.UtilEst.Enqueued)
				r.cpuUtilAtWake = rq.exactSnap().cpuUtil()
				if got := r.rqEstAtWake; got != utilEstSum(rq) {
					t.Errorf("%s: util_est.enqueued %d, Σ runnable _task_util_est %d", feat, got, utilEstSum(rq))
				}
				if want := min(max(rq.cfs.avg.UtilAvg, r.rqEstAtWake), schedCapacityScale); r.cpuUtilAtWake != want {
					t.Errorf("%s: cpu_util %d, want min(max(util_avg %d, util_est %d), 1024) = %d", feat, r.cpuUtilAtWake, rq.cfs.avg.UtilAvg, r.rqEstAtWake, want)
				}
				return Run(ms)
			}
			return Exit()
		})})
		s.Run(1030 * ms) // mid-sleep
		r.rqEstAsleep = uint64(s.cpus[0].cfs.avg.UtilEst.Enqueued)
		s.Run(1100 * ms)
		if n < 3 {
			t.Fatalf("%s: the worker did not wake (%d steps)", feat, n)
		}
		return r
	}
	on := run("v5.15-cfs")
	t.Logf("UTIL_EST: util at sleep %d, at wake %d; util_est %d; rq util_est %d (asleep %d); cpu_util %d",
		on.utilAtSleep, on.utilAtWake, on.estAtWake, on.rqEstAtWake, on.rqEstAsleep, on.cpuUtilAtWake)
	if on.utilAtSleep < 990 {
		t.Fatalf("scenario broken: util_avg %d after 1 s of spinning", on.utilAtSleep)
	}
	// The sample is util_avg at the dequeue, a few us after the read.
	if d := int64(on.estAtWake) - int64(on.utilAtSleep); d < -2 || d > 2 {
		t.Errorf("util_est at wake %d, want the util_avg at the sleep, %d", on.estAtWake, on.utilAtSleep)
	}
	decayed := float64(on.utilAtSleep) * math.Pow(2, -60.0/32.768)
	if math.Abs(float64(on.utilAtWake)-decayed) > 0.05*decayed {
		t.Errorf("util_avg at wake %d, want ~%.0f (60 ms of decay)", on.utilAtWake, decayed)
	}
	if on.rqEstAsleep != 0 || on.rqEstAtWake != on.estAtWake || on.cpuUtilAtWake != on.estAtWake {
		t.Errorf("rq util_est.enqueued asleep %d (want 0), runnable %d, cpu_util %d (want both %d)",
			on.rqEstAsleep, on.rqEstAtWake, on.cpuUtilAtWake, on.estAtWake)
	}
	off := run("v5.15-cfs,-UTIL_EST")
	if off.estAtWake != 0 || off.rqEstAtWake != 0 {
		t.Errorf("-UTIL_EST: util_est %d, rq sum %d; want no samples", off.estAtWake, off.rqEstAtWake)
	}
	if off.cpuUtilAtWake >= on.cpuUtilAtWake/2 {
		t.Errorf("-UTIL_EST: cpu_util %d at wake, want the decayed util_avg (~%.0f)", off.cpuUtilAtWake, decayed)
	}
}

// TestUtilEstOnlyOnSleep: dequeue_task_fair() samples only with
// DEQUEUE_SLEEP (util_est_update()'s task_sleep): three hogs on CPU 0,
// free to use CPU 1, never sleep, so the one the balancer moves to CPU 1
// (detach_task(): a dequeue without DEQUEUE_SLEEP) has no sample, and
// each CPU's sum stays the sum of its runnable tasks' estimates.
func TestUtilEstOnlyOnSleep(t *testing.T) {
	s := newSim(t, "hikey-8", "v6.6-eevdf")
	var hogs []*Task
	for i := 0; i < 3; i++ {
		hogs = append(hogs, spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, CPUs: []int{0, 1}, Prog: Hog()}))
	}
	moved := false
	for now := 10 * ms; now <= 200*ms; now += 10 * ms {
		s.Run(now)
		for c := 0; c < 2; c++ {
			if got, want := uint64(s.cpus[c].cfs.avg.UtilEst.Enqueued), utilEstSum(s.cpus[c]); got != want {
				t.Fatalf("%d ms: CPU %d util_est.enqueued %d, Σ runnable %d", now/ms, c, got, want)
			}
		}
		for _, h := range hogs {
			moved = moved || h.CPU() != 0
		}
	}
	if !moved {
		t.Fatal("scenario broken: no hog was moved to CPU 1")
	}
	for i, h := range hogs {
		if h.se.Avg.UtilEst != (pelt.UtilEst{}) {
			t.Errorf("hog %d (CPU %d) never slept, util_est %+v", i, h.CPU(), h.se.Avg.UtilEst)
		}
	}
}

// utilPullRun: the pre-fix kernel (-LB_SPREAD_LLC) on one cluster of
// hikey-8. A worker on CPU 0 spins 300 ms alone (util_avg ~1000), sleeps
// 1 ms (util_est ~1000), and is then allowed CPUs 0 and 1; from 305 ms a
// hog pinned to CPU 0 shares the CPU with it (its util_avg falls toward
// 512). CPU 1 runs a pinned task for 8 ms from 300 ms and is then idle
// with ~100 of blocked util. migrate_util: imbalance = 1024 - cpu_util(1), and
// detach_tasks() skips the worker while task_util_est(worker) exceeds it.
// It returns when the worker reached CPU 1 after CPU 1 went idle, and the
// signals then.
type utilPullResult struct {
	delay           int64  // ns after CPU 1 went idle; -1: never
	cpu1Util        uint64 // CPU 1's util_avg when it went idle
	workerEst       uint64 // the worker's _task_util_est() then
	workerUtilAtIdl uint64
}

func utilPullRun(t *testing.T, feat string) utilPullResult {
	s := newSim(t, "hikey-8", feat)
	res := utilPullResult{delay: -1}
	var worker *Task
	idleAt := int64(-1)
	n := 0
	worker = mustTask(t, s, TaskSpec{Comm: "worker", CPU: 0, Prog: ProgramFunc(func(tk *Task) Action {
		n++
		switch n {
		case 1:
			return Run(300 * ms)
		case 2:
			return Sleep(ms)
		case 3:
			return SetAffinity(0, 1)
		}
		return Run(10 * ms)
	})})
	k := 0
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: ProgramFunc(func(tk *Task) Action {
		if k++; k == 1 {
			return Sleep(305 * ms)
		}
		return Run(10 * ms)
	})})
	m := 0
	mustTask(t, s, TaskSpec{Comm: "blip", CPU: 1, Prog: ProgramFunc(func(tk *Task) Action {
		m++
		switch m {
		case 1:
			return Sleep(300 * ms)
		case 2:
			return Run(8 * ms)
		case 3:
			idleAt = tk.Now()
			res.cpu1Util = s.cpus[1].cfs.avg.UtilAvg
			res.workerEst = pelt.TaskUtilEst(&worker.se.Avg)
			res.workerUtilAtIdl = worker.se.Avg.UtilAvg
			return Sleep(10000 * ms)
		}
		return Exit()
	})})
	const step = ms / 10
	for now := step; now <= 700*ms; now += step {
		s.Run(now)
		if idleAt >= 0 && worker.CPU() == 1 {
			res.delay = s.now - idleAt
			break
		}
	}
	if idleAt < 0 {
		t.Fatalf("%s: CPU 1 never went idle", feat)
	}
	return res
}

// TestUtilEstDetachTasks: fair.c detach_tasks() (v5.15, v6.6), the
// migrate_util case, tests task_util_est(p) = max(task_util(p),
// _task_util_est(p)). Without LB_SPREAD_LLC, the worker sharing CPU 0
// moves to the idle CPU 1 once its util_avg fits in 1024 - cpu_util(1)
// when util_est is off, but with UTIL_EST only once CPU 1's blocked util
// has decayed below 1024 - its util_est (~1000): about 32 ms *
// log2(cpu_util(1) / (1024 - util_est)) after CPU 1 went idle, plus the
// MC level's 4 ms idle balance interval.
func TestUtilEstDetachTasks(t *testing.T) {
	for _, prof := range []string{"v5.15-cfs", "v6.6-eevdf"} {
		on := utilPullRun(t, prof+",-LB_SPREAD_LLC")
		off := utilPullRun(t, prof+",-LB_SPREAD_LLC,-UTIL_EST")
		t.Logf("%-11s UTIL_EST: moved after %s (CPU 1 util %d, worker util_est %d, util %d); without: after %s (worker util %d)",
			prof, fmtDelay(on.delay), on.cpu1Util, on.workerEst, on.workerUtilAtIdl, fmtDelay(off.delay), off.workerUtilAtIdl)
		if on.workerEst < 950 || on.cpu1Util < 100 || on.cpu1Util+on.workerEst <= schedCapacityScale {
			t.Fatalf("%s: scenario broken: worker util_est %d, CPU 1 util %d", prof, on.workerEst, on.cpu1Util)
		}
		// util_avg is floored (util_sum / divider, and decay_load()
		// truncates), so the blocked util reaches spare between the
		// real-valued decay times to spare+1 and to spare.
		spare := float64(schedCapacityScale - on.workerEst)
		lo := 32.768*math.Log2(float64(on.cpu1Util)/(spare+1)) - 2
		hi := 32.768*math.Log2(float64(on.cpu1Util)/spare) + 2*4 + 4
		got := float64(on.delay) / float64(ms)
		if on.delay < 0 || got < lo || got > hi {
			t.Errorf("%s: with UTIL_EST the worker moved after %s; want it in [%.1f, %.1f] ms, once CPU 1's blocked util (%d) is below 1024 - util_est (%d)",
				prof, fmtDelay(on.delay), lo, hi, on.cpu1Util, on.workerEst)
		}
		if off.delay < 0 || off.delay > on.delay-20*ms {
			t.Errorf("%s: without UTIL_EST the worker moved after %s, want well before %s (its util_avg fits sooner)",
				prof, fmtDelay(off.delay), fmtDelay(on.delay))
		}
	}
}

// TestUtilEstSISUtil: update_sg_lb_stats()'s group_util and
// update_idle_cpu_scan()'s sum_util (fair.c v6.6, SIS_UTIL) read
// cpu_util_cfs(), so four tasks that spun 400 ms on CPUs 0-3 of hikey-8,
// slept 60 ms and just woke count at their util_est (~1000) and not their
// decayed util_avg (~270): the cluster looks full, and nr_idle_scan drops
// to 0 instead of 3 (y = 1024 - x^2 * 117^2 / (10000 * 1024)).
func TestUtilEstSISUtil(t *testing.T) {
	run := func(feat string) (sumUtil, sumAvg uint64, nrScan int) {
		s := newSim(t, "hikey-8", feat)
		for c := 0; c < 4; c++ {
			mustTask(t, s, TaskSpec{Comm: "w", CPU: c, Prog: Loop(Run(400*ms), Sleep(60*ms))})
		}
		s.Run(462 * ms) // 2 ms after the wakeups
		b := s.RQ(0)
		sd := s.llc[0].sd
		e := &lbEnv{b: b, dstCPU: 0, sd: sd, idle: cpuIdle}
		// As at the barrier (an ILB pass): every CPU read exactly, and
		// nr_idle_scan written at once.
		b.pay.barrier = true
		e.updateSDLBStats()
		b.pay.barrier = false
		for c := 0; c < 4; c++ {
			sumAvg += s.cpus[c].cfs.avg.UtilAvg
		}
		return e.sumUtil, sumAvg, s.llcSnap[s.llc[0].id].nrIdleScan
	}
	onSum, onAvg, onScan := run("v6.6-eevdf")
	offSum, offAvg, offScan := run("v6.6-eevdf,-UTIL_EST")
	t.Logf("UTIL_EST: sum_util %d (Σ util_avg %d), nr_idle_scan %d; without: sum_util %d, nr_idle_scan %d",
		onSum, onAvg, onScan, offSum, offScan)
	if onSum < 3800 || onScan != 0 {
		t.Errorf("UTIL_EST: sum_util %d, nr_idle_scan %d; want the estimates (~4 x 1000) and a scan of 0", onSum, onScan)
	}
	if offSum != offAvg || offScan != 3 {
		t.Errorf("-UTIL_EST: sum_util %d (Σ util_avg %d), nr_idle_scan %d; want Σ util_avg and a scan of 3", offSum, offAvg, offScan)
	}
}
