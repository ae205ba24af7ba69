package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
)

// Program is what a task does: a generator of actions, asked for the next
// one each time the previous completes. It runs on the task's CPU and must
// be deterministic given the task (use t.Rand() for randomness).
type Program interface {
	Next(t *Task) Action
}

// ActionOp is the kind of an Action.
type ActionOp uint8

const (
	// ActRun computes for NS ns of CPU time in user mode (preemptible).
	ActRun ActionOp = iota
	// ActSleep sleeps NS ns (a timed sleep: an hrtimer wakes the task on
	// the CPU it slept on).
	ActSleep
	// ActWait waits for a signal on Sem (a wait queue): a pending signal
	// is consumed at once, else the task sleeps until one comes.
	ActWait
	// ActSignal signals Sem, waking its owner if it waits on it.
	ActSignal
	// ActYield is sched_yield().
	ActYield
	// ActExit ends the task.
	ActExit
	// ActSetAffinity is sched_setaffinity() on itself: the task moves to
	// an allowed CPU if its current one is not (via the stopper, modeled
	// as a block and a wakeup on the new CPU at the next barrier).
	ActSetAffinity
)

// Action is one step of a Program. Kernel lists the kernel operations the
// step runs first (a syscall's entry and body, e.g. OpSyscall, OpPipeWrite),
// charged at their preset costs.
type Action struct {
	Op       ActionOp
	NS       int64
	Slack    int64 // ActSleep: the timer's slack (SleepRange, hrtimer.go)
	Sem      *Sem
	HasStamp bool  // ActSignal: NS is the stamp (else the signaller's clock)
	Sync     bool  // ActSignal: WF_SYNC, the waker is about to sleep
	CPUs     []int // ActSetAffinity
	Kernel   []hwmodel.KernelOp
	// After lists, for an ActWait, the kernel operations that finish the
	// waiting syscall once a signal is consumed: the task's CPU runs them
	// before the task's next action (AfterWait).
	After []hwmodel.KernelOp
	// Pipe lists the fs/pipe.c steps the action runs on the task's CPU
	// (OnPipe, pipe.go): a copy-out before Kernel, the others after it.
	Pipe []PipeStep
	// FileGet and FilePut are the struct file whose reference the
	// action's syscall takes at its entry and drops at its return, through
	// a shared descriptor table (FdGet, FdPut: file.go); nil: none.
	FileGet, FilePut *File
	// Unix is the AF_UNIX socket step the action runs after its kernel
	// work (OnUnix, unixsock.go); nil: none.
	Unix *UnixStep
	// Bytes is the data the action moves through the CPU's caches
	// (Touching), which ages the lines the CPU holds out of its L1 and
	// L2 (hwmodel.Capacity).
	Bytes int64
}

// Run, Sleep, Block, Wake, Yield, Exit and SetAffinity build Actions.
// Block and Wake wait on and signal the task's own semaphore.
func Run(ns int64) Action   { return Action{Op: ActRun, NS: ns} }
func Sleep(ns int64) Action { return Action{Op: ActSleep, NS: ns} }
func Block() Action         { return Action{Op: ActWait} }
func Wake(t *Task) Action   { return Action{Op: ActSignal, Sem: t.sem} }
func Yield() Action         { return Action{Op: ActYield} }
func Exit() Action          { return Action{Op: ActExit} }

// SetAffinity restricts the task to cpus (and moves it off a CPU that is
// no longer allowed).
func SetAffinity(cpus ...int) Action { return Action{Op: ActSetAffinity, CPUs: cpus} }

// With runs the given kernel operations (a syscall's path) before the
// action.
func (a Action) With(ops ...hwmodel.KernelOp) Action {
	a.Kernel = append(a.Kernel, ops...)
	return a
}

// AfterWait adds kernel operations that a Wait runs once it has consumed
// a signal, on the task's CPU, before the task's next action: the part of
// a blocking receive that follows the sleep. A socket read is the case:
// udp_recvmsg() (net/ipv4/udp.c, v6.6) calls __skb_recv_udp(), which
// finds the receive queue empty and sleeps in
// __skb_wait_for_more_packets(); only after the wakeup does it dequeue
// the skb, skb_copy_datagram_msg() it and free it (skb_consume_udp()), so
// that work lies on the path from the peer's send to the reader's next
// step. With the operations as With, they would run before the sleep,
// hidden behind the peer's work. (Pipes do the same with PipeCopyOut.)
func (a Action) AfterWait(ops ...hwmodel.KernelOp) Action {
	a.After = append(a.After[:len(a.After):len(a.After)], ops...)
	return a
}

// Touching says the action moves n bytes of data through the CPU's
// caches: a copy's source and destination (copy_from_user() of a payload
// into a fresh skb, skb_copy_datagram_msg() out of it). The CPU's lines
// age by it (weave.Log.Touch), counted when the action starts.
// Simplified: only such bulk data is counted; the kernel paths' own
// working set (their code's data, re-touched every call) is taken as
// resident, so it ages nothing.
func (a Action) Touching(n int64) Action {
	a.Bytes += n
	return a
}

