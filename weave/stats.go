package weave

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// lineAcc and siteAcc are the cumulative statistics; stalls are kept in
// whole ps so that sums are exact and independent of the order of addition.
// What the replay counts per line (the accesses logged by op, transfers,
// invalidations, fills, lock waits, busy time) it keeps itself
// (Replayer.KeepTotals, Replayer.Logged), in the line record it reads for
// every request anyway: the weave adds nothing per line per access.
type lineAcc struct {
	stallPS int64
	host    hostSample
}

type siteAcc struct {
	ops     [hwmodel.NumOps]int64 // as lineAcc's
	stallPS int64
}

// accCharged is the number of accesses counted in ops and their
// uncontended cost, ps (each op's UncontendedNS, rounded to whole ps, as
// the weave charges it).
func (s *Space) accCharged(ops *[hwmodel.NumOps]int64) (accesses, chargedPS int64) {
	for op, n := range ops {
		accesses += n
		chargedPS += n * s.uncPS[op]
	}
	return accesses, chargedPS
}

// LineStats is one line's cumulative statistics.
type LineStats struct {
	ID       LineID
	Name     string
	Kind     Kind
	Home     int
	Accesses int64
	Ops      [hwmodel.NumOps]int64 // accesses by op
	// Transfers counts line transfers from another core, by distance
	// class; Invalidations the copies invalidated by stores; Fills the
	// fills from DRAM; LockWaits the Lock requests that found it held.
	Transfers     [hwmodel.NumClasses]int64
	Invalidations int64
	Fills         int64
	LockWaits     int64
	// StallNS is the stall paid on the line beyond the uncontended cost;
	// UncontendedNS the uncontended cost its accesses charged.
	StallNS       float64
	UncontendedNS float64
	// HeldNS is, for a lock line, the time its lock was held (each Lock's
	// completion to its Unlock's, summed over the Releases), the
	// critical sections' length.
	HeldNS   float64
	Releases int64
	// BusyNS is the time the line spent serving transactions: over any
	// window it is at most the window (one line serves one at a time).
	BusyNS float64
	// Host is what sampling measured on the host for the line's accesses.
	Host HostNS
}

// ModeledNS is the mean modeled cost of one access to the line on the
// target: uncontended cost plus stall, per access.
func (l *LineStats) ModeledNS() float64 {
	if l.Accesses == 0 {
		return 0
	}
	return (l.StallNS + l.UncontendedNS) / float64(l.Accesses)
}

// TotalTransfers is the sum of Transfers over the classes.
func (l *LineStats) TotalTransfers() int64 {
	var t int64
	for _, x := range l.Transfers {
		t += x
	}
	return t
}

// SiteStats is one calling site's cumulative statistics.
type SiteStats struct {
	Site          Site
	Name          string
	Accesses      int64
	Ops           [hwmodel.NumOps]int64
	StallNS       float64
	UncontendedNS float64
}

// KindStats sums LineStats over the lines of one kind of object.
type KindStats struct {
	Kind          Kind
	Lines         int
	Accesses      int64
	Transfers     int64
	StallNS       float64
	UncontendedNS float64
	Host          HostNS
}

// ModeledNS is the mean modeled cost of one access on the target.
func (k *KindStats) ModeledNS() float64 {
	if k.Accesses == 0 {
		return 0
	}
	return (k.StallNS + k.UncontendedNS) / float64(k.Accesses)
}

// Stats is the Space's cumulative statistics over all its weaves.
type Stats struct {
	Machine  string
	Weaves   int64
	Accesses int64
	StallNS  float64
	Lines    []LineStats // by LineID
	Sites    []SiteStats // by Site
	Kinds    []KindStats // by Kind
}

