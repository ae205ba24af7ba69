package bench

import (
	"fmt"
	"maps"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/weave"
)

// A measurement window is the part of a run the numbers are read over:
// perf stat -D's delay at its start, and at its end the first task's
// exit. The kernel test robot's rows are averages over 60-300 s runs,
// where the start (fork placement, PELT and the balancer settling) and
// the end (groups finishing one by one on uneven runqueues) are a few
// per cent of the time; an emulated run of a fraction of a second is all
// start and end unless the numbers are read between them. After the
// first exit the load is no longer the one configured (fewer tasks, the
// finished group's CPU idle), so the window ends there.
//
// Snapshots are taken at chunk boundaries (Chunk, 1 ms of virtual
// time), which are the same on every run and every driver, so a window's
// numbers are as deterministic as the run's. The window is [the first
// boundary at or after From, the last boundary before the first exit],
// or the run's end when no task exits.
//
// A window may also end at To: the run stops there, whether or not the
// workload is done, as `perf stat -D 10000 -a -- sleep 60` measures a
// minute of a longer run. That is how a run that lkp lets go for
// minutes (hackbench -l 60000) is read in its steady state without
// emulating its minutes: the loops stay lkp's, so the pipes and sockets
// fill as they do on the real machine, and the run ends at To.

// Window asks for a measurement window from From ns of virtual time, to
// the first task's exit or, when To > 0, to To ns (the run ends there).
type Window struct{ From, To int64 }

// Snapshot is the machine's cumulative numbers at one chunk boundary.
type Snapshot struct {
	At int64 // virtual ns
	// Counters is Sim.Counters() then (cumulative "sched.*" counts).
	Counters            map[string]float64
	Wakeups, Migrations int64
	// Profile is the machine's profile, Nodes each NUMA node's (nil on
	// one node).
	Profile []emu.ProfileEntry
	Nodes   [][]emu.ProfileEntry
	// Units is the workload's work done so far, one count per unit its
	// lkp rates read (Windowed), nil for others.
	Units []float64
	// GroupLines are the task groups' tg->load_avg lines so far
	// (Sim.GroupLines).
	GroupLines []weave.LineStats
}

// Windowed is implemented by workloads whose lkp metrics a window can
// read: Units is the work done so far, one count per unit the metrics are
// rates of (hackbench: messages written; stress-ng: each stressor's bogo
// ops), read at chunk boundaries, and WindowLKP lkp's metrics (unprefixed
// keys, as LKPParse returns them) of a run that went on at perSec[i] of
// unit i a second throughout.
type Windowed interface {
	Units() []float64
	WindowLKP(perSec []float64) map[string]float64
}

// WindowResult is a run's window: its first and last snapshots, and,
// for a window whose end is set in advance (Window.To), Mid: the first
// boundary at or after its midpoint, nil when the window ended (a task
// exited) before it. The two halves say whether the window is a steady
// state (Halves): a row that lkp averages over minutes compares only
// with a window whose rates no longer drift.
type WindowResult struct{ Start, Mid, End *Snapshot }

// Halves are the window's two halves, split at Mid; ok is false when the
// window has no Mid.
func (r *WindowResult) Halves() (first, second *WindowResult, ok bool) {
	if r.Mid == nil || r.Mid.At <= r.Start.At || r.Mid.At >= r.End.At {
		return nil, nil, false
	}
	return &WindowResult{Start: r.Start, End: r.Mid}, &WindowResult{Start: r.Mid, End: r.End}, true
}

// Sec is the window's length in virtual seconds.
func (r *WindowResult) Sec() float64 { return float64(r.End.At-r.Start.At) / 1e9 }

// snapshot reads s at a chunk boundary.
func snapshot(s *emu.Sim, w Workload) *Snapshot {
	sn := &Snapshot{At: s.Now(), Counters: s.Counters(), Profile: s.Profile(nil), GroupLines: s.GroupLines()}
	for _, t := range s.Tasks() {
		sn.Wakeups += t.Stats.NrWakeups
		sn.Migrations += t.Stats.NrMigrations
	}
	if nodes := s.Machine().Nodes; len(nodes) > 1 {
		for _, cpus := range nodes {
			sn.Nodes = append(sn.Nodes, s.Profile(cpus))
		}
	}
	if u, ok := w.(Windowed); ok {
		sn.Units = u.Units()
	}
	return sn
}

// anyExited reports whether a task of s has exited.
func anyExited(s *emu.Sim) bool {
	for _, t := range s.Tasks() {
		if t.ExitedAt() >= 0 {
			return true
		}
	}
	return false
}

// windowWatch follows a run's chunk boundaries for its window.
type windowWatch struct {
	from  int64
	to    int64 // 0: the first exit
	start *Snapshot
	mid   *Snapshot // the first boundary at or after (from+to)/2 (to > 0)
	last  *Snapshot // the latest boundary before any exit
	ended bool
}

// boundary is called at every chunk boundary (and at the run's end).
func (ww *windowWatch) boundary(s *emu.Sim, w Workload) {
	if ww.ended || s.Now() < ww.from {
		return
	}
	if anyExited(s) {
		ww.ended = true
		return
	}
	sn := snapshot(s, w)
	if ww.start == nil {
		ww.start = sn
	}
	if ww.to > 0 && ww.mid == nil && sn.At >= ww.from+(ww.to-ww.from)/2 {
		ww.mid = sn
	}
	ww.last = sn
}

