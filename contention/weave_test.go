package contention

import (
	"bytes"
	"cmp"
	"github.com/rqemu/rqemu/weave"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/rqemu/rqemu/hwmodel"
)

func nearNS(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestWeaveAlternating: two CPUs alternating RMWs on one line pay one
// transfer each at the latency of their distance class, as the preset
// gives it (the line homed on the first CPU's node, so no home-agent
// detour), after the first CPU's fill from DRAM.
func TestWeaveAlternating(t *testing.T) {
	for _, tc := range []struct {
		preset string
		a, b   int
		class  hwmodel.Class
	}{
		{"spr-2s", 0, 112, hwmodel.ClassSMT},
		{"spr-2s", 0, 1, hwmodel.ClassLLC},
		{"spr-2s", 0, 56, hwmodel.ClassRemote},
		{"spr-2s", 56, 0, hwmodel.ClassRemote},
		{"epyc-9654-2s", 0, 192, hwmodel.ClassSMT},
		{"epyc-9654-2s", 0, 1, hwmodel.ClassLLC},
		{"epyc-9654-2s", 0, 8, hwmodel.ClassSocket},
		{"epyc-9654-2s", 0, 96, hwmodel.ClassRemote},
	} {
		m := machine(t, tc.preset)
		if got := m.Class(tc.a, tc.b); got != tc.class {
			t.Fatalf("%s: class(%d,%d) = %v, want %v", tc.preset, tc.a, tc.b, got, tc.class)
		}
		s := weave.NewSpace(m)
		c := NewCounter(s, "tg.load_avg", m.CPUs[tc.a].Node)
		site := s.Site("update_load_avg")
		la, lb := s.NewLog(tc.a), s.NewLog(tc.b)
		c.Add(la, 0, site, 1) // the fill
		const rounds = 10
		for i := range int64(rounds) {
			c.Add(lb, 1000*(2*i+1), site, 1)
			c.Add(la, 1000*(2*i+2), site, 1)
		}
		res := s.Weave([]*weave.Log{la, lb})
		x := m.Lat.Transfer[tc.class]
		if !nearNS(res.ExactNS[tc.b], rounds*x) {
			t.Errorf("%s %d-%d: CPU %d stall %.3f, want %d transfers of %.1f", tc.preset, tc.a, tc.b, tc.b, res.ExactNS[tc.b], rounds, x)
		}
		if want := m.Lat.MemLocal + rounds*x; !nearNS(res.ExactNS[tc.a], want) {
			t.Errorf("%s %d-%d: CPU %d stall %.3f, want the fill %.1f + %d transfers of %.1f", tc.preset, tc.a, tc.b, tc.a, res.ExactNS[tc.a], m.Lat.MemLocal, rounds, x)
		}
		ls := s.Stats().Lines[c.Line()]
		if ls.Transfers[tc.class] != 2*rounds || ls.TotalTransfers() != 2*rounds || ls.Fills != 1 {
			t.Errorf("%s %d-%d: transfers %v fills %d, want %d %v transfers and 1 fill", tc.preset, tc.a, tc.b, ls.Transfers, ls.Fills, 2*rounds, tc.class)
		}
		if la.Len() != 0 || lb.Len() != 0 {
			t.Errorf("weave did not reset the logs")
		}
	}
	// The preset's latencies: cross-socket costs more than same-LLC.
	for _, p := range []string{"spr-2s", "epyc-9654-2s"} {
		m := machine(t, p)
		if !(m.Lat.Transfer[hwmodel.ClassRemote] > m.Lat.Transfer[hwmodel.ClassLLC]) {
			t.Errorf("%s: remote %.1f ns not above same-LLC %.1f ns", p, m.Lat.Transfer[hwmodel.ClassRemote], m.Lat.Transfer[hwmodel.ClassLLC])
		}
	}
}

// TestWeaveHomeRemote: a same-socket transfer of a line homed on the other
// socket pays the home agent's detour.
func TestWeaveHomeRemote(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	c := NewCounter(s, "remote-homed", 1)
	la, lb := s.NewLog(0), s.NewLog(1)
	c.Add(la, 0, weave.NoSite, 1)
	c.Add(lb, 1000, weave.NoSite, 1)
	res := s.Weave([]*weave.Log{la, lb})
	if want := m.Lat.Transfer[hwmodel.ClassLLC] + m.Lat.HomeRemote; !nearNS(res.ExactNS[1], want) {
		t.Errorf("stall %.3f, want LLC transfer + home_remote = %.1f", res.ExactNS[1], want)
	}
	if !nearNS(res.ExactNS[0], m.Lat.MemRemote) {
		t.Errorf("fill %.3f, want mem_remote %.1f", res.ExactNS[0], m.Lat.MemRemote)
	}
}

// TestWeaveSerializes: 100 CPUs of one socket doing an RMW at the same
// instant serialize: the k-th served waits for the k earlier RMWs (a
// transfer plus the RMW each), the last for about 99 transfers.
func TestWeaveSerializes(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	c := NewCounter(s, "tg.load_avg", 0)
	site := s.Site("update_load_avg")
	// Warm: CPU 112 (core 0's second thread) owns the line.
	warm := s.NewLog(112)
	c.Add(warm, 0, site, 1)
	s.Weave([]*weave.Log{warm})
	// The first threads of cores 0-55 and the second threads of cores
	// 12-55: no hand-over between SMT siblings except the first.
	var cpus []int
	for c := range 56 {
		cpus = append(cpus, c)
	}
	for c := 112 + 12; c < 168; c++ {
		cpus = append(cpus, c)
	}
	logs := make([]*weave.Log, len(cpus))
	for i, cpu := range cpus {
		logs[i] = s.NewLog(cpu)
		c.Add(logs[i], 5000, site, 1)
	}
	res := s.Weave(logs)
	// The home draws the order among simultaneous requests
	// (weave.Replayer.serve): walk them in the order served, the k-th
	// waiting for the k before it.
	order := slices.Clone(cpus)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(res.ExactNS[a], res.ExactNS[b]) })
	wait, prev := 0.0, 112
	for k, cpu := range order {
		x := m.TransferNS(cpu, prev, 0)
		if !nearNS(res.ExactNS[cpu], wait+x) {
			t.Fatalf("%d-th CPU %d stalls %.3f, want %.3f", k, cpu, res.ExactNS[cpu], wait+x)
		}
		wait += x + m.Lat.RMWLocal
		prev = cpu
	}
	if last := res.ExactNS[order[99]]; last < 99*m.Lat.Transfer[hwmodel.ClassLLC] {
		t.Errorf("the last waits %.1f ns, less than 99 transfers", last)
	}
	if got := c.Value(); got != 101 {
		t.Errorf("counter %d, want 101", got)
	}
}

