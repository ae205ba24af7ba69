package emu

import (
	"slices"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestRacedWakeupLatency: perf bench sched pipe's two tasks on
// xeon-e5-2x10 (v5.15-cfs with UCLAMP, the uclamp-pipe study's pipe row),
// each writing the other's pipe and sleeping in its own read, on idle
// CPUs of one LLC: every wakeup takes ttwu_queue()'s direct path (core.c
// v5.15: try_to_wake_up(); ttwu_queue_cond() declines inside the LLC),
// and the wakee is on its runqueue only once the waker's rq_unlock() is
// done: after try_to_wake_up()'s frame, select_task_rq() and the enqueue
// under the target's lock. Then the idle CPU's exit and __schedule(). A
// waker that saw the wakee running (published at the last barrier) while
// it had gone to sleep has the wakeup completed at the barrier
// (ttwuRaced); before the fix that wakeup enqueued the wakee at the
// signal's time, so it ran sooner than any kernel path allows (issue 42:
// the row's UCLAMP-on run took that path for a quarter of its wakeups and
// came out faster than UCLAMP off).
func TestRacedWakeupLatency(t *testing.T) {
	s := newSim(t, "xeon-e5-2x10", "v5.15-cfs,+UCLAMP")
	s.EnableTrace(time10s, 0)
	const trips = 400
	var sems [2]*Sem
	var pipes [2]*Pipe
	for i := range 2 {
		sems[i] = NewSem("pipe"+string(rune('0'+i)), 0)
		p, err := s.NewPipe(PipeSpec{Name: sems[i].Name, Data: sems[i], Writers: 1, Size: 4, CPU: 7 + i})
		if err != nil {
			t.Fatal(err)
		}
		pipes[i] = p
	}
	var tasks [2]*Task
	for i := range 2 {
		rd, wr := pipes[i], pipes[1-i]
		read := Wait(sems[i]).With(hwmodel.OpSyscall).OnPipe(rd, PipeReadWait, 0)
		first := Signal(sems[1-i]).With(hwmodel.OpSyscall).WithSync().OnPipe(wr, PipeWrite, 0)
		write := Signal(sems[1-i]).With(hwmodel.OpSyscall).WithSync().OnPipe(rd, PipeCopyOut, 0).OnPipe(wr, PipeWrite, 0)
		n := 0
		tasks[i] = mustTask(t, s, TaskSpec{Comm: "sched-pipe", CPU: 7 + i, Sems: []*Sem{sems[i]}, Prog: ProgramFunc(func(*Task) Action {
			if n == 2*trips {
				return Block()
			}
			isWrite := (n+i)%2 == 0
			n++
			switch {
			case isWrite && n == 1:
				return first
			case isWrite:
				return write
			}
			return read
		})})
	}
	s.Run(4 * ms)
	raced := int64(0)
	for _, rq := range s.cpus {
		raced += rq.Stats.RacedWakeups
	}
	// The wakee's switch-in after each sched_waking of it.
	floor := s.m.Cost(hwmodel.OpTTWU) + s.m.Cost(hwmodel.OpEnqueue) + s.m.Cost(hwmodel.OpIdleExit) + s.m.Cost(hwmodel.OpSchedule)
	checked, short := 0, 0
	var lats []int64
	for i, p := range tasks {
		var in, out, waking []int64
		for _, r := range s.cpus[p.cpu].trace {
			if r.kind == trSwitch && r.next.task == p {
				in = append(in, r.t)
			}
			if r.kind == trSwitch && r.ctx.task == p {
				out = append(out, r.t)
			}
		}
		for _, r := range s.cpus[tasks[1-i].cpu].trace {
			if r.kind == trWaking && r.task == p && !r.pending {
				waking = append(waking, r.t)
			}
		}
		for _, w := range waking {
			k, _ := slices.BinarySearch(in, w+1)
			j, _ := slices.BinarySearch(out, w)
			if k == len(in) || j == 0 || j < len(out) && out[j] < in[k] {
				continue // not asleep before the signal, or not back in
			}
			checked++
			lat := in[k] - w
			lats = append(lats, lat)
			if lat < floor {
				short++
				if short <= 5 {
					t.Errorf("%v woken at %d ns ran at %d ns, %d ns later: sooner than try_to_wake_up(), the enqueue, the idle exit and __schedule() take (%d ns)", p, w, in[k], lat, floor)
				}
			}
		}
	}
	if checked < trips || raced == 0 {
		t.Fatalf("%d wakeups checked, %d raced: the scenario tests nothing", checked, raced)
	}
	if short > 0 {
		t.Errorf("%d of %d wakeups too soon (%d raced)", short, checked, raced)
	}
	slices.Sort(lats)
	t.Logf("%d wakeups checked, %d raced; signal to switch-in min %d, median %d, max %d ns", checked, raced, lats[0], lats[len(lats)/2], lats[len(lats)-1])
}
