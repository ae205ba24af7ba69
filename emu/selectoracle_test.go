package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// The model's side of the wakeup-placement oracle (selectkernel_test.go
// has fair.c's): each view is set on a Sim's published snapshots and the
// waker's runqueue, and select_task_rq_fair() run on it.

// modelSelect sets view v on s and runs the model's selectTaskRQFair.
// cleared reports whether it wrote has_idle_cores = 0.
func modelSelect(t *testing.T, s *Sim, v *sisView) (cpu int, cleared bool) {
	t.Helper()
	n := len(s.cpus)
	for c := 0; c < n; c++ {
		s.snap[c] = cpuSnap{idle: v.idle[c], load: v.load[c], nrRunning: 1}
		if v.idle[c] {
			s.snap[c].nrRunning = 0
		}
	}
	for id := range s.llcSnap {
		s.llcSnap[id] = llcSnap{hasIdleCores: v.hasIdleCores[id], nrIdleScan: v.nrIdleScan[id]}
	}
	rq := s.cpus[v.this]
	rq.llcWrites, rq.outbox, rq.enqueuedTo = nil, nil, nil
	rq.wokeTo = append(rq.wokeTo[:0], v.woke...)
	rq.cfs.avg.LoadAvg = v.load[v.this]
	// SIS_PROP's inputs.
	rq.wakeAvgIdle, rq.wakeStamp = int64(v.wakeAvgIdle), rq.jiffies()-int64(v.wakeAge)
	s.llc[v.this].sd.avgScanCost = int64(v.avgScanCost)
	p := &Task{cpu: v.prev}
	if v.idle[v.this] {
		rq.curr, rq.nrRunning = nil, 0
	} else {
		cur := &Task{cpu: v.this, wakeeFlips: v.currFlips, wakeeFlipDecayTS: rq.now}
		cur.se.cfsRq = rq.cfs
		cur.se.Avg.LoadAvg = v.currLoad
		if v.lastWakeeIsP {
			cur.lastWakee = p
		}
		rq.curr, rq.nrRunning = cur, v.nrRunning
	}
	flags := 0
	if v.sync {
		flags |= wfSync
	}
	ts := taskSnap{cpu: v.prev, wakeeFlips: v.pFlips, hLoad: v.taskLoad, recentUsedCPU: v.recent}
	got := rq.selectTaskRQFair(p, ts, v.prev, flags)
	cleared = false
	for _, w := range rq.llcWrites {
		cleared = cleared || !w.v
	}
	rq.curr, rq.nrRunning, rq.wokeTo = nil, 0, rq.wokeTo[:0]
	rq.cfs.avg.LoadAvg = 0
	rq.llcWrites, rq.outbox = nil, nil
	return got, cleared
}

// newView is a view with every CPU busy at load 1024 and SIS_PROP's scan
// unbounded (TestSelectOracleSISProp and randomView bound it).
func newView(m *hwmodel.Machine, this, prev int) *sisView {
	n := m.NumCPUs()
	v := &sisView{this: this, prev: prev, idle: make([]bool, n), load: make([]uint64, n), nrRunning: 1,
		recent: -1, hasIdleCores: map[int]bool{}, nrIdleScan: map[int]int{},
		wakeAvgIdle: 1 << 30, avgScanCost: 100}
	for c := range v.load {
		v.load[c] = 1024
	}
	for _, span := range m.LLCs {
		v.nrIdleScan[span[0]] = len(span)
	}
	return v
}