// TestWeaveReadMostly: a line written rarely and read often costs a reader
// only its first read after each write; the write invalidates the readers.
func TestWeaveReadMostly(t *testing.T) {
	for _, preset := range []string{"spr-2s", "epyc-9654-2s"} {
		m := machine(t, preset)
		s := weave.NewSpace(m)
		c := NewCounter(s, "tg.load_avg", 0)
		write, first, again := s.Site("update_tg_load_avg"), s.Site("first_read"), s.Site("read_again")
		readers := spreadCPUs(m)[1:8]
		w := s.NewLog(0)
		logs := []*weave.Log{w}
		for _, r := range readers {
			logs = append(logs, s.NewLog(r))
		}
		// Two phases: a write, then every reader reads 3 times, 1 us apart
		// (readers staggered so that they never queue on the line).
		for phase := range int64(2) {
			base := phase * 100_000
			c.Add(w, base, write, 5)
			for i, l := range logs[1:] {
				for k := range int64(3) {
					site := again
					if k == 0 {
						site = first
					}
					if got := c.Load(l, base+1000*(10*k+int64(i)+1), site); got != 5*(phase+1) {
						t.Fatalf("read %d, want %d", got, 5*(phase+1))
					}
				}
			}
		}
		res := s.Weave(logs)
		for _, r := range readers {
			if got := res.SiteNS(r, again); got != 0 {
				t.Errorf("%s: reader %d paid %.1f ns on repeated reads", preset, r, got)
			}
			if got := res.SiteNS(r, first); got <= 0 || !nearNS(got, res.ExactNS[r]) {
				t.Errorf("%s: reader %d paid %.1f on first reads, total %.1f", preset, r, got, res.ExactNS[r])
			}
		}
		ls := s.Stats().Lines[c.Line()]
		if got, want := ls.TotalTransfers(), int64(2*len(readers)); got != want {
			t.Errorf("%s: %d transfers, want %d (one per reader per write)", preset, got, want)
		}
		if got, want := ls.Invalidations, int64(len(readers)); got != want {
			t.Errorf("%s: %d invalidations, want %d (the second write invalidates every reader)", preset, got, want)
		}
		if res.SiteNS(0, write) <= m.Lat.MemLocal {
			t.Errorf("%s: the writer paid %.1f, want the fill plus the invalidation", preset, res.SiteNS(0, write))
		}
	}
}

