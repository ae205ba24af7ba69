package weave

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// WeaveResult is what one weave priced: the stall of every CPU beyond the
// uncontended cost it charged itself, and who paid it.
type WeaveResult struct {
	// StallNS[c] is the whole ns to add to CPU c's virtual clock: this
	// weave's stall plus the fraction carried from earlier weaves, rounded
	// down; the new fraction stays in the Space. Over any number of weaves
	// the sum of StallNS is the exact total stall, rounded down, and never
	// behind it by a whole ns.
	StallNS []int64
	// ExactNS[c] is this weave's stall of CPU c, in ns (a whole number of
	// ps, as the replay keeps time).
	ExactNS []float64
	// Sites lists the stall per (CPU, site), sorted by CPU then Site; a
	// pair that paid nothing is left out. For each CPU the NS of its
	// entries sum to ExactNS[c].
	Sites []SiteCharge
	// Accesses is the number of log entries woven.
	Accesses int
	// TotalNS is the sum of ExactNS.
	TotalNS float64
	// Notices are the completions of the entries marked MarkNotify that
	// this weave served, in the order served: CPU and virtual ns (rounded
	// up).
	Notices []Notice
}

// Notice is the completion of a MarkNotify entry of CPU's log (a Notify
// request of its stream), at T (ns, rounded up).
type Notice struct {
	CPU int
	T   int64
}

// A WeaveResult's slices belong to the Space and are reused by the next
// Weave: read them before weaving again.

// SiteCharge is the stall one CPU paid at one site during a weave.
type SiteCharge struct {
	CPU  int
	Site Site
	NS   float64
}

// CPUSites returns the entries of Sites for one CPU.
func (r *WeaveResult) CPUSites(cpu int) []SiteCharge {
	lo, _ := slices.BinarySearchFunc(r.Sites, cpu, func(e SiteCharge, c int) int { return cmp.Compare(e.CPU, c) })
	hi, _ := slices.BinarySearchFunc(r.Sites, cpu+1, func(e SiteCharge, c int) int { return cmp.Compare(e.CPU, c) })
	return r.Sites[lo:hi]
}

// SiteNS is the stall CPU cpu paid at site during the weave.
func (r *WeaveResult) SiteNS(cpu int, site Site) float64 {
	for _, e := range r.CPUSites(cpu) {
		if e.Site == site {
			return e.NS
		}
	}
	return 0
}

// Weave prices the logs to the end of time: WeaveUntil with no bound, so
// every access logged is served. It is for callers that weave whole
// scenarios; the engine weaves each epoch with WeaveUntil.
func (s *Space) Weave(logs []*Log) *WeaveResult { return s.WeaveUntil(logs, math.MaxInt64) }

// WeaveUntil prices one epoch that ends at virtual time until (ns): it adds
// each Log's entries, as its CPU's requests (Req), to what the Space's
// replay still has pending and replays every line up to until
// (Replayer.Advance, on the Space's lines, whose coherence state and
// queues carry over from the previous weave), charges every request served
// to its CPU and site, adds to the cumulative statistics, collects the host
// samples, and resets the logs.
//
// The weave's queues are the machine's, not the epoch's. A line still busy
// at until stays busy into the next epoch; a request still waiting there is
// served, and its stall reported and charged to its site, by a later weave;
// a lock held across until (its Unlock issued late because its CPU stalled)
// keeps the next epoch's lockers waiting. So a saturated line serves at most
// one transaction at a time over the whole run, however time is cut. The
// caller adds the StallNS each weave reports to the CPU's clock before the
// CPU logs the next epoch's accesses: the replay issues a new access at its
// logged time plus only the stall the caller has not yet been told of.
//
// logs may be in any order and may hold nils; at most one Log per CPU. The
// result depends only on the logs' contents and the Space's state, never
// on the order of logs: the same inputs give identical results.
//
// A CPU issues its accesses one at a time: an access logged before the
// CPU's previous one has retired on its uncontended timeline (issue time
// plus hwmodel's UncontendedNS: the locked RMW latency for RMW and Lock)
// is issued when it has, rounded up to the next ns. An object operation
// that logs several accesses at one instant is therefore priced as a
// sequence, and a CPU never stalls on its own accesses; the caller charges
// UncontendedNS for each access itself. (The shift is not stall: it only
// moves the request in the replay, by at most the uncontended cost the
// caller charged plus under 1 ns of rounding.)
//
// WeaveUntil panics on a malformed log: a line or site this Space does not
// know, two Logs of one CPU, a CPU the machine lacks, or a lock taken and
// not released (or released and not taken) within one Log: the caller's
// critical sections never span a barrier (their accesses are logged by one
// event), even when the replay's do. A Space that panicked is not to be
// woven again: the replay may hold part of the malformed log.
func (s *Space) WeaveUntil(logs []*Log, until int64) *WeaveResult {
	n := s.m.NumCPUs()
	total := 0
	defer func() {
		for _, l := range logs {
			if l != nil && l.cpu < n {
				s.byCPU[l.cpu] = nil
			}
		}
	}()
	for _, l := range logs {
		if l == nil {
			continue
		}
		if l.cpu >= n {
			panic(fmt.Sprintf("weave: Weave: a Log of CPU %d, machine %s has CPUs 0-%d", l.cpu, s.m.Name, n-1))
		}
		if s.byCPU[l.cpu] != nil {
			panic(fmt.Sprintf("weave: Weave: two Logs of CPU %d", l.cpu))
		}
		s.byCPU[l.cpu] = l
		total += len(l.entries)
	}
	s.weaves++
	s.woven += int64(total)
	res := &s.res
	if len(res.StallNS) != n {
		res.StallNS = make([]int64, n)
		res.ExactNS = make([]float64, n)
	}
	for _, c := range s.stallCPUs {
		res.StallNS[c], res.ExactNS[c] = 0, 0
	}
	s.stallCPUs = s.stallCPUs[:0]
	res.Sites = res.Sites[:0]
	res.Accesses, res.TotalNS = total, 0
	res.Notices = res.Notices[:0]
	if total > 0 || s.rp != nil && s.rp.Pending() > 0 {
		s.weave(res, logs, until)
	}
	for _, l := range logs {
		if l != nil {
			s.collectSamples(l)
			l.SetSampling(int(s.sampleEvery))
			l.Reset()
		}
	}
	return res
}