// randomView draws a view: a share of idle CPUs, loads, flips, sync, a
// recent CPU, the LLC flags.
func randomView(m *hwmodel.Machine, r *rand.Rand) *sisView {
	n := m.NumCPUs()
	v := newView(m, r.IntN(n), r.IntN(n))
	if r.IntN(4) == 0 { // prev near this: same core or LLC
		span := m.LLCSpan(v.this)
		v.prev = span[r.IntN(len(span))]
	}
	pIdle := []float64{0, 0.01, 0.05, 0.3, 0.8}[r.IntN(5)]
	for c := range v.idle {
		v.idle[c] = r.Float64() < pIdle
		v.load[c] = uint64(r.IntN(3000))
		if v.idle[c] {
			v.load[c] = uint64(r.IntN(50))
		}
	}
	v.nrRunning = 1 + r.IntN(3)
	if v.idle[v.this] {
		v.nrRunning = 0
	}
	v.sync = r.IntN(2) == 0
	v.currLoad, v.taskLoad = uint64(r.IntN(1500)), uint64(r.IntN(1500))
	factor := len(m.LLCSpan(v.this))
	v.currFlips, v.pFlips = uint(r.IntN(3*factor)), uint(r.IntN(3*factor))
	if v.idle[v.this] {
		v.currFlips = 0 // the idle task's flips (see TestSelectOracle)
	}
	v.lastWakeeIsP = r.IntN(2) == 0
	if r.IntN(2) == 0 {
		v.recent = r.IntN(n)
	}
	for i := r.IntN(3); i > 0; i-- {
		v.woke = append(v.woke, r.IntN(n))
	}
	for _, span := range m.LLCs {
		v.hasIdleCores[span[0]] = r.IntN(2) == 0
		v.nrIdleScan[span[0]] = []int{0, 1, 2, 4, len(span) / 2, len(span)}[r.IntN(6)]
	}
	// SIS_PROP: nr = llc_size * wake_avg_idle / (avg_scan_cost + 1), at
	// least 4; from 4 up to unbounded.
	v.wakeAvgIdle = []uint64{0, 50, 400, 2000, 1 << 30}[r.IntN(5)]
	v.avgScanCost = uint64(r.IntN(400))
	v.wakeAge = []int{0, 0, 1, 3, 40}[r.IntN(5)]
	return v
}

// idleSet marks cpus idle (and unloaded).
func (v *sisView) idleSet(cpus ...int) *sisView {
	for _, c := range cpus {
		v.idle[c], v.load[c] = true, 0
	}
	if v.idle[v.this] {
		v.nrRunning, v.currFlips = 0, 0
	}
	return v
}

