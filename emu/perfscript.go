package emu

import (
	"bufio"
	"fmt"
	"io"
)

// WritePerfScript prints the run's call chains (EnableCallChains) as
// `perf script` prints a `perf record -a -g` at perf's default 4000 Hz:
// one sample per 1/4000 s of each CPU's time in a chain, its header line
// (comm, pid, [cpu], time, period, event) and its stack, leaf first, one
// "\taddr symbol+0x0 (dso)" line per frame, a blank line after. Brendan
// Gregg's stackcollapse-perf.pl folds it into a flame graph and Perfetto
// reads it. Simplified: the samples of a chain are spread evenly over the
// run (the chains keep no times) and carry no task (comm "swapper" for
// idle, else "rqemu", pid 0: the chains are per CPU, not per task); the
// addresses are a made-up one per function.
func (s *Sim) WritePerfScript(w io.Writer) error {
	bw := bufio.NewWriter(w)
	event, _ := s.profileEvent(nil)
	dur := max(s.Now(), 1)
	period := max(int64(s.m.NSToCycles(1e9/profileSampleHz)), 1)
	for cpu, rq := range s.cpus {
		rq.calls.charged(func(chain []Symbol, ns int64) {
			comm := "rqemu"
			if chain[0] == SymIdle {
				comm = "swapper"
			}
			samples := ns * profileSampleHz / 1_000_000_000
			for i := range samples {
				at := dur * (2*i + 1) / (2 * samples)
				fmt.Fprintf(bw, "%s %6d [%03d] %6d.%06d: %10d %s:\n", comm, 0, cpu, at/1e9, at%1e9/1e3, period, event)
				for _, sym := range chain {
					fmt.Fprintf(bw, "\t%16x %s+0x0 (%s)\n", symAddr(sym), s.symbolName(sym), s.symDSO(sym))
				}
				bw.WriteString("\n")
			}
		})
	}
	return bw.Flush()
}
