package bench

import (
	"github.com/rqemu/rqemu/emu"
)

// Intervals are perf stat -I's reading of a run: the counters every
// Interval of virtual time, each interval differenced from the one
// before, so a run's start, its settling and its steady state can be told
// apart (which is where a measurement window should start). They are read
// at chunk boundaries, like the window, so they are the same bytes on
// every driver.

// intervals follows a run's chunk boundaries for RunConfig.OnInterval.
type intervals struct {
	every int64
	fn    func(prev, cur *Snapshot)
	prev  *Snapshot
}

// newIntervals is the run's interval reader, nil when none was asked for.
func newIntervals(cfg RunConfig, s *emu.Sim, w Workload) (*intervals, error) {
	if cfg.Interval == 0 {
		return nil, nil
	}
	if cfg.Interval < 0 || cfg.Interval%Chunk != 0 || cfg.OnInterval == nil {
		return nil, flagErr("-interval", "%v ns is not a positive multiple of %d ms (allowed: 1ms, 2ms, ...)", cfg.Interval, Chunk/1_000_000)
	}
	return &intervals{every: cfg.Interval, fn: cfg.OnInterval, prev: snapshot(s, w)}, nil
}

// boundary is called at every chunk boundary.
func (iv *intervals) boundary(s *emu.Sim, w Workload) {
	if iv == nil || s.Now()%iv.every != 0 || s.Now() == iv.prev.At {
		return
	}
	cur := snapshot(s, w)
	iv.fn(iv.prev, cur)
	iv.prev = cur
}