// Stats returns a copy of the cumulative statistics.
func (s *Space) Stats() *Stats {
	st := &Stats{Machine: s.m.Name, Weaves: s.weaves, Lines: make([]LineStats, len(s.lines)),
		Sites: make([]SiteStats, len(s.sites)), Kinds: make([]KindStats, NumKinds)}
	var stallPS int64
	for k := range st.Kinds {
		st.Kinds[k].Kind = Kind(k)
	}
	var tot []LineCounts // the replay's running totals (KeepTotals)
	var logged [][hwmodel.NumOps]int64
	if s.rp != nil {
		tot, logged = s.rp.Totals(), s.rp.Logged()
	}
	for i, a := range s.lineStats {
		li := s.lineInfo[i]
		var r *LineCounts
		var ops [hwmodel.NumOps]int64
		if i < len(tot) {
			r = &tot[i]
		}
		if i < len(logged) {
			ops = logged[i]
		}
		ls := s.line(i, r, ops)
		st.Lines[i] = ls
		st.Accesses += ls.Accesses
		stallPS += a.stallPS
		k := &st.Kinds[li.kind]
		k.Lines++
		k.Accesses += ls.Accesses
		k.Transfers += ls.TotalTransfers()
		k.StallNS += ls.StallNS
		k.UncontendedNS += ls.UncontendedNS
		k.Host.Calls += a.host.calls
		k.Host.Accesses += a.host.accesses
		k.Host.NS += float64(a.host.ns)
	}
	st.StallNS = float64(stallPS) / 1000
	for i, a := range s.siteStats {
		accesses, chargedPS := s.accCharged(&a.ops)
		st.Sites[i] = SiteStats{Site: Site(i), Name: s.sites[i], Accesses: accesses, Ops: a.ops,
			StallNS: float64(a.stallPS) / 1000, UncontendedNS: float64(chargedPS) / 1000}
	}
	return st
}

// line is line i's cumulative statistics from the replay's running
// totals r (nil: none yet) and its logged ops.
func (s *Space) line(i int, r *LineCounts, ops [hwmodel.NumOps]int64) LineStats {
	a, li := &s.lineStats[i], s.lineInfo[i]
	accesses, chargedPS := s.accCharged(&ops)
	ls := LineStats{ID: LineID(i), Name: li.name, Kind: li.kind, Home: li.home, Accesses: accesses, Ops: ops,
		StallNS: float64(a.stallPS) / 1000, UncontendedNS: float64(chargedPS) / 1000, Host: a.host.public()}
	if r != nil {
		for c, x := range r.Transfers {
			ls.Transfers[c] = int64(x)
		}
		ls.Invalidations, ls.Fills, ls.LockWaits = int64(r.Invalidations), int64(r.Fills), int64(r.LockWaits)
		ls.BusyNS = float64(r.BusyPS) / 1000
		ls.HeldNS, ls.Releases = float64(r.HeldPS)/1000, int64(r.Releases)
	}
	return ls
}

// LineStat is one line's cumulative statistics (its entry of Stats'
// Lines, without a pass over the others); ok is false for an unknown id.
func (s *Space) LineStat(id LineID) (LineStats, bool) {
	if id < 0 || int(id) >= len(s.lineStats) {
		return LineStats{}, false
	}
	if s.rp == nil {
		return s.line(int(id), nil, [hwmodel.NumOps]int64{}), true
	}
	r, ops, ok := s.rp.LineTotal(int(id))
	if !ok {
		return s.line(int(id), nil, ops), true
	}
	return s.line(int(id), &r, ops), true
}

// Minus is l's counts since an earlier reading of the same line, b (a
// measurement window's): every count and time differenced; Host stays
// l's (host sampling is the whole run's).
func (l LineStats) Minus(b LineStats) LineStats {
	d := l
	d.Accesses -= b.Accesses
	for i := range d.Ops {
		d.Ops[i] -= b.Ops[i]
	}
	for i := range d.Transfers {
		d.Transfers[i] -= b.Transfers[i]
	}
	d.Invalidations -= b.Invalidations
	d.Fills -= b.Fills
	d.LockWaits -= b.LockWaits
	d.StallNS -= b.StallNS
	d.UncontendedNS -= b.UncontendedNS
	d.HeldNS -= b.HeldNS
	d.Releases -= b.Releases
	d.BusyNS -= b.BusyNS
	return d
}

