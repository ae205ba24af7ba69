package emu

import "fmt"

// Shared counts, for a workload's state that tasks on several CPUs
// change and read in the kernel: how full a pipe or a socket's send
// buffer is, which its writers test before they write (fs/pipe.c
// pipe_write()'s pipe_full(), sock_alloc_send_pskb()'s sk_wmem_alloc <
// sk_sndbuf) and its reader after it reads (pipe_read()'s was_full,
// unix_write_space()'s unix_writable()). A SharedCount follows the view
// pattern (view.go): a task reads the value published at the last barrier
// plus what its CPU added since, and the barrier adds every CPU's changes
// (as RQ.tgDelta does for tg->load_avg). On one CPU that is the exact
// count; across CPUs a writer does not see the others' changes of the
// same epoch (an epoch is about an IPI's delivery, 1-2.5 µs), which a
// workload that must not lose a wakeup repairs in a barrier hook
// (OnBarrier), where every count and task is exact.

// SharedCount is a count changed by tasks on any CPU. Its published value
// is the barrier's; each CPU's changes since are the CPU's
// (RQ.countDelta).
type SharedCount struct {
	name string
	pub  int64 // barrier: the sum of every CPU's changes
}

// countDelta is one CPU's change of a SharedCount since the last barrier.
type countDelta struct {
	c *SharedCount
	d int64
}

// NewSharedCount returns a count at zero. It is for set-up time.
func (s *Sim) NewSharedCount(name string) *SharedCount { return &SharedCount{name: name} }

func (c *SharedCount) String() string { return "count(" + c.name + ")" }

// Read is the count as running task t's CPU sees it: the published value
// plus that CPU's own changes since the last barrier. Call it from t's
// program (on t's CPU), or between runs and in a barrier hook, where it
// is exact.
func (c *SharedCount) Read(t *Task) int64 { return c.readOn(t.sim.cpus[t.cpu]) }

// readOn is the count as CPU rq sees it (Read).
func (c *SharedCount) readOn(rq *RQ) int64 {
	for _, e := range rq.countDeltas {
		if e.c == c {
			return c.pub + e.d
		}
	}
	return c.pub
}

// Add adds d to the count on running task t's CPU; others see it after
// the next barrier. Call it from t's program.
func (c *SharedCount) Add(t *Task, d int64) { c.addOn(t.sim.cpus[t.cpu], d) }

// addOn adds d to the count on CPU rq (Add).
func (c *SharedCount) addOn(rq *RQ, d int64) {
	for i := range rq.countDeltas {
		if rq.countDeltas[i].c == c {
			rq.countDeltas[i].d += d
			return
		}
	}
	rq.countDeltas = append(rq.countDeltas, countDelta{c, d})
}

// Value is the published count: exact between runs and in a barrier hook.
func (c *SharedCount) Value() int64 { return c.pub }

// AddAtBarrier changes the published count, from a barrier hook.
func (c *SharedCount) AddAtBarrier(s *Sim, d int64) {
	if !s.inHooks {
		panic(fmt.Sprintf("emu: %v: AddAtBarrier outside a barrier hook", c))
	}
	c.pub += d
}

// OnBarrier registers f to run at every barrier, after the epoch's posted
// changes are applied, its held waits settled and the shared counts'
// changes added: every task's state and every count is exact there. f
// gets the CPUs the barrier visits, in order (every CPU whose tasks ran
// in the epoch is among them). It may signal (SignalAtBarrier) and change
// counts (AddAtBarrier); it must not depend on anything but the model's
// state. Set it before Run.
func (s *Sim) OnBarrier(f func(cpus []int)) { s.barrierHooks = append(s.barrierHooks, f) }

// foldCounts adds the visited CPUs' count changes to the published values
// and runs the barrier hooks.
func (s *Sim) foldCounts() {
	for _, i := range s.visit {
		rq := s.cpus[i]
		for _, e := range rq.countDeltas {
			e.c.pub += e.d
		}
		clear(rq.countDeltas)
		rq.countDeltas = rq.countDeltas[:0]
	}
	if len(s.barrierHooks) == 0 {
		return
	}
	s.inHooks = true
	for _, f := range s.barrierHooks {
		f(s.visit)
	}
	s.inHooks = false
	s.extendVisit()
}

// SignalAtBarrier signals sem from a barrier hook as waker's CPU at the
// barrier's time (the end of the epoch), WF_SYNC when sync: a signal
// decided at the barrier, such as a wakeup its waker could not see to
// give in its epoch. A sleeping owner is woken through the raced path
// (ttwuRaced: the waker's try_to_wake_up() as its debt), else the signal
// is left pending.
func (s *Sim) SignalAtBarrier(waker *Task, sem *Sem, sync bool) {
	if !s.inHooks {
		panic(fmt.Sprintf("emu: SignalAtBarrier(%v, %v) outside a barrier hook", waker, sem))
	}
	if sem.owner == nil {
		panic(fmt.Sprintf("emu: SignalAtBarrier: %v has no owner", sem))
	}
	flags := wfTTWU
	if sync {
		flags |= wfSync
	}
	from := s.cpus[waker.cpu]
	s.touch(from)
	s.touch(s.cpus[sem.owner.cpu])
	op := remoteOp{kind: opSignal, t: s.epochEnd, from: from.cpu, task: sem.owner, sem: sem, stamp: s.epochEnd,
		flags: flags, trCtx: traceWho{task: waker}}
	s.applySignal(&op)
	s.flushRacedWakes()
}

// SeesAsleepOn reports whether running task t's CPU sees task o asleep on
// sem: exactly if it owns o, else as the last barrier published o
// (taskView). In a barrier hook it is exact.
func (t *Task) SeesAsleepOn(o *Task, sem *Sem) bool {
	if t.sim.inHooks {
		return asleepOn(o.state, o.waitingOn, sem)
	}
	v := t.sim.cpus[t.cpu].taskView(o)
	return asleepOn(v.state, v.waitingOn, sem)
}

// AsleepOn reports whether task o sleeps on sem; for a barrier hook.
func (s *Sim) AsleepOn(o *Task, sem *Sem) bool {
	if !s.inHooks {
		panic(fmt.Sprintf("emu: AsleepOn(%v) outside a barrier hook", o))
	}
	return asleepOn(o.state, o.waitingOn, sem)
}