// TestSelectOracle compares the model's select_task_rq_fair() with the
// transcription on hand-built and seeded random views, on spr-2s (SMT,
// two 112-CPU LLCs) and hikey-8 (two 4-CPU clusters), for every profile.
// Simplified in the model and so in the views: a wakeup from interrupt
// context on an idle CPU records no wakee (the kernel's current is the
// idle task: its wakee_flips are set to 0 here, which cannot make the
// wakeup wide). The hand-built views leave SIS_PROP's scan unbounded (an
// avg_idle too large to bound it); the random ones bound it.
func TestSelectOracle(t *testing.T) {
	type tcase struct {
		name string
		topo string
		view func(m *hwmodel.Machine) *sisView
	}
	cases := []tcase{
		{"target idle: the waker's CPU from interrupt", "hikey-8", func(m *hwmodel.Machine) *sisView {
			return newView(m, 1, 2).idleSet(1)
		}},
		{"wake_affine_idle: idle waker, idle prev in its LLC", "hikey-8", func(m *hwmodel.Machine) *sisView {
			return newView(m, 1, 2).idleSet(1, 2)
		}},
		{"wake_affine_idle: sync from a lone waker, before an idle prev", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(0, 5)
			v.sync, v.nrRunning = true, 1
			return v
		}},
		{"select_idle_sibling: an idle prev in target's LLC before the scan", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 3).idleSet(2, 3)
			v.sync, v.nrRunning = true, 1
			return v
		}},
		{"wake_affine_idle: idle prev in another LLC", "hikey-8", func(m *hwmodel.Machine) *sisView {
			return newView(m, 1, 5).idleSet(5, 0)
		}},
		{"wake_affine_weight: lighter waker wins, SIS finds its LLC's idle CPU", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			v.load[1], v.load[5] = 100, 2000
			v.nrRunning = 2
			return v
		}},
		{"wake_affine_weight: WA_BIAS keeps prev at 104%", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			// this_eff = (1000+100)*100 vs prev_eff = (1246-100)*108:
			// 110000 < 123768 -> this; at 1100 prev: 108000 -> prev.
			v.load[1], v.load[5], v.taskLoad = 1000, 1100, 100
			v.nrRunning = 2
			return v
		}},
		{"wake_wide: flips past the LLC size keep prev", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			v.load[1], v.load[5] = 0, 3000
			v.currFlips, v.pFlips, v.nrRunning = 16, 4, 2
			return v
		}},
		{"wake_wide: master == slave*factor is wide", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			v.load[1], v.load[5] = 0, 3000
			// record_wakee() makes master 16 = 4 * llc_size 4.
			v.currFlips, v.pFlips, v.nrRunning = 15, 4, 2
			return v
		}},
		{"wake_affine_weight: WF_SYNC's +1 breaks a tie for this", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			// this_eff = 1080 * 100 = 108000 = prev_eff = 1000 * 108:
			// only sync's prev_eff += 1 makes this win.
			v.load[1], v.load[5], v.taskLoad, v.currLoad = 1080, 1000, 0, 0
			v.sync, v.nrRunning = true, 2
			return v
		}},
		{"wake_affine_weight: WF_SYNC takes the waker's own load off", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			// task_h_load(current) = 1000 * 1500 / 1501 = 999: this_eff
			// (1500 - 999) * 100 = 50100 < prev_eff 600 * 108 = 64800.
			v.load[1], v.load[5], v.currLoad, v.taskLoad = 1500, 600, 1000, 0
			v.sync, v.nrRunning = true, 2
			return v
		}},
		{"wake_wide: slave*factor - 1 is not wide", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(3, 6)
			v.load[1], v.load[5] = 0, 3000
			v.currFlips, v.pFlips, v.nrRunning = 14, 4, 2
			return v
		}},
		{"recent_used_cpu in target's LLC", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(7, 6)
			v.load[1] = 3000 // wake_affine_weight() keeps prev: target 5
			v.recent = 7     // the scan from 6 would find 6
			return v
		}},
		{"ttwu_pending: the waker's own wake hides an idle CPU", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(6, 7)
			v.woke = []int{6}
			return v
		}},
		{"SIS_UTIL: nr_idle_scan 0 stops the scan", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 1, 5).idleSet(7)
			v.nrIdleScan[4] = 0
			return v
		}},
		{"SIS_UTIL: nr_idle_scan 2 reaches target+2, not target+3", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 5, 5).idleSet(4)
			v.nrIdleScan[4] = 2 // scans 6, 7: 4 is third
			return v
		}},
		{"SIS_UTIL: nr_idle_scan 3 reaches the third CPU", "hikey-8", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 5, 5).idleSet(4)
			v.nrIdleScan[4] = 3
			return v
		}},
		{"select_idle_smt: prev's sibling", "spr-2s", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 3, 10).idleSet(122, 40)
			v.load[3], v.load[10] = 3000, 0
			return v
		}},
		{"has_idle_cores: a whole idle core beats an idle thread", "spr-2s", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 10, 10).idleSet(12, 50, 162)
			v.hasIdleCores[0] = true
			return v
		}},
		{"has_idle_cores: no whole core, the first idle thread (and the flag cleared)", "spr-2s", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 10, 10).idleSet(12, 50)
			v.hasIdleCores[0] = true
			return v
		}},
		{"wrap: the scan starts after target and wraps", "spr-2s", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 160, 160).idleSet(2, 150)
			return v
		}},
		{"NUMA: a remote prev's domain pct is 117", "spr-2s", func(m *hwmodel.Machine) *sisView {
			v := newView(m, 3, 60).idleSet(20, 70)
			v.load[3], v.load[60], v.taskLoad, v.nrRunning = 1000, 1100, 100, 2
			return v
		}},
	}
	for _, prof := range Profiles {
		sims := map[string]*Sim{}
		for _, tc := range cases {
			t.Run(prof.Name+"/"+tc.topo+"/"+tc.name, func(t *testing.T) {
				s := sims[tc.topo]
				if s == nil {
					s = newSim(t, tc.topo, prof.Name)
					sims[tc.topo] = s
				}
				v := tc.view(s.m)
				want := kernelSelect(kernelTopo{s.m}, prof.Name, v)
				got, cleared := modelSelect(t, s, v)
				if got != want {
					t.Errorf("model picked CPU %d, fair.c %s picks %d", got, prof.Name, want)
				}
				if cleared != v.cleared {
					t.Errorf("model cleared has_idle_cores: %v, fair.c %s: %v", cleared, prof.Name, v.cleared)
				}
			})
		}
	}
}