// weaveWorkload logs a deterministic mixed workload on several objects for
// CPUs cpus, epoch k, and returns the logs.
func weaveWorkload(s *weave.Space, objs *testObjects, cpus []int, epoch int64, logs map[int]*weave.Log) []*weave.Log {
	seed := uint64(epoch*7919 + 1)
	next := func() uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return seed >> 33
	}
	var out []*weave.Log
	for _, cpu := range cpus {
		l := logs[cpu]
		if l == nil {
			l = s.NewLog(cpu)
			logs[cpu] = l
		}
		out = append(out, l)
		now := max(l.Last(), epoch*100_000)
		for range 40 {
			now += int64(next() % 300)
			switch next() % 6 {
			case 0:
				objs.tg.Add(l, now, objs.sites[0], int64(next()%100)-50)
			case 1:
				objs.tg.Load(l, now, objs.sites[1])
			case 2:
				lk := objs.locks[next()%uint64(len(objs.locks))]
				lk.Lock(l, now, objs.sites[2])
				lk.SetNrRunning(l, now+50, objs.sites[2], 1)
				lk.Unlock(l, now+100, objs.sites[2])
				now += 100
			case 3:
				objs.llc.HasIdleCores(l, now, objs.sites[3])
			case 4:
				objs.llc.SetHasIdleCores(l, now, objs.sites[3], next()%2 == 0)
			case 5:
				objs.removed.Add(l, now, objs.sites[4], 1, 2, 3)
			}
		}
	}
	return out
}

type testObjects struct {
	tg      *Counter
	locks   []*SpinLock
	llc     *LLCShared
	removed *Removed
	sites   []weave.Site
}

func newTestObjects(s *weave.Space) *testObjects {
	o := &testObjects{
		tg:      NewCounter(s, "tg.load_avg", 0),
		llc:     NewLLCShared(s, "sd_llc_shared", 0),
		removed: NewRemoved(s, "cfs_rq0.removed", 0),
	}
	for i := range 3 {
		o.locks = append(o.locks, NewSpinLock(s, "rq.lock"+string(rune('0'+i)), i%2))
	}
	for _, name := range []string{"update_tg_load_avg", "calc_group_shares", "raw_spin_rq_lock", "select_idle_cpu", "remove_entity_load_avg"} {
		o.sites = append(o.sites, s.Site(name))
	}
	return o
}

// TestWeaveAttribution: per-site stalls sum to each CPU's stall, and the
// cumulative tables agree with the results.
func TestWeaveAttribution(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	objs := newTestObjects(s)
	cpus := spreadCPUs(m)[:24]
	logs := map[int]*weave.Log{}
	total := 0.0
	for epoch := range int64(3) {
		res := s.Weave(weaveWorkload(s, objs, cpus, epoch, logs))
		perSite := 0.0
		for _, cpu := range cpus {
			sum := 0.0
			for _, e := range res.CPUSites(cpu) {
				if e.CPU != cpu || e.NS <= 0 {
					t.Fatalf("bad site charge %+v for CPU %d", e, cpu)
				}
				sum += e.NS
			}
			if !nearNS(sum, res.ExactNS[cpu]) {
				t.Errorf("epoch %d CPU %d: sites sum to %.3f, stall %.3f", epoch, cpu, sum, res.ExactNS[cpu])
			}
			perSite += sum
		}
		if !nearNS(perSite, res.TotalNS) || res.TotalNS <= 0 {
			t.Errorf("epoch %d: sites sum to %.3f, total %.3f", epoch, perSite, res.TotalNS)
		}
		total += res.TotalNS
	}
	st := s.Stats()
	lineSum, siteSum := 0.0, 0.0
	for _, l := range st.Lines {
		lineSum += l.StallNS
	}
	for _, x := range st.Sites {
		siteSum += x.StallNS
	}
	if !nearNS(st.StallNS, total) || !nearNS(lineSum, total) || !nearNS(siteSum, total) {
		t.Errorf("cumulative stall %.3f, lines %.3f, sites %.3f; weaves gave %.3f", st.StallNS, lineSum, siteSum, total)
	}
	// One line's statistics read alone (a window's snapshot) are its
	// entry of the whole table.
	for i, l := range st.Lines {
		if one, ok := s.LineStat(weave.LineID(i)); !ok || !reflect.DeepEqual(one, l) {
			t.Errorf("line %d alone %+v (ok %v), in the table %+v", i, one, ok, l)
		}
	}
	if _, ok := s.LineStat(weave.LineID(len(st.Lines))); ok {
		t.Error("LineStat of a line that does not exist")
	}
	if st.Weaves != 3 || st.Sites[objs.sites[2]].Ops[hwmodel.Lock] == 0 {
		t.Errorf("weaves %d, lock ops %d", st.Weaves, st.Sites[objs.sites[2]].Ops[hwmodel.Lock])
	}
}