// WithSync marks a signal WF_SYNC (the waker is about to sleep).
func (a Action) WithSync() Action {
	a.Sync = true
	return a
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(t *Task) Action

// Next calls f.
func (f ProgramFunc) Next(t *Task) Action { return f(t) }

// Loop returns a program that repeats the given actions forever.
func Loop(actions ...Action) Program {
	i := 0
	return ProgramFunc(func(*Task) Action {
		a := actions[i%len(actions)]
		i++
		return a
	})
}

// Hog is a CPU hog: it computes forever, in chunks.
func Hog() Program { return Loop(Run(10 * nsecPerMsec)) }

// doAction runs curr's next action.
func (rq *RQ) doAction(t *Task) {
	// The last Wait's finishing work comes first (Action.AfterWait): the
	// syscall returns before the program goes on.
	if ops := t.afterWait; len(ops) > 0 {
		t.afterWait = nil
		for _, op := range ops {
			rq.cost(op)
		}
	}
	a := t.prog.Next(t)
	rq.log.Touch(a.Bytes)
	if len(a.Pipe) > 0 {
		rq.runPipeSteps(t, &a, true)
	}
	for _, op := range a.Kernel {
		rq.cost(op)
	}
	if (a.Op == ActWait || a.Op == ActSignal) && rq.now >= rq.stepUntil {
		rq.park(t, a) // hold.go
		return
	}
	rq.finishAction(t, &a)
}

// finishAction runs an action from its decision point on: the pipe steps
// that test the other side, then the operation itself.
func (rq *RQ) finishAction(t *Task, a *Action) {
	// The shared accesses of a wait or a signal are logged at its
	// decision point, where a held one resumes (hold.go), like the pipe
	// steps that test the other side: the file reference the syscall
	// takes, the pipe's and the socket's steps, the reference it drops.
	if a.FileGet != nil {
		rq.fileRef(a.FileGet, SymFgetLight)
	}
	if len(a.Pipe) > 0 {
		rq.runPipeSteps(t, a, false)
	}
	if a.Unix != nil {
		rq.runUnixStep(t, a)
	}
	// fdput() is the syscall's last step: after pipe_write()'s (or the
	// socket's).
	if a.FilePut != nil {
		rq.fileRef(a.FilePut, SymFput)
	}
	switch a.Op {
	case ActRun:
		if a.NS <= 0 {
			panic(fmt.Sprintf("emu: task %v: Run(%d): compute must be positive", t, a.NS))
		}
		t.remaining = a.NS
	case ActSleep:
		if a.Slack == 0 && a.NS <= 0 {
			panic(fmt.Sprintf("emu: task %v: Sleep(%d): duration must be positive", t, a.NS))
		}
		rq.sleepRange(t, a.NS, a.Slack)
	case ActWait:
		sem := a.Sem
		if sem == nil {
			sem = t.sem
		}
		if sem.owner != t {
			panic(fmt.Sprintf("emu: task %v waits on %v, owned by %v", t, sem, sem.owner))
		}
		t.afterWait = a.After
		if i := sem.firstBy(rq.now); i >= 0 {
			t.stamp = sem.take(i)
			return
		}
		// The condition check failed as far as this CPU can see: the
		// barrier settles whether it sleeps (hold.go).
		rq.hold(t, *a, sem)
	case ActSignal:
		flags := wfTTWU
		if a.Sync {
			flags |= wfSync
		}
		stamp := rq.now
		if a.HasStamp {
			stamp = a.NS
		}
		if rq.holdsSignal(a.Sem) {
			rq.holdSignal(t, *a, a.Sem, stamp, flags) // hold.go
			return
		}
		rq.signal(a.Sem, stamp, flags)
	case ActSetAffinity:
		if len(a.CPUs) == 0 {
			panic(fmt.Sprintf("emu: task %v: SetAffinity with no CPU", t))
		}
		for _, c := range a.CPUs {
			if c < 0 || c >= len(rq.sim.cpus) {
				panic(fmt.Sprintf("emu: task %v: SetAffinity CPU %d out of range", t, c))
			}
		}
		// __set_cpus_allowed_ptr() on itself: affine_move_task()
		// queues the stopper, which preempts the task and moves it
		// (affinity.go: migrationCPUStop, run from schedule()).
		rq.doSetCPUsAllowed(t)
		t.waitingOn = affinityWait
		rq.affinityCPUs = a.CPUs
		rq.schedule(true)
	case ActYield:
		rq.Stats.YldCount++
		rq.yieldTaskFair(t)
		rq.schedule(false)
	case ActExit:
		rq.exitTask(t)
	default:
		panic(fmt.Sprintf("emu: task %v: unknown action %d", t, a.Op))
	}
}

// exitTask is do_exit() as the scheduler sees it: dequeue for good. The
// exit's own work (the Exit action's kernel ops, such as exit_mmap() of a
// process) has been charged by then: the task's exit time (ExitedAt) is
// when a parent waiting in wait4() could reap it.
func (rq *RQ) exitTask(t *Task) {
	t.exitedAt = rq.now
	rq.traceProcessExit(t)
	rq.lockRQ(SymSchedule)
	rq.updateRQClock()
	// DEQUEUE_SPECIAL: never delayed (v6.12 delays TASK_DEAD's dequeue
	// too and task_dead_fair() finishes it at once: the same end).
	rq.deactivateTask(t, dequeueSleep|dequeueSpecial)
	rq.unlockRQ(SymSchedule)
	t.setState(TaskDead)
	rq.exited++
	rq.schedule(false)
	rq.traceProcessFree(t)
}