// statsTopLines is how many lines WriteStats lists.
const statsTopLines = 20

// WriteStats prints the cumulative statistics as tables: the lines with the
// most stall (with their transfers by distance class), the sites by stall,
// and the object kinds with the host's sampled ns per access beside the
// target's modeled ns. Without host sampling the output depends only on
// the logs woven: the same logs give the same bytes.
func (s *Space) WriteStats(w io.Writer) error {
	st := s.Stats()
	var b strings.Builder
	fmt.Fprintf(&b, "contention on %s: %d weaves, %d accesses, %.1f ns stall", st.Machine, st.Weaves, st.Accesses, st.StallNS)

	lines := slices.Clone(st.Lines)
	lines = slices.DeleteFunc(lines, func(l LineStats) bool { return l.Accesses == 0 })
	slices.SortStableFunc(lines, func(a, b LineStats) int { return cmp.Compare(b.StallNS, a.StallNS) })
	if len(lines) > statsTopLines {
		fmt.Fprintf(&b, "top %d of %d lines by stall:\n", statsTopLines, len(lines))
		lines = lines[:statsTopLines]
	} else {
		fmt.Fprintf(&b, "lines by stall:\n")
	}
	fmt.Fprintf(&b, "  %-28s %-10s %4s %10s %10s %12s %8s %8s", "line", "kind", "home", "accesses", "rmw+lock", "stall_ns", "ns/acc", "host/acc")
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		fmt.Fprintf(&b, " %8s", c)
	}
	fmt.Fprintf(&b, " %8s %8s %8s", "inval", "fills", "lockwait")
	for _, l := range lines {
		fmt.Fprintf(&b, "  %-28s %-10s %4d %10d %10d %12.1f %8.1f %8s", clip(l.Name, 28), l.Kind, l.Home, l.Accesses,
			l.Ops[hwmodel.RMW]+l.Ops[hwmodel.Lock], l.StallNS, l.ModeledNS(), hostCell(l.Host))
		for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
			fmt.Fprintf(&b, " %8d", l.Transfers[c])
		}
		fmt.Fprintf(&b, " %8d %8d %8d", l.Invalidations, l.Fills, l.LockWaits)
	}

	sites := slices.Clone(st.Sites)
	sites = slices.DeleteFunc(sites, func(x SiteStats) bool { return x.Accesses == 0 })
	slices.SortStableFunc(sites, func(a, b SiteStats) int { return cmp.Compare(b.StallNS, a.StallNS) })
	fmt.Fprintf(&b, "sites by stall:\n  %-28s %10s %12s %8s %7s\n", "site", "accesses", "stall_ns", "ns/acc", "share")
	for _, x := range sites {
		share := 0.0
		if st.StallNS > 0 {
			share = 100 * x.StallNS / st.StallNS
		}
		fmt.Fprintf(&b, "  %-28s %10d %12.1f %8.1f %6.1f%%", clip(x.Name, 28), x.Accesses, x.StallNS,
			(x.StallNS+x.UncontendedNS)/float64(x.Accesses), share)
	}

	fmt.Fprintf(&b, "objects (target modeled vs host sampled ns per access):\n  %-10s %6s %10s %10s %12s %8s %8s %8s\n",
		"kind", "lines", "accesses", "transfers", "stall_ns", "ns/acc", "host/acc", "samples")
	for _, k := range st.Kinds {
		if k.Accesses == 0 && k.Host.Calls == 0 {
			continue
		}
		fmt.Fprintf(&b, "  %-10s %6d %10d %10d %12.1f %8.1f %8s %8d", k.Kind, k.Lines, k.Accesses, k.Transfers,
			k.StallNS, k.ModeledNS(), hostCell(k.Host), k.Host.Calls)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func hostCell(h HostNS) string {
	if h.Calls == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", h.PerAccess())
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "~"
}