// TestWeaveRemainder: the sub-ns part of the stall is carried from weave
// to weave, so the whole ns handed out never fall behind the exact total
// by a whole ns, and nothing is lost.
func TestWeaveRemainder(t *testing.T) {
	m := machine(t, "spr-2s") // same-LLC transfer: 55.3 ns
	s := weave.NewSpace(m)
	c := NewCounter(s, "x", 0)
	la, lb := s.NewLog(0), s.NewLog(1)
	c.Add(la, 0, weave.NoSite, 1)
	s.Weave([]*weave.Log{la})
	var exact float64
	var handed int64
	for k := range int64(25) {
		base := 10_000 * (k + 1)
		c.Add(lb, base, weave.NoSite, 1)
		c.Add(la, base+5000, weave.NoSite, 1)
		res := s.Weave([]*weave.Log{lb, la})
		exact += res.ExactNS[1]
		handed += res.StallNS[1]
		if !nearNS(res.ExactNS[1], 55.3) {
			t.Fatalf("weave %d: stall %.3f, want 55.3", k, res.ExactNS[1])
		}
		if want := int64(math.Floor(exact + 1e-9)); handed != want {
			t.Fatalf("weave %d: handed out %d ns of %.3f", k, handed, exact)
		}
		if !nearNS(float64(handed)+s.CarriedNS(1), exact) || s.CarriedNS(1) >= 1 {
			t.Fatalf("weave %d: handed %d + carried %.3f != %.3f", k, handed, s.CarriedNS(1), exact)
		}
	}
	if handed != 1382 { // 25 x 55.3 = 1382.5
		t.Errorf("handed out %d ns, want 1382", handed)
	}
}

// TestWeaveDeterministic: the same logs give identical results and
// statistics, whatever the order of the logs.
func TestWeaveDeterministic(t *testing.T) {
	m := machine(t, "spr-2s")
	run := func(reverse bool) ([]*weave.WeaveResult, string) {
		s := weave.NewSpace(m)
		objs := newTestObjects(s)
		cpus := spreadCPUs(m)[:40]
		logs := map[int]*weave.Log{}
		var out []*weave.WeaveResult
		for epoch := range int64(3) {
			ls := weaveWorkload(s, objs, cpus, epoch, logs)
			if reverse {
				for i, j := 0, len(ls)-1; i < j; i, j = i+1, j-1 {
					ls[i], ls[j] = ls[j], ls[i]
				}
			}
			out = append(out, s.Weave(ls))
		}
		var b bytes.Buffer
		if err := s.WriteStats(&b); err != nil {
			t.Fatal(err)
		}
		return out, b.String()
	}
	r1, s1 := run(false)
	r2, s2 := run(true)
	if !reflect.DeepEqual(r1, r2) {
		t.Error("two weaves of the same logs differ")
	}
	if s1 != s2 {
		t.Errorf("statistics differ:\n%s\n---\n%s", s1, s2)
	}
	for _, want := range []string{"contention on spr-2s: 3 weaves", "tg.load_avg", "raw_spin_rq_lock", "counter", "spinlock", "remote"} {
		if !strings.Contains(s1, want) {
			t.Errorf("WriteStats lacks %q:\n%s", want, s1)
		}
	}
	t.Logf("\n%s", s1)
}

// TestWeaveSequencesOwnAccesses: accesses logged at one instant are issued
// one after the other without the CPU's own RMW latency counted as stall.
func TestWeaveSequencesOwnAccesses(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	r := NewRemoved(s, "removed", 0)
	c := NewCounter(s, "c", 0)
	l := s.NewLog(3)
	r.Add(l, 100, weave.NoSite, 1, 1, 1) // Lock, 4 Writes, Unlock at t=100
	r.Add(l, 100, weave.NoSite, 1, 1, 1)
	for range 5 {
		c.Add(l, 200, weave.NoSite, 1) // five RMWs at one instant
	}
	res := s.Weave([]*weave.Log{l})
	// Only the two fills from DRAM are stall.
	if want := 2 * m.Lat.MemLocal; !nearNS(res.ExactNS[3], want) {
		t.Errorf("stall %.3f, want two fills %.1f", res.ExactNS[3], want)
	}
}

