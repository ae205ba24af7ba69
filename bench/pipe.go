package bench

import (
	"flag"
	"fmt"
	"io"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// perf bench sched pipe (tools/perf/bench/sched-pipe.c): two tasks pass a
// token through a pair of pipes, loops round trips each; the result is
// the elapsed time per round trip. Each pipe is the reader's semaphore:
// pipe_write() wakes the reader with a sync wakeup
// (wake_up_interruptible_sync_poll, WF_SYNC), the reader's pipe_read()
// sleeps on it. A 4-byte token never fills the 64 KiB pipe, so the write
// side never blocks and has no space semaphore. Each pipe is also its
// shared memory (emu.Pipe, fs/pipe.c's rules): a write runs pipe_write()
// on the pipe's lines under its mutex (emu.PipeWrite, charging
// OpPipeWrite around it), a read pipe_read() (PipeReadWait on the wait,
// PipeCopyOut on the task's next action, charging OpPipeRead), so the two
// CPUs pass the pipe's lines back and forth.
//
// Simplified: processes and threads (-T) behave the same here (the mm
// switch of process mode is not charged); the tasks start spread over two
// cores as fork balancing would put them on an idle machine.
type pipeBench struct {
	Common
	loops    int
	threaded bool
	m        *hwmodel.Machine
	tasks    [2]*emu.Task
	// end and exited are written by each task's CPU as it exits, read
	// at barriers.
	end    [2]int64
	exited [2]bool
	trips  [2]int // round trips begun, per task
}

func init() {
	Register(Spec{
		Name: "pipe",
		Doc:  "perf bench sched pipe: two tasks ping-pong a token through two pipes",
		Examples: []string{
			"emu run -topo host -workload pipe -l 100000",
			"emu run -topo spr-2s -workload pipe -l 200000 -T -cgroup docker",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &pipeBench{}
			AddCommon(fs, &w.Common)
			for _, n := range []string{"l", "loop"} {
				fs.IntVar(&w.loops, n, pipeDefaultLoops, "number of round trips (perf -l/--loop); perf's default, 1000000, is tens of seconds of host time or more on 2 cores (131 s measured on a loaded 2-vCPU VM): pass a smaller -l for a quick run")
			}
			for _, n := range []string{"T", "threaded"} {
				fs.BoolVar(&w.threaded, n, false, "threads instead of processes (perf -T/--threaded)")
			}
			return func(m *hwmodel.Machine) (Workload, error) {
				if w.loops <= 0 {
					return nil, flagErr("-l", "loops must be positive, got %d", w.loops)
				}
				if int64(w.loops) > pipeMaxLoops {
					return nil, flagErr("-l", "%d round trips is out of range (allowed: 1..%d: the run's safety bound, 1 ms per round trip, stays within %d s of virtual time)", w.loops, pipeMaxLoops, MaxSeconds)
				}
				if len(m.CPUs) < 1 {
					return nil, flagErr("-topo", "machine has no CPUs")
				}
				w.m = m
				return w, nil
			}
		},
	})
}

func (w *pipeBench) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	// A 4-byte token never fills a pipe: no room to wait for. The pipe
	// steps charge OpPipeWrite and OpPipeRead around the pipe's mutex.
	path := &chanPath{
		write: emu.Signal(nil).With(hwmodel.OpSyscall).WithSync(),
		read:  emu.Wait(nil).With(hwmodel.OpSyscall),
	}
	pipes := [2]channel{path.open("pipe0", 0), path.open("pipe1", 0)}
	// pipe i is read by task i, on its CPU's node; its one writer is
	// writer 0.
	var pp [2]*emu.Pipe
	for i := range 2 {
		p, err := s.NewPipe(emu.PipeSpec{Name: pipes[i].data.Name, Data: pipes[i].data, Writers: 1, Size: pipeTokenSize, CPU: Spread(s, i)})
		if err != nil {
			return err
		}
		pp[i] = p
	}
	for i := range 2 {
		n := 0 // actions issued, owned by the task's CPU
		rd, wr := pp[i], pp[1-i]
		// A read's copy-out runs with the task's next action: the
		// write after it, or the exit.
		read := pipes[i].recv().OnPipe(rd, emu.PipeReadWait, 0)
		first := pipes[1-i].send().OnPipe(wr, emu.PipeWrite, 0)
		write := pipes[1-i].send().OnPipe(rd, emu.PipeCopyOut, 0).OnPipe(wr, emu.PipeWrite, 0)
		exit := emu.Exit()
		if i == 0 {
			exit = exit.OnPipe(rd, emu.PipeCopyOut, 0) // task 0 ends with a read
		}
		prog := emu.ProgramFunc(func(t *emu.Task) emu.Action {
			if n == 2*w.loops {
				w.end[i] = t.Now()
				w.exited[i] = true
				return exit
			}
			// Task 0 writes then reads; task 1 reads then writes.
			isWrite := (n+i)%2 == 0
			n++
			w.trips[i] = (n + 1) / 2
			switch {
			case isWrite && n == 1:
				return first
			case isWrite:
				return write
			}
			return read
		})
		t, err := s.NewTask(emu.TaskSpec{
			// perf bench's comm (builtin-bench.c run_bench():
			// prctl(PR_SET_NAME)), inherited by the forked child or
			// the thread; both loop in worker_thread().
			Comm: "sched-pipe", UserSym: "worker_thread", DSO: "perf", CPU: Spread(s, i), Group: g,
			Prog: prog, Sems: []*emu.Sem{pipes[i].data}, MM: taskMM(w.threaded, i),
		})
		if err != nil {
			return err
		}
		w.tasks[i] = t
	}
	return nil
}

