package emu

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// Lines returns the weave's statistics of every shared line touched so far,
// most stalled on first (ties: the busier, then by name).
func (s *Sim) Lines() []weave.LineStats {
	st := s.space.Stats()
	var out []weave.LineStats
	for _, l := range st.Lines {
		if l.Accesses > 0 {
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(a, b weave.LineStats) int {
		if c := cmp.Compare(b.StallNS, a.StallNS); c != 0 {
			return c
		}
		if c := cmp.Compare(b.BusyNS, a.BusyNS); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// WriteLines prints the n most contended shared lines, the way perf c2c
// ranks cachelines by the cost of their HITMs: per line, the share of all
// CPUs' time stalled on it, the share of the run the line spent serving
// transactions (at most 100%: one transaction at a time), its accesses by
// op, the transfers by distance class, and the mean stall per access.
func (s *Sim) WriteLines(w io.Writer, n int) error {
	lines := s.Lines()
	total := float64(s.now) * float64(len(s.cpus))
	var classes []hwmodel.Class
	present := s.m.ClassesPresent()
	for k := hwmodel.ClassSMT; k < hwmodel.NumClasses; k++ {
		if present[k] {
			classes = append(classes, k)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# shared lines by stall: %d of %d touched, over %.6f s virtual on %d CPUs\n",
		min(n, len(lines)), len(lines), float64(s.now)/1e9, len(s.cpus))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "stall%\tbusy%\taccesses\tread\twrite\trmw\tlock\t"
	for _, k := range classes {
		hdr += "xfer " + k.String() + "\t"
	}
	fmt.Fprintln(tw, hdr+"inval\tfills\tstall/access ns\t")
	for i, l := range lines {
		if i == n {
			break
		}
		row := fmt.Sprintf("%.2f\t%.1f\t%d\t%d\t%d\t%d\t%d\t", 100*l.StallNS/max(total, 1), 100*l.BusyNS/max(float64(s.now), 1),
			l.Accesses, l.Ops[hwmodel.Read], l.Ops[hwmodel.Write], l.Ops[hwmodel.RMW], l.Ops[hwmodel.Lock])
		for _, k := range classes {
			row += fmt.Sprintf("%d\t", l.Transfers[k])
		}
		fmt.Fprintf(tw, "%s%d\t%d\t%.0f\t  %s (node %d)\n", row, l.Invalidations, l.Fills, l.StallNS/float64(l.Accesses), l.Name, l.Home)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// GroupLines is each task group's tg->load_avg line statistics so far
// (cumulative, as Lines), in the order the groups were made: what a
// measurement window reads at its two ends (bench.Snapshot).
func (s *Sim) GroupLines() []weave.LineStats {
	var out []weave.LineStats
	for _, tg := range s.groups {
		if tg.loadAvg == nil {
			continue
		}
		if l, ok := s.space.LineStat(tg.loadAvg.Line()); ok {
			out = append(out, l)
		}
	}
	return out
}
