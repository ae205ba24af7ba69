package bench

import (
	"fmt"
	"slices"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// The rt-app runner (rtapp.go): one rtThread per task instance, stepping
// through its phases and events as rt-app's thread_body() and
// run_event() do, whose mutexes and conditions are futex.go's servers.

// rtShared are the semaphores of the run, built in Setup before any task
// runs and only read afterwards.
type rtShared struct {
	cfg      *rtConfig
	grants   []*emu.Sem // per thread
	mutexReq []*emu.Sem // per mutex; nil: not managed
	condReq  []*emu.Sem // per condition
	syscall  int64
	all      []int // every CPU
}

// What a thread waits for when its program is next called.
const (
	rtNone = iota
	rtPendRun
	rtPendSleep
	rtPendTimer
	rtPendBlock
)

// rtThread is one thread (instance) of a task: its program state and
// results, owned by the CPU it runs on; read at barriers and after the
// run.
type rtThread struct {
	task   *rtTask
	idx    int
	comm   string
	sh     *rtShared
	t      *emu.Task
	tFirst int64

	started    bool
	iterBegun  bool
	phase      int
	phaseLoop  int
	threadLoop int
	ev         int
	step       int
	pending    int
	mark       int64
	wakeAt     int64
	curCPUs    []int
	timerNext  []int64
	timerInit  []bool

	loops, runNS, sleepNS, blockNS int64
	wuMax, wuSum, wuN, misses      int64
	exited                         bool
}

func (th *rtThread) next(t *emu.Task) emu.Action {
	now := t.Now()
	switch th.pending {
	case rtPendRun:
		th.runNS += now - th.mark
	case rtPendSleep:
		th.sleepNS += now - th.mark
	case rtPendTimer:
		th.sleepNS += now - th.mark
		lat := max(now-th.wakeAt, 0)
		th.wuMax = max(th.wuMax, lat)
		th.wuSum += lat
		th.wuN++
	case rtPendBlock:
		th.blockNS += now - th.mark
	}
	th.pending = rtNone
	if !th.started {
		th.started = true
		if th.task.delay > 0 {
			// clock_nanosleep(TIMER_ABSTIME, t_first).
			th.pending, th.mark = rtPendSleep, now
			return emu.Sleep(max(th.tFirst-now, 1))
		}
	}
	for {
		ph := &th.task.phases[th.phase]
		if !th.iterBegun {
			th.iterBegun = true
			// set_thread_affinity(): the phase's CPUs, else the task's,
			// else every CPU; only when they change.
			want := ph.cpus
			if want == nil {
				want = th.task.cpus
			}
			if want == nil {
				want = th.sh.all
			}
			if !slices.Equal(want, th.curCPUs) {
				th.curCPUs = want
				return emu.SetAffinity(want...).With(hwmodel.OpSyscall)
			}
		}
		if th.ev == len(ph.events) {
			th.loops++
			th.iterBegun = false
			th.ev, th.step = 0, 0
			th.phaseLoop++
			if ph.loop > 0 && th.phaseLoop == ph.loop {
				th.phaseLoop = 0
				th.phase++
				if th.phase == len(th.task.phases) {
					th.phase = 0
					th.threadLoop++
					if th.task.loop > 0 && th.threadLoop == th.task.loop {
						th.exited = true
						return emu.Exit()
					}
				}
			}
			continue
		}
		if a, ok := th.event(&ph.events[th.ev], now); ok {
			return a
		}
		th.ev++
		th.step = 0
	}
}

func allCPUs(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	return c
}

// done finishes the current event: the next call starts the next one.
func (th *rtThread) done(a emu.Action) (emu.Action, bool) {
	th.ev++
	th.step = 0
	return a, true
}

// event returns the current event's next action, or false when the event
// is over without one.
func (th *rtThread) event(e *rtEvent, now int64) (emu.Action, bool) {
	sh := th.sh
	switch e.kind {
	case rtRun, rtRuntime:
		// loadwait(): compute; runtime's wall-clock loop is the same
		// here (no frequency scaling).
		if e.ns == 0 {
			return emu.Action{}, false
		}
		th.pending, th.mark = rtPendRun, now
		return th.done(emu.Run(e.ns))
	case rtSleep:
		if e.ns == 0 {
			return emu.Action{}, false
		}
		th.pending, th.mark = rtPendSleep, now
		return th.done(emu.Sleep(e.ns).With(hwmodel.OpSyscall))
	case rtTimer:
		if !th.timerInit[e.res] {
			th.timerInit[e.res] = true
			th.timerNext[e.res] = th.tFirst
		}
		th.timerNext[e.res] += e.ns
		next := th.timerNext[e.res]
		if now < next {
			// clock_nanosleep(TIMER_ABSTIME): the hrtimer is armed
			// after the syscall entry, for next.
			th.pending, th.mark, th.wakeAt = rtPendTimer, now, next
			return th.done(emu.Sleep(max(next-now-sh.syscall, 1)).With(hwmodel.OpSyscall))
		}
		// The period is already over: a miss (negative slack); a
		// relative timer restarts from now.
		th.misses++
		if !th.task.timerAbs[e.res] {
			th.timerNext[e.res] = now
		}
		return emu.Action{}, false
	case rtLock:
		req := sh.mutexReq[e.res]
		if req == nil {
			return emu.Action{}, false // only this thread uses it
		}
		if th.step == 0 {
			th.step = 1
			th.mark = now
			return emu.SignalStamp(req, lockStamp(opLock, e.res, th.idx)).WithSync(), true
		}
		th.pending = rtPendBlock
		return th.done(emu.Wait(sh.grants[th.idx]))
	case rtUnlock:
		req := sh.mutexReq[e.res]
		if req == nil {
			return emu.Action{}, false
		}
		return th.done(emu.SignalStamp(req, lockStamp(opUnlock, e.res, th.idx)))
	case rtSignal:
		return th.done(emu.SignalStamp(sh.condReq[e.res], lockStamp(opSignal, 0, th.idx)))
	case rtBroad:
		return th.done(emu.SignalStamp(sh.condReq[e.res], lockStamp(opBroad, 0, th.idx)))
	case rtWait, rtSync:
		// pthread_cond_wait(): join the condition's waiters, release
		// the mutex, sleep until signalled and the mutex is ours again.
		// sync signals the condition first.
		for {
			switch th.step {
			case 0:
				th.step = 1
				th.mark = now
				if e.kind == rtSync {
					return emu.SignalStamp(sh.condReq[e.res], lockStamp(opSignal, 0, th.idx)), true
				}
			case 1:
				th.step = 2
				a := emu.SignalStamp(sh.condReq[e.res], lockStamp(opWait, e.mutex, th.idx))
				if sh.mutexReq[e.mutex] == nil {
					a = a.WithSync()
				}
				return a, true
			case 2:
				th.step = 3
				if req := sh.mutexReq[e.mutex]; req != nil {
					return emu.SignalStamp(req, lockStamp(opUnlock, e.mutex, th.idx)).WithSync(), true
				}
			default:
				th.pending = rtPendBlock
				return th.done(emu.Wait(sh.grants[th.idx]))
			}
		}
	case rtYield:
		return th.done(emu.Yield().With(hwmodel.OpSyscall))
	}
	panic(fmt.Sprintf("rtapp: unknown event %d", e.kind))
}

// inProgress is a thread's run, sleep and blocked time not yet accounted
// at now.
func (th *rtThread) inProgress(now int64) (run, sleep, block int64) {
	if th.exited {
		return 0, 0, 0
	}
	d := max(now-th.mark, 0)
	switch th.pending {
	case rtPendRun:
		return d, 0, 0
	case rtPendSleep, rtPendTimer:
		return 0, d, 0
	case rtPendBlock:
		return 0, 0, d
	}
	return 0, 0, 0
}