// pipeTokenSize is the token sched-pipe.c writes and reads: an int.
const pipeTokenSize = 4

// pipeDefaultLoops is perf's LOOPS_DEFAULT.
const pipeDefaultLoops = 1_000_000

// pipeMaxLoops keeps Limit within maxVirtualNS.
const pipeMaxLoops = (maxVirtualNS - 1_000_000_000) / 1_000_000

// Limit is a safety bound: a round trip slower than 1 ms of virtual time
// means something is broken.
func (w *pipeBench) Limit() int64 { return int64(w.loops)*1_000_000 + 1_000_000_000 }

func (w *pipeBench) LimitNote() string {
	return fmt.Sprintf("the safety bound of -l %d: 1 ms per round trip plus 1 s", w.loops)
}

func (w *pipeBench) Done(*emu.Sim) bool { return w.exited[0] && w.exited[1] }

// elapsed is the run's time and the round trips it covers: all of them
// when both tasks exited, else (an interrupted run) those begun so far.
func (w *pipeBench) elapsed(s *emu.Sim) (ns int64, loops int) {
	if w.Done(s) {
		return max(w.end[0], w.end[1]), w.loops
	}
	return s.Now(), min(w.trips[0], w.trips[1])
}

// LoopsDone is the share of the round trips begun so far.
func (w *pipeBench) LoopsDone() float64 {
	return float64(w.trips[0]+w.trips[1]) / float64(2*max(w.loops, 1))
}

func (w *pipeBench) Report(out io.Writer, s *emu.Sim) error {
	kind := "processes"
	if w.threaded {
		kind = "threads"
	}
	ns, loops := w.elapsed(s)
	usecsOp := float64(ns) / 1e3 / float64(max(loops, 1))
	// An interrupted run, or one its safety bound stopped, says so (the
	// real tool has no such line: it has no bound and dies on SIGINT).
	early := ""
	if !w.Done(s) {
		early = fmt.Sprintf("stopped early: %.3f s ran, %d of the %d round trips were done; the time and rates below cover those\n",
			float64(s.Now())/1e9, loops, w.loops)
	}
	_, err := fmt.Fprintf(out, "# Running 'sched/pipe' benchmark:\n# Executed %d pipe operations between two %s\n%s\n%s\n\n %14f usecs/op\n %14d ops/sec\n",
		loops, kind, early, totalTime(ns), usecsOp, int64(float64(loops)*1e9/float64(max(ns, 1))))
	return err
}

func (w *pipeBench) Metrics(s *emu.Sim) Metrics {
	ns, loops := w.elapsed(s)
	return Metrics{Primary: "ops_per_sec", HigherIsBetter: true, Values: map[string]float64{
		"ops_per_sec":  float64(loops) * 1e9 / float64(max(ns, 1)),
		"usecs_per_op": float64(ns) / 1e3 / float64(max(loops, 1)),
		"total_sec":    float64(ns) / 1e9,
	}}
}

// totalTime is perf bench's " %14s: %lu.%03lu [sec]" line.
func totalTime(ns int64) string {
	return fmt.Sprintf(" %14s: %d.%03d [sec]", "Total time", ns/1e9, ns%1e9/1e6)
}