func TestWeaveEmptyAndNil(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	res := s.Weave([]*weave.Log{nil, s.NewLog(5)})
	if res.Accesses != 0 || res.TotalNS != 0 || len(res.StallNS) != m.NumCPUs() {
		t.Errorf("empty weave: %+v", res)
	}
}

func TestWeavePanics(t *testing.T) {
	m := machine(t, "spr-2s")
	for _, tc := range []struct {
		name string
		f    func(s *weave.Space)
		want string
	}{
		{"two logs of a CPU", func(s *weave.Space) { s.Weave([]*weave.Log{weave.NewLog(1), weave.NewLog(1)}) }, "two Logs of CPU 1"},
		{"CPU out of range", func(s *weave.Space) { s.Weave([]*weave.Log{weave.NewLog(224)}) }, "CPU 224"},
		{"unknown line", func(s *weave.Space) {
			l := weave.NewLog(0)
			l.Record(0, 7, hwmodel.Read, weave.NoSite)
			s.Weave([]*weave.Log{l})
		}, "names line 7"},
		{"unknown site", func(s *weave.Space) {
			l := weave.NewLog(0)
			l.Record(0, s.NewLine("x", 0), hwmodel.Read, 99)
			s.Weave([]*weave.Log{l})
		}, "site 99"},
		{"lock held at the barrier", func(s *weave.Space) {
			lk := NewSpinLock(s, "rq3.lock", 0)
			l := weave.NewLog(2)
			lk.Lock(l, 0, s.Site("schedule"))
			defer lk.Unlock(l, 1, weave.NoSite)
			s.Weave([]*weave.Log{l})
		}, `CPU 2 still holds lock "rq3.lock"`},
		{"unlock without lock", func(s *weave.Space) {
			l := weave.NewLog(2)
			l.Record(0, s.NewLine("rq.lock", 0), hwmodel.Unlock, weave.NoSite)
			s.Weave([]*weave.Log{l})
		}, "did not take this epoch"},
		{"time goes back", func(s *weave.Space) {
			l := weave.NewLog(4)
			l.Record(10, 0, hwmodel.Read, weave.NoSite)
			l.Record(9, 0, hwmodel.Write, weave.NoSite)
		}, "Log of CPU 4: entry {line 0, write, site 0} at t=9 is before the previous entry at t=10"},
		{"bad home", func(s *weave.Space) { s.NewLine("x", 2) }, "home node 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.f(weave.NewSpace(m))
		})
	}
}

// TestLogEntrySize: log entries are 16 bytes.
func TestLogEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(weave.Entry{}); got != 16 {
		t.Errorf("sizeof(Entry) = %d, want 16", got)
	}
	l := weave.NewLog(3)
	l.Record(5, 1, hwmodel.RMW, 2)
	l.Record(5, 2, hwmodel.Read, 2)
	if l.Len() != 2 || l.Entries()[1] != (weave.Entry{T: 5, Line: 2, Op: hwmodel.Read, Site: 2}) || l.CPU() != 3 {
		t.Errorf("log %+v", l.Entries())
	}
	l.Reset()
	if l.Len() != 0 || l.Last() != 5 {
		t.Errorf("after Reset: len %d, last %d", l.Len(), l.Last())
	}
}

// TestCloneFor prices the same logs on two targets.
func TestCloneFor(t *testing.T) {
	spr := weave.NewSpace(machine(t, "spr-2s"))
	c := NewCounter(spr, "tg", 0)
	site := spr.Site("update_load_avg")
	epyc := spr.CloneFor(machine(t, "epyc-9654-2s"))
	if epyc.NumLines() != spr.NumLines() || epyc.LineName(c.Line()) != "tg" || epyc.SiteName(site) != "update_load_avg" {
		t.Fatalf("clone differs")
	}
	mk := func() []*weave.Log {
		a, b := weave.NewLog(0), weave.NewLog(1)
		c.Add(a, 0, site, 1)
		c.Add(b, 1000, site, 1)
		return []*weave.Log{a, b}
	}
	r1 := spr.Weave(mk())
	r2 := epyc.Weave(mk())
	if !nearNS(r1.ExactNS[1], 55.3) || !nearNS(r2.ExactNS[1], 27.1) {
		t.Errorf("same-LLC transfer: spr %.1f, epyc %.1f; want 55.3 and 27.1", r1.ExactNS[1], r2.ExactNS[1])
	}
}
