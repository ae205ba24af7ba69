package emu

import (
	"fmt"
	"math/bits"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rqemu/rqemu/contention"
)

// Run advances the machine to virtual time until: epochs no longer than
// Epoch, each stepping every CPU that has an event in it, then a barrier
// (cross-CPU changes in canonical order, the weave, publication, checks).
// Epochs in which no CPU has an event are skipped.
//
// The serial driver steps the CPUs in CPU order on the calling goroutine.
// The parallel driver steps them on worker goroutines: one per modeled CPU
// when the host has that many CPUs to pin them to, otherwise one per
// allowed host CPU, each stepping a shard of CPUs grouped by LLC (so that
// modeled cross-LLC traffic is host cross-core traffic). A CPU's step
// touches only its own state, the real shared objects (whose values no
// decision reads) and the snapshots, so the two drivers give the same
// bytes; TestDriversAgree proves it on every preset.
func (s *Sim) Run(until int64) { s.RunUntil(until, nil) }

// RunUntil is Run that also stops at the first barrier where done reports
// true (called only at barriers, by the engine's goroutine), and reports
// whether it stopped that way. The clock then stands at that barrier.
func (s *Sim) RunUntil(until int64, done func() bool) bool {
	stopped := false
	if s.cfg.Driver == "parallel" {
		s.workers = s.startWorkers()
		defer func() {
			s.workers.stop()
			s.workers = nil
		}()
	}
	if len(s.nextAt) != len(s.cpus) {
		s.nextAt = make([]int64, len(s.cpus))
		s.live = make([]uint64, (len(s.cpus)+63)/64)
	}
	// Each CPU's next step, kept from barrier to barrier: a CPU's step
	// touches only its own state, so stepping one never moves another's,
	// and a barrier updates the steps of the CPUs it visits (visit.go).
	// The run may start after changes made between runs: every CPU is
	// looked at once.
	s.until = until
	s.needAll()
	for i := range s.cpus {
		s.setNextAt(i)
	}
	for {
		next := int64(-1)
		for w, x := range s.live {
			for ; x != 0; x &= x - 1 {
				t := s.nextAt[w*64+bits.TrailingZeros64(x)]
				if next < 0 || t < next {
					next = t
				}
			}
		}
		if len(s.carried) > 0 && (next < 0 || next > s.epochEnd) {
			// A wait held past the barrier (hold.go) is settled by
			// the next one, which has the signals up to its dequeue.
			next = s.epochEnd
		}
		if s.space.Pending() > 0 && (next < 0 || next > s.epochEnd) {
			// The weave still has accesses to serve (CPUs wait on
			// busy lines): the barriers go on, epoch by epoch.
			next = s.epochEnd
		}
		if next < 0 || next >= until {
			break
		}
		// Epochs are aligned to multiples of Epoch and never go back:
		// an event stamped before the last barrier (its CPU was busy
		// past it) is taken in the next epoch.
		start := max(next/s.epoch*s.epoch, s.epochEnd)
		end := min(start+s.epoch, until)
		s.epochStart, s.epochEnd = start, end

		// The CPUs with a step before the epoch's end, which the
		// barrier then visits; a CPU with nothing before it is not
		// stepped (its step would return at once).
		s.stepped = s.stepped[:0]
		for w, x := range s.live {
			for ; x != 0; x &= x - 1 {
				i := w*64 + bits.TrailingZeros64(x)
				if s.nextAt[i] < end {
					s.mark(i)
					s.stepped = append(s.stepped, i)
				}
			}
		}
		s.stepCPUs(s.stepped)
		s.barrier(s.stepped)
		if done != nil && done() {
			until = s.epochEnd
			stopped = true
			break
		}
	}
	for _, rq := range s.cpus {
		rq.catchUp(until)
	}
	s.now = until
	return stopped
}

// stepCPUs steps cpus (in CPU order) to the epoch's end: the epoch's
// CPUs, and the barrier's passes over the CPUs held at a wait (hold.go).
// The parallel driver hands them to its workers, the serial driver steps
// them in order (a CPU's step touches only its own state, so either gives
// the same bytes).
func (s *Sim) stepCPUs(cpus []int) {
	if s.workers != nil {
		s.workers.step(s.epochEnd, cpus)
	} else {
		s.stepSerial(cpus)
	}
}

// stepSerial steps cpus to the epoch's end on the calling goroutine.
func (s *Sim) stepSerial(cpus []int) {
	for _, i := range cpus {
		if p := s.cpus[i].safeStep(s.epochEnd); p != nil {
			panic(p)
		}
	}
}

// EventsHandled is the number of events (ticks, timers, run-segment
// ends, cross-CPU messages, task starts) the CPUs have handled: the unit
// of the engine's speed.
func (s *Sim) EventsHandled() int64 {
	var n int64
	for _, rq := range s.cpus {
		n += rq.handled
	}
	return n
}

// Live is the number of tasks that have not exited (read it between runs
// or from a RunUntil condition).
func (s *Sim) Live() int {
	n := len(s.tasks)
	for _, rq := range s.cpus {
		n -= rq.exited
	}
	return n
}

// CPUPanic is a panic raised while a CPU handled its events: the CPU, its
// clock and current task, the value and the stack where it was raised.
// RunUntil re-panics with it on the calling goroutine, whichever driver
// stepped the CPU.
type CPUPanic struct {
	CPU   int
	Now   int64
	Task  string
	Value any
	Stack []byte
}