func (s *Space) weave(res *WeaveResult, logs []*Log, until int64) {
	s.streamCPUs = s.streamCPUs[:0]
	for _, l := range logs {
		if l != nil && len(l.entries) > 0 {
			s.streamCPUs = append(s.streamCPUs, l.cpu)
		}
	}
	slices.Sort(s.streamCPUs) // added in CPU order, whatever the order of logs
	if s.rp == nil {
		s.rp = NewReplayer(s.m)
		s.rp.KeepTotals()
		for _, sp := range s.spins {
			s.rp.SetLockSpin(int32(sp.Lock), int32(sp.OnOwner), int32(sp.Queued))
		}
	}
	// Replayer.AdvanceCPUs, with each log's entries added to the replay
	// as they are checked, without a stream of Reqs between.
	s.rp.begin(s.lines, s.m.NumCPUs())
	var held []LineID
	for _, c := range s.streamCPUs {
		held = s.addLog(s.byCPU[c], &s.uncPS, held[:0])
		s.rp.issue(c)
	}
	rr := s.rp.run(until)
	res.Notices = append(res.Notices, rr.Notices...)
	if len(s.siteBuf) < len(s.sites) {
		s.siteBuf = make([]int64, len(s.sites))
	}
	sitePS := s.siteBuf // all zero between weaves
	for _, c32 := range rr.CPUs {
		c, served := int(c32), rr.Served[int(c32)]
		if len(served) == 0 {
			continue
		}
		var cpuPS int64
		hits := s.siteHit[:0]
		for _, e := range served {
			ps := e.StallPS
			if ps == 0 {
				continue
			}
			cpuPS += ps
			if sitePS[e.Tag] == 0 {
				hits = append(hits, Site(e.Tag))
			}
			sitePS[e.Tag] += ps
			s.lineStats[e.Line].stallPS += ps
			s.siteStats[e.Tag].stallPS += ps
		}
		slices.Sort(hits)
		for _, site := range hits {
			res.Sites = append(res.Sites, SiteCharge{CPU: c, Site: site, NS: float64(sitePS[site]) / 1000})
			sitePS[site] = 0
		}
		s.siteHit = hits
		res.ExactNS[c] = float64(cpuPS) / 1000
		s.stallCPUs = append(s.stallCPUs, c)
		res.TotalNS += res.ExactNS[c]
		tot := s.remPS[c] + cpuPS
		res.StallNS[c] = tot / 1000
		s.remPS[c] = tot % 1000
	}
}