// TestSelectOracleRandom runs the comparison on seeded random views.
func TestSelectOracleRandom(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 150
	}
	for _, topo := range []string{"spr-2s", "hikey-8"} {
		for _, prof := range Profiles {
			t.Run(topo+"/"+prof.Name, func(t *testing.T) {
				s := newSim(t, topo, prof.Name)
				r := rand.New(rand.NewPCG(43, uint64(len(topo))))
				k := kernelTopo{s.m}
				seen := map[string]bool{}
				bad := 0
				for i := 0; i < n; i++ {
					v := randomView(s.m, r)
					want := kernelSelect(k, prof.Name, v)
					got, cleared := modelSelect(t, s, v)
					seen[outcome(v, want)] = true
					if v.cleared {
						seen["cleared"] = true
					}
					if (got != want || cleared != v.cleared) && bad < 5 {
						bad++
						t.Errorf("case %d (this %d prev %d sync %v): model %d (cleared has_idle_cores %v), fair.c %d (%v)", i, v.this, v.prev, v.sync, got, cleared, want, v.cleared)
					}
				}
				// The draws must reach the decisions they exist for.
				for _, o := range []string{"prev", "this", "other"} {
					if !seen[o] {
						t.Errorf("no random case ended at %s", o)
					}
				}
			})
		}
	}
}

func outcome(v *sisView, cpu int) string {
	switch cpu {
	case v.prev:
		return "prev"
	case v.this:
		return "this"
	}
	return "other"
}

// TestSelectOracleSISProp is v5.15's SIS_PROP bound (features.h v5.15:
// SCHED_FEAT(SIS_PROP, true)): with wake_avg_idle short against
// avg_scan_cost, select_idle_cpu() probes only 4 CPUs of the LLC.
func TestSelectOracleSISProp(t *testing.T) {
	s := newSim(t, "spr-2s", "v5.15-cfs")
	v := newView(s.m, 10, 10).idleSet(40)
	v.wakeAvgIdle, v.avgScanCost = 1000, 100000
	want := kernelSelect(kernelTopo{s.m}, "v5.15-cfs", v)
	if want != 10 {
		t.Fatalf("transcription: SIS_PROP's 4 probes reached CPU %d", want)
	}
	got, _ := modelSelect(t, s, v)
	if got != want {
		t.Errorf("model picked CPU %d, fair.c v5.15 with SIS_PROP %d", got, want)
	}
}

