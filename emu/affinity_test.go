package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestAffinityMoveByStopper: a task that calls sched_setaffinity() on
// itself is moved by its CPU's stopper (core.c v5.15 and v6.6:
// affine_move_task() -> stop_one_cpu_nowait(migration_cpu_stop), which
// preempts the task; move_queued_task() takes the new CPU's rq lock and
// runs activate_task() there). So the old CPU pays the move: the new
// CPU's lock is taken from it, the task is on the new CPU's queue only
// after the stopper's enqueue there, and the next fair task on the old
// CPU starts after the stopper's two context switches, its exec_start
// taken then, not when the task left; the hopper's own runtime covers
// __set_cpus_allowed_ptr()'s requeue of it. Before, the task was parked and
// handed to the new CPU at the time of its call, which did the enqueue
// itself, and the old CPU ran its next task after one switch.
func TestAffinityMoveByStopper(t *testing.T) {
	for _, feat := range []string{"v5.15-cfs", "v6.6-eevdf"} {
		t.Run(feat, func(t *testing.T) {
			s := newSim(t, "hikey-8", feat)
			var hopAt int64 = -1
			ran, hopped := false, false
			a := mustTask(t, s, TaskSpec{Comm: "hopper", CPU: 0, Prog: ProgramFunc(func(p *Task) Action {
				if !hopped {
					if !ran {
						ran = true
						return Run(100_000)
					}
					hopped = true
					hopAt = p.Now()
					return SetAffinity(1)
				}
				return Block()
			})})
			b := mustTask(t, s, TaskSpec{Comm: "next", CPU: 0, Prog: Hog()})
			var enqAt int64 = -1
			s.RunUntil(40*ms, func() bool {
				for _, q := range s.cpus[1].events.h {
					e := q.V
					if e.kind == evMsg && e.msg.kind == msgEnqueue && e.msg.task == a && enqAt < 0 {
						enqAt = e.t
					}
				}
				return false
			})
			if hopAt < 0 || a.CPU() != 1 {
				t.Fatalf("the hopper did not move (hop at %d, on CPU %d)", hopAt, a.CPU())
			}
			sched := s.cpus[0].m.Cost(hwmodel.OpSchedule)
			t.Logf("hop at %d ns, enqueue on CPU 1 at %d ns, next task on CPU 0 from %d ns; OpSchedule %d ns", hopAt, enqAt, b.lastArrival, sched)
			if got := s.cpus[0].Stats.RemoteLockAcq; got != 1 {
				t.Errorf("CPU 0 took %d remote rq locks, want 1 (the stopper's rq_lock() of CPU 1 in move_queued_task())", got)
			}
			if enqAt < hopAt+sched {
				t.Errorf("the enqueue on CPU 1 comes %d ns after the call, want at least the switch to the stopper (%d ns): the stopper does it", enqAt-hopAt, sched)
			}
			// __set_cpus_allowed_ptr()'s requeue of the running task
			// (doSetCPUsAllowed) is the hopper's own work, on its CPU,
			// in its syscall.
			m := s.cpus[0].m
			requeue := m.Cost(hwmodel.OpDequeue) + m.Cost(hwmodel.OpEnqueue) + 2*m.Cost(hwmodel.OpUpdateLoadAvg)
			if got := s.cpus[0].profile[SymSetCPUsAllowedPtr]; got < requeue {
				t.Errorf("CPU 0 spent %d ns in __set_cpus_allowed_ptr(), want at least the requeue's %d ns", got, requeue)
			}
			if d := b.lastArrival - hopAt; d < 2*sched {
				t.Errorf("the next task on CPU 0 starts (and its exec_start is taken) %d ns after the call, want at least two context switches (%d ns: to the stopper and from it)", d, 2*sched)
			}
		})
	}
}

// affinityTarget: the task's own CPU if the mask allows it, else the
// first allowed CPU after it, wrapping.
func TestAffinityTarget(t *testing.T) {
	for _, tc := range []struct {
		cur  int
		cpus []int
		want int
	}{
		{3, []int{3}, 3}, {3, []int{1, 3, 5}, 3}, {3, []int{5}, 5},
		{3, []int{1, 5}, 5}, {6, []int{1, 2}, 1}, {7, []int{0}, 0},
	} {
		if got := affinityTarget(tc.cur, tc.cpus, 8); got != tc.want {
			t.Errorf("affinityTarget(%d, %v, 8) = %d, want %d", tc.cur, tc.cpus, got, tc.want)
		}
	}
}