// addLog adds l's entries to the replay as its CPU's new requests (a
// Req's pend: at their issue times, in ps), validating them and counting
// them in the statistics; held is scratch for the lock check.
func (s *Space) addLog(l *Log, uncPS *[hwmodel.NumOps]int64, held []LineID) []LineID {
	cpu := &s.rp.cpus[l.cpu]
	cpu.reqs = slices.Grow(cpu.reqs, len(l.entries))
	ready := int64(math.MinInt64)
	foot, mark := l.footBase, 0
	for i, e := range l.entries {
		for ; mark < len(l.marks) && l.marks[mark].at <= i; mark++ {
			foot = l.marks[mark].foot
		}
		if e.Line < 0 || int(e.Line) >= len(s.lines) {
			panic(fmt.Sprintf("weave: Weave: CPU %d entry %d names line %d, the Space has %d", l.cpu, i, e.Line, len(s.lines)))
		}
		if int(e.Site) >= len(s.sites) || e.Op >= hwmodel.NumOps {
			panic(fmt.Sprintf("weave: Weave: CPU %d entry %d: site %d, op %d unknown", l.cpu, i, e.Site, e.Op))
		}
		switch e.Op {
		case hwmodel.Lock:
			if slices.Contains(held, e.Line) {
				panic(fmt.Sprintf("weave: Weave: CPU %d takes lock %q twice (site %s, t=%d)", l.cpu, s.LineName(e.Line), s.SiteName(e.Site), e.T))
			}
			held = append(held, e.Line)
		case hwmodel.Unlock:
			k := slices.Index(held, e.Line)
			if k < 0 {
				panic(fmt.Sprintf("weave: Weave: CPU %d releases lock %q it did not take this epoch (site %s, t=%d); a SpinLock must not be held across a barrier",
					l.cpu, s.LineName(e.Line), s.SiteName(e.Site), e.T))
			}
			held = slices.Delete(held, k, k+1)
		}
		lvl := hwmodel.LevelL1
		if foot != 0 && s.ages.on {
			lvl = s.ages.level(l.cpu, e.Line, foot)
		}
		tps := max(e.T*1000, ready)
		t := tps / 1000
		if t*1000 < tps {
			t++ // whole ns, rounded up: never before the previous access retired
		}
		ready = t*1000 + uncPS[e.Op]
		cpu.reqs = append(cpu.reqs, pend{at: t*1000 - cpu.base, line: int32(e.Line), op: e.Op,
			indep: e.Indep() && e.Op == hwmodel.Read, notify: e.Notify(), locked: e.Flags&EntryLocked != 0, tag: int32(e.Site),
			lvl: lvl})
		s.siteStats[e.Site].ops[e.Op]++
	}
	if len(held) > 0 {
		names := make([]string, len(held))
		for i, id := range held {
			names[i] = fmt.Sprintf("%q", s.LineName(id))
		}
		panic(fmt.Sprintf("weave: Weave: CPU %d still holds lock %s at the end of the epoch; a SpinLock must not be held across a barrier",
			l.cpu, strings.Join(names, ", ")))
	}
	s.rp.npend += len(l.entries)
	return held
}

// Woven is the number of accesses woven so far, over every weave: the log
// entries handed to Weave and WeaveUntil, each of which the replay serves
// once. It is the engine's unit of work (bench: host-ns/access).
func (s *Space) Woven() int64 { return s.woven }

// Pending is the number of logged accesses the replay has not yet served:
// requests waiting on a busy line or a held lock, and those queued behind
// them on their CPU. They are served, and charged, by later weaves.
func (s *Space) Pending() int {
	if s.rp == nil {
		return 0
	}
	return s.rp.Pending()
}

// Behind reports whether CPU cpu has logged accesses the replay has not
// yet issued, because they wait behind an earlier one on a busy line: the
// CPU is physically still before the point where it logged them, and must
// not run on (the engine holds it until the replay catches up).
func (s *Space) Behind(cpu int) bool { return s.rp != nil && s.rp.Behind(cpu) }

// Stalled reports whether CPU cpu is stalled at the end of the last weave:
// an access of its own waits at its line (a busy line or a held lock).
// Behind without Stalled means only that the CPU logged accesses past the
// weave's end: its clock ran ahead of the barrier, and it has not yet got
// there.
func (s *Space) Stalled(cpu int) bool { return s.rp != nil && s.rp.Stalled(cpu) }

// Owes reports whether a later weave may still charge CPU cpu
// (Replayer.Owes): accesses not yet issued, one waiting at a
// busy line, or independent loads in flight. Unlike Behind, the CPU may
// run on.
func (s *Space) Owes(cpu int) bool { return s.rp != nil && s.rp.Owes(cpu) }

// Now is the virtual time the weave has replayed up to.
func (s *Space) Now() int64 {
	if s.rp == nil {
		return 0
	}
	return s.rp.Now()
}

// BusyUntil is when line id finishes the transaction it is serving, in
// virtual ns: a line saturated at one barrier is still busy after it.
func (s *Space) BusyUntil(id LineID) int64 {
	if s.rp == nil {
		return 0
	}
	return s.rp.BusyUntil(int(id))
}

// CarriedNS is CPU cpu's stall not yet handed out by StallNS, in ns
// (always below 1).
func (s *Space) CarriedNS(cpu int) float64 { return float64(s.remPS[cpu]) / 1000 }