// TestSISPropAccounting is the rest of SIS_PROP (fair.c v5.15
// select_idle_cpu(), core.c ttwu_do_wakeup()): a scan that ends on an
// idle CPU takes its cost, as this CPU's clock charged it, from
// wake_avg_idle and folds it into this_sd->avg_scan_cost (update_avg(),
// 1/8); a scan that runs out of nr returns before the update; a stale
// wake_avg_idle is halved per jiffy since wake_stamp, which can bound the
// scan; the wakeup of an idle CPU sets wake_avg_idle to avg_idle / 2.
func TestSISPropAccounting(t *testing.T) {
	s := newSim(t, "spr-2s", "v5.15-cfs")
	rq := s.cpus[10]
	sd := s.llc[10].sd
	// From 10, the scan probes 11..40: 30 CPUs, the last idle. The view
	// is set by a first select; the scan is then timed alone.
	v := newView(s.m, 10, 10).idleSet(40)
	v.wakeAvgIdle, v.avgScanCost = 1_000_000, 800
	if got, _ := modelSelect(t, s, v); got != 40 {
		t.Fatalf("picked %d, want the idle CPU 40", got)
	}
	rq.wakeAvgIdle, sd.avgScanCost = 1_000_000, 800
	t0 := rq.now
	if got := rq.selectIdleCPU(&Task{cpu: 10}, sd, false, 10); got != 40 {
		t.Fatalf("select_idle_cpu() found %d, want 40", got)
	}
	scan := rq.now - t0
	if min := 30 * rq.m.Cost(hwmodel.OpSISProbe); scan < min {
		t.Fatalf("the scan charged %d ns, less than its 30 probes' %d", scan, min)
	}
	if want := int64(800) + (scan-800)/8; sd.avgScanCost != want {
		t.Errorf("avg_scan_cost %d after a scan of %d ns, want %d", sd.avgScanCost, scan, want)
	}
	if want := int64(1_000_000) - scan; rq.wakeAvgIdle != want {
		t.Errorf("wake_avg_idle %d, want %d (1000000 less the scan)", rq.wakeAvgIdle, want)
	}
	if rq.Stats.SISProbes < 60 {
		t.Errorf("SISProbes %d after two scans of 30 CPUs", rq.Stats.SISProbes)
	}

	// nr = 112 * 1000 / (100000 + 1) < 4 * avg_cost: 4, so 3 probes,
	// then the return before the update.
	v = newView(s.m, 10, 10).idleSet(40)
	v.wakeAvgIdle, v.avgScanCost = 1000, 100000
	if got, _ := modelSelect(t, s, v); got != 10 {
		t.Fatalf("picked %d, want target 10 (the scan bounded at 4)", got)
	}
	if sd.avgScanCost != 100000 || rq.wakeAvgIdle != 1000 {
		t.Errorf("a scan that ran out updated avg_scan_cost %d (want 100000) or wake_avg_idle %d (want 1000)", sd.avgScanCost, rq.wakeAvgIdle)
	}

	// wake_avg_idle 1000000 stamped 20 jiffies ago ages to 0: nr 4.
	v = newView(s.m, 10, 10).idleSet(40)
	v.wakeAvgIdle, v.avgScanCost, v.wakeAge = 1_000_000, 800, 20
	want := kernelSelect(kernelTopo{s.m}, "v5.15-cfs", v)
	if got, _ := modelSelect(t, s, v); got != want || want != 10 {
		t.Errorf("aged wake_avg_idle: model %d, fair.c %d, want 10", got, want)
	}
	if rq.wakeStamp != rq.jiffies() {
		t.Errorf("wake_stamp %d after aging to 0, want the jiffy %d", rq.wakeStamp, rq.jiffies())
	}

	// ttwu_do_wakeup() on an idle CPU: avg_idle's update, then
	// wake_avg_idle = avg_idle / 2.
	rq.clock, rq.idleStamp, rq.avgIdle = 400_000, 100_000, 200_000
	rq.updateAvgIdle()
	if wantAvg := int64(200_000 + (300_000-200_000)/8); rq.avgIdle != wantAvg || rq.wakeAvgIdle != wantAvg/2 {
		t.Errorf("avg_idle %d, wake_avg_idle %d, want %d and %d", rq.avgIdle, rq.wakeAvgIdle, wantAvg, wantAvg/2)
	}
}