// result is the window, or an error saying why the run has none; now is
// where the run ended.
func (ww *windowWatch) result(now int64) (*WindowResult, error) {
	if ww.to > 0 && now < ww.to {
		return nil, flagErr("-window-to", "no measurement window: the run ended at %.3f ms, before the window's end %.3f ms (allowed: a time the run reaches)", float64(now)/1e6, float64(ww.to)/1e6)
	}
	if ww.start == nil {
		return nil, flagErr("-window-from", "no measurement window: a task exited, or the run ended, before %.3f ms of virtual time (allowed: a time before the first exit)", float64(ww.from)/1e6)
	}
	if ww.last.At-ww.start.At < Chunk {
		return nil, flagErr("-window-from", "no measurement window: from %.3f ms, the first task exited within %d ms (allowed: a time before the first exit)", float64(ww.from)/1e6, Chunk/1_000_000)
	}
	mid := ww.mid
	if mid != nil && mid.At >= ww.last.At {
		mid = nil
	}
	return &WindowResult{Start: ww.start, Mid: mid, End: ww.last}, nil
}

// Counters is Sim.Counters() over the window: every "sched.*" count
// differenced, the rates over the window's time, run.virtual_sec the
// window's length; the engine's "run.*" statistics stay the whole run's.
func (r *WindowResult) Counters() map[string]float64 {
	c := map[string]float64{}
	for k, v := range r.End.Counters {
		c[k] = v
		if strings.HasPrefix(k, "sched.") {
			c[k] = v - r.Start.Counters[k]
		}
	}
	sec := r.Sec()
	c["rate.wakeups_per_sec"] = float64(r.End.Wakeups-r.Start.Wakeups) / sec
	c["rate.migrations_per_sec"] = float64(r.End.Migrations-r.Start.Migrations) / sec
	c["rate.context_switches_per_sec"] = c["sched.NrSwitches"] / sec
	c["run.virtual_sec"] = sec
	c["run.window_from_sec"] = float64(r.Start.At) / 1e9
	c["run.window_to_sec"] = float64(r.End.At) / 1e9
	return c
}

// Profile is the profile over the window (node -1: the machine's, else
// that node's), largest first, with the shares recomputed.
func (r *WindowResult) Profile(node int) []emu.ProfileEntry {
	a, b := r.Start.Profile, r.End.Profile
	if node >= 0 {
		a, b = r.Start.Nodes[node], r.End.Nodes[node]
	}
	return emu.ProfileDiff(b, a)
}

// Line is the window's share of the statistics of the tg->load_avg line
// named name (End minus Start), and whether both ends have it.
func (r *WindowResult) Line(name string) (weave.LineStats, bool) {
	find := func(sn *Snapshot) (weave.LineStats, bool) {
		for _, l := range sn.GroupLines {
			if l.Name == name {
				return l, true
			}
		}
		return weave.LineStats{}, false
	}
	a, okA := find(r.Start)
	b, okB := find(r.End)
	if !okA || !okB {
		return weave.LineStats{}, false
	}
	return b.Minus(a), true
}

// Switches are the tasks' voluntary and involuntary switches in the window.
func (r *WindowResult) Switches() (vol, invol int64) {
	d := func(k string) int64 { return int64(r.End.Counters[k] - r.Start.Counters[k]) }
	return d("sched.nr_voluntary_switches"), d("sched.nr_involuntary_switches")
}

// LKP is the workload's lkp metrics at the window's rate (nil for a
// workload that is not Windowed).
func (r *WindowResult) LKP(w Workload) map[string]float64 {
	u, ok := w.(Windowed)
	if !ok {
		return nil
	}
	return u.WindowLKP(r.UnitRates())
}

// UnitRates are the window's work rates, per unit a second (Windowed's
// Units over the window), nil for a workload that is not Windowed.
func (r *WindowResult) UnitRates() []float64 {
	a, b := r.Start.Units, r.End.Units
	if len(a) != len(b) {
		panic(fmt.Sprintf("bench: window: %d units at %d ns, %d at %d ns (one workload's snapshots)", len(a), r.Start.At, len(b), r.End.At))
	}
	if len(a) == 0 {
		return nil
	}
	rates := make([]float64, len(a))
	for i := range rates {
		rates[i] = (b[i] - a[i]) / r.Sec()
	}
	return rates
}

// WindowLKPStats is lkp's stats of a run (LKPStats) with the keys the
// window reads (WindowResult.LKP) at the window's rate, prefixed as
// LKPStats prefixes them; keys the window does not read stay the whole
// run's (hackbench's instance keys, for instance).
func WindowLKPStats(workload string, whole map[string]float64, r *WindowResult, w Workload) map[string]float64 {
	win := r.LKP(w)
	if len(win) == 0 {
		return whole
	}
	out := maps.Clone(whole)
	if out == nil {
		out = map[string]float64{}
	}
	maps.Copy(out, LKPPrefixed(LKPProgram(workload), win))
	return out
}
