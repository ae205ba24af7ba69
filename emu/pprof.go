package emu

import (
	"io"

	"github.com/google/pprof/profile"
)

// WritePprof writes the run's call chains (EnableCallChains) as a pprof
// profile (gzipped protobuf, github.com/google/pprof/profile): sample
// types samples/count (at perf's 4000 Hz) and cpu/nanoseconds, one sample
// per chain and CPU with its stack leaf first, one function per kernel
// or user symbol (named as -profile names it), the machine and kernel in
// the comments. `go tool pprof -top FILE` (or -http) reads it; the
// addresses are made up, one per function.
func (s *Sim) WritePprof(w io.Writer, comment string) error {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        1_000_000_000 / profileSampleHz,
		DurationNanos: s.Now(),
		Comments:      []string{comment},
	}
	locs := map[Symbol]*profile.Location{}
	loc := func(sym Symbol) *profile.Location {
		if l, ok := locs[sym]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: s.symbolName(sym), SystemName: s.symbolName(sym), Filename: s.symDSO(sym)}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: symAddr(sym),
			Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[sym] = l
		return l
	}
	for _, rq := range s.cpus {
		rq.calls.charged(func(chain []Symbol, ns int64) {
			smp := &profile.Sample{Value: []int64{ns * profileSampleHz / 1_000_000_000, ns},
				NumLabel: map[string][]int64{"cpu": {int64(rq.cpu)}}}
			for _, sym := range chain {
				smp.Location = append(smp.Location, loc(sym))
			}
			p.Sample = append(p.Sample, smp)
		})
	}
	if err := p.CheckValid(); err != nil {
		return err
	}
	return p.Write(w)
}
