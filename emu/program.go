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
	// ActBlock blocks until another task wakes it (a wait queue); a
	// wakeup that arrived earlier is consumed instead of sleeping.
	ActBlock
	// ActWake wakes Target (try_to_wake_up() from this CPU).
	ActWake
	// ActYield is sched_yield().
	ActYield
	// ActExit ends the task.
	ActExit
)

// Action is one step of a Program. Kernel lists the kernel operations the
// step runs first (a syscall's entry and body, e.g. OpSyscall, OpPipeWrite),
// charged at their preset costs.
type Action struct {
	Op     ActionOp
	NS     int64
	Target *Task
	Sync   bool // ActWake: WF_SYNC, the waker is about to sleep
	Kernel []hwmodel.KernelOp
}

// Run, Sleep, Block, Wake, Yield and Exit build Actions.
func Run(ns int64) Action   { return Action{Op: ActRun, NS: ns} }
func Sleep(ns int64) Action { return Action{Op: ActSleep, NS: ns} }
func Block() Action         { return Action{Op: ActBlock} }
func Wake(t *Task) Action   { return Action{Op: ActWake, Target: t} }
func Yield() Action         { return Action{Op: ActYield} }
func Exit() Action          { return Action{Op: ActExit} }
func (a Action) With(ops ...hwmodel.KernelOp) Action {
	a.Kernel = append(a.Kernel, ops...)
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
	a := t.prog.Next(t)
	for _, op := range a.Kernel {
		rq.cost(op)
	}
	switch a.Op {
	case ActRun:
		if a.NS <= 0 {
			panic(fmt.Sprintf("emu: task %v: Run(%d): compute must be positive", t, a.NS))
		}
		t.remaining = a.NS
	case ActSleep:
		if a.NS <= 0 {
			panic(fmt.Sprintf("emu: task %v: Sleep(%d): duration must be positive", t, a.NS))
		}
		t.timer = &sleepTimer{task: t}
		rq.events.push(event{t: rq.now + a.NS, kind: evTimer, tm: t.timer})
		rq.schedule(true)
	case ActBlock:
		if t.wakePending > 0 {
			t.wakePending--
			return
		}
		rq.schedule(true)
	case ActWake:
		flags := wfTTWU
		if a.Sync {
			flags |= wfSync
		}
		rq.tryToWakeUp(a.Target, flags)
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

// exitTask is do_exit() as the scheduler sees it: dequeue for good.
func (rq *RQ) exitTask(t *Task) {
	rq.lockRQ(SymSchedule)
	rq.updateRQClock()
	rq.deactivateTask(t, dequeueSleep)
	rq.unlockRQ(SymSchedule)
	t.setState(TaskDead)
	rq.schedule(false)
}