func (p *CPUPanic) Error() string {
	return fmt.Sprintf("CPU %d at %d ns (running %s): %v", p.CPU, p.Now, p.Task, p.Value)
}

// safeStep is step that returns a panic instead of raising it.
func (rq *RQ) safeStep(until int64) (p *CPUPanic) {
	defer func() {
		if v := recover(); v != nil {
			task := "nothing"
			if rq.curr != nil {
				task = rq.curr.String()
			}
			p = &CPUPanic{CPU: rq.cpu, Now: rq.now, Task: task, Value: v, Stack: debug.Stack()}
		}
	}()
	rq.step(until)
	return nil
}

// workers is the parallel driver's goroutines for one Run.
type workers struct {
	s *Sim
	r *contention.Rounds
	// shardOf maps a CPU to its shard; todo[i] is shard i's CPUs to step
	// in the round, written by the engine before it opens the round.
	shardOf []int
	todo    [][]int
	// home is the engine's own shard, -1 when pinned (the engine then
	// only hands out and waits, each shard on its worker's host CPU).
	home int
	exit sync.WaitGroup // goroutine exit
	tune *shareTuner    // the Sim's: kept from run to run
	// panics[c] is CPU c's recovered panic in the round, written by the
	// goroutine that stepped it and re-raised on the engine's goroutine
	// (a panic on a worker would end the process without the CPU, and
	// without the caller's recover).
	panics []*CPUPanic
}

// minRound is the fewest CPUs a round hands out: fewer are stepped on the
// engine's goroutine, and a round of fewer than minWake wakes no parked
// worker (a wake-up costs more than a few steps; a worker still spinning
// from the last round takes part all the same).
const (
	minRound = 2
	minWake  = 4
)

// startWorkers starts the parallel driver's goroutines, sharding the CPUs
// by LLC over the workers.
func (s *Sim) startWorkers() *workers {
	allowed, err := contention.AllowedCPUs()
	if err != nil || len(allowed) == 0 {
		allowed = []int{0}
	}
	n := s.cfg.Workers
	if n <= 0 {
		n = len(allowed)
	}
	n = max(1, min(n, len(s.cpus)))
	w := &workers{s: s, home: n - 1}
	// Whole LLCs go to one shard, round robin over LLCs in order, unless
	// there are as many shards as CPUs.
	w.shardOf = make([]int, len(s.cpus))
	if n == len(s.cpus) {
		for i := range s.cpus {
			w.shardOf[i] = i
		}
	} else {
		for k, llc := range s.m.LLCs {
			for _, c := range llc {
				w.shardOf[c] = k % n
			}
		}
	}
	w.todo = make([][]int, n)
	w.panics = make([]*CPUPanic, len(s.cpus))
	// Unpinned, the engine's goroutine steps the last shard, which it
	// would only wait for otherwise; pinned, every shard has a worker.
	spawn := n - 1
	if s.cfg.Pin {
		spawn, w.home = n, -1
	}
	w.r = contention.NewRounds(n, spawn)
	// An explicit -workers N, or pinned goroutines, share every round.
	// The tuner outlives the run: a workload runs in chunks (bench's
	// Chunk), each a Run, and need not probe again at each.
	if s.tune.now == nil {
		s.tune = shareTuner{on: s.cfg.Workers <= 0 && !s.cfg.Pin && n > 1, phase: tuneKeep, now: time.Now}
	}
	w.tune = &s.tune
	hosts := contention.PlanPinning(seq(n), allowed)
	for i := range spawn {
		w.exit.Add(1)
		go w.loop(i, hosts[i])
	}
	return w
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func (w *workers) loop(i, host int) {
	defer w.exit.Done()
	if w.s.cfg.Pin {
		// Never unlocked: the thread dies with the goroutine, so the
		// affinity cannot leak into Go's thread pool.
		_ = contention.PinCurrentThread(host)
	}
	var seen uint64
	for {
		seen = w.r.Next(i, seen)
		if w.r.Stopped() {
			return
		}
		w.claim(i)
	}
}

// claim steps the round's CPUs that it claims, from shard home first,
// until none is left.
func (w *workers) claim(home int) {
	n := 0
	for {
		c, end, ok := w.r.Claim(home)
		if !ok {
			w.r.Done(n)
			return
		}
		if p := w.s.cpus[c].safeStep(end); p != nil {
			w.panics[c] = p
		}
		n++
	}
}

// step steps cpus (in CPU order) to the epoch's end on the workers and the
// engine's goroutine, and waits; it re-raises the panic of the first CPU
// that raised one. Which goroutine steps a CPU does not matter: a CPU's
// step touches only its own state, the real shared objects and the
// snapshots.
func (w *workers) step(end int64, cpus []int) {
	if w.home >= 0 && (len(cpus) < minRound || !w.tune.next(len(cpus))) {
		w.s.stepSerial(cpus)
		return
	}
	for i := range w.todo {
		w.todo[i] = w.todo[i][:0]
	}
	for _, c := range cpus {
		sh := w.shardOf[c]
		w.todo[sh] = append(w.todo[sh], c)
	}
	w.r.Open(end, w.todo, len(cpus) >= minWake || w.home < 0)
	if w.home >= 0 {
		w.claim(w.home)
	}
	w.r.Wait()
	var first *CPUPanic
	for _, c := range cpus {
		if p := w.panics[c]; p != nil {
			w.panics[c] = nil
			if first == nil {
				first = p
			}
		}
	}
	if first != nil {
		panic(first)
	}
}

func (w *workers) stop() {
	w.r.Stop()
	w.exit.Wait()
}
