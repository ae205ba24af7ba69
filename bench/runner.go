package bench

import (
	"fmt"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// RunConfig is how to run a workload: the machine and kernel, the seed,
// the engine's settings, and the hooks a command line needs.
type RunConfig struct {
	Machine  *hwmodel.Machine
	Features emu.Features
	// Sched are the tunables set by name (-sched), over the defaults.
	Sched   emu.SchedSettings
	Seed    uint64
	Epoch   int64  // ns; 0: the machine's lookahead
	Driver  string // "serial" or "parallel" (default)
	Workers int
	Pin     bool
	Check   bool
	// TraceWindow > 0 traces sched_switch/sched_wakeup and samples the
	// counters over the first TraceWindow ns of virtual time.
	TraceWindow int64
	// CallChains records the profile's call chains (-profile).
	CallChains bool
	// Progress, when set, is called after every chunk of virtual time
	// with the time reached and the run's limit.
	Progress func(now, limit int64)
	// Stop, when it becomes readable (closed), ends the run at the next
	// barrier; the result is then marked Interrupted.
	Stop <-chan struct{}
	// Window, when set, reads the run's numbers over a measurement
	// window too (Result.Window; window.go); a Window.To ends the run.
	Window *Window
	// Interval > 0 (a multiple of Chunk) calls OnInterval at every
	// multiple of it, with the snapshots at the interval's two ends
	// (perf stat -I; interval.go).
	Interval   int64
	OnInterval func(prev, cur *Snapshot)
}

// Chunk is the virtual time between progress calls. Chunk boundaries are
// multiples of it, so they are the same on every run: a boundary adds a
// barrier, and where the barriers fall is part of the determinism.
const Chunk = 1_000_000

// Result is a finished (or stopped) run.
type Result struct {
	Sim      *emu.Sim
	Workload Workload
	// Complete: the workload finished by itself (all loops done), ran
	// its whole duration, or ran to its window's end (Window.To; then
	// WindowEnded too). Interrupted: Stop ended it first.
	Complete    bool
	WindowEnded bool
	Interrupted bool
	// Failure is what made the workload fail, whatever the time run (an
	// rt-app deadlock), from its Failure method.
	Failure error
	// Window is the measurement window's snapshots (RunConfig.Window).
	Window *WindowResult
}

// Failer is implemented by workloads that can fail in a way the run's
// length does not cure (a deadlock); Failure is read after the run.
type Failer interface{ Failure() error }

// StartJitter is how far apart, at most, a workload's tasks start: the real
// tools create their threads one after another (a clone() and its first
// scheduling take ~10 µs [E]), so which task runs first, and the phase of
// each, varies from run to run; the seed draws it (emu.Config.StartJitter:
// each task's wake_up_new_task() runs that much after the setup, a delayed
// fork, so a new task is placed as one, never as a sleeper).
const StartJitter = 10_000

// Execute builds the machine, sets the workload up on it and runs it.
func Execute(w Workload, cfg RunConfig) (*Result, error) {
	s, err := emu.New(emu.Config{
		Machine: cfg.Machine, Features: cfg.Features, Sched: cfg.Sched, Seed: cfg.Seed, Epoch: cfg.Epoch,
		Check: cfg.Check, Driver: cfg.Driver, Workers: cfg.Workers, Pin: cfg.Pin,
		StartJitter: StartJitter,
	})
	if err != nil {
		return nil, err
	}
	if cfg.TraceWindow > 0 {
		s.EnableTrace(cfg.TraceWindow, 0)
	}
	if cfg.CallChains {
		s.EnableCallChains()
	}
	if err := w.Setup(s); err != nil {
		return nil, err
	}
	res := &Result{Sim: s, Workload: w}
	limit := w.Limit()
	if limit <= 0 || limit > maxVirtualNS {
		return nil, fmt.Errorf("bench: workload time limit %d ns is out of range (0, %d]", limit, maxVirtualNS)
	}
	stopped := func() bool {
		select {
		case <-cfg.Stop:
			return true
		default:
			return false
		}
	}
	if cfg.Stop != nil && stopped() {
		// Stopped during the setup: nothing ran.
		res.Interrupted = true
		return res, nil
	}
	done := func() bool {
		if w.Done(s) {
			res.Complete = true
			return true
		}
		if cfg.Stop != nil && stopped() {
			res.Interrupted = true
			return true
		}
		return false
	}
	var ww *windowWatch
	if cfg.Window != nil {
		ww = &windowWatch{from: cfg.Window.From, to: cfg.Window.To}
		if ww.to > 0 {
			if ww.to <= ww.from {
				return nil, flagErr("-window-to", "%.3f ms is not after the window's start %.3f ms (allowed: a time after -window-from)", float64(ww.to)/1e6, float64(ww.from)/1e6)
			}
			limit = min(limit, ww.to)
		}
	}
	iv, err := newIntervals(cfg, s, w)
	if err != nil {
		return nil, err
	}
	for s.Now() < limit {
		end := min((s.Now()/Chunk+1)*Chunk, limit)
		if s.RunUntil(end, done) {
			break
		}
		if ww != nil {
			ww.boundary(s, w)
		}
		iv.boundary(s, w)
		if cfg.Progress != nil {
			cfg.Progress(s.Now(), limit)
		}
	}
	if ww != nil {
		ww.boundary(s, w) // the run's end: the window's when no task exited
		// An interrupted run prints what it ran, without its window.
		if res.Window, err = ww.result(s.Now()); err != nil && !res.Interrupted {
			return nil, err
		}
	}
	if !res.Complete && !res.Interrupted && ww != nil && ww.to > 0 && s.Now() >= ww.to {
		// Ran to its window's end: the length asked for.
		res.Complete, res.WindowEnded = true, true
	}
	if !res.Complete && !res.Interrupted {
		// Ran to the limit: a duration-bound workload is complete; one
		// that ends by itself ran out of its safety bound.
		res.Complete = w.Done(s) || durationBound(w)
	}
	if f, ok := w.(Failer); ok {
		res.Failure = f.Failure()
	}
	return res, nil
}

// LoopProgress is implemented by workloads that end when their loops are
// done (hackbench, messaging, pipe): the share of the work done so far,
// in [0, 1], read between chunks, for a progress line's ETA (their Limit
// is only a safety bound, far beyond the run's length).
type LoopProgress interface{ LoopsDone() float64 }

// DurationBound is implemented by workloads that run for a fixed time
// (netperf -l, schbench -r) rather than until their loops are done.
type DurationBound interface{ DurationBound() bool }

func durationBound(w Workload) bool {
	d, ok := w.(DurationBound)
	return ok && d.DurationBound()
}
