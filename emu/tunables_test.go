package emu

import (
	"bytes"
	"strings"
	"testing"
)

// newSimSched is newSim with tunables: sched is a "NAME=VALUE,..." list.
func newSimSched(t testing.TB, topo, feat, sched string) *Sim {
	t.Helper()
	var extra []string
	if sched != "" {
		extra = append(extra, sched)
	}
	f, set, _, err := ParseKernel(feat, extra...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Machine: machine(t, topo), Features: f, Sched: set, Seed: 1, Check: true, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNewTunables: update_sysctl()'s scaling of the defaults by
// get_update_sysctl_factor(), and a knob set by name over it.
func TestNewTunables(t *testing.T) {
	for _, tc := range []struct {
		ncpus  int
		sched  string
		factor uint64
		slice  uint64 // sysctl_sched_base_slice
		lat    uint64 // sysctl_sched_latency
	}{
		{1, "", 1, 750_000, 6_000_000},
		{2, "", 2, 1_500_000, 12_000_000},
		{3, "", 2, 1_500_000, 12_000_000},
		{4, "", 3, 2_250_000, 18_000_000},
		{8, "", 4, 3_000_000, 24_000_000},
		{224, "", 4, 3_000_000, 24_000_000},
		{224, "tunable_scaling=0", 1, 750_000, 6_000_000},
		{4, "tunable_scaling=2", 4, 3_000_000, 24_000_000},
		{224, "tunable_scaling=2", 8, 6_000_000, 48_000_000},
		{224, "tunable_scaling=0,base_slice_ns=2800000", 1, 2_800_000, 6_000_000},
		{224, "latency_ns=12000000", 4, 3_000_000, 12_000_000},
	} {
		var set SchedSettings
		if tc.sched != "" {
			var err error
			if set, err = ParseSched(tc.sched); err != nil {
				t.Fatal(err)
			}
		}
		tun := NewTunables(tc.ncpus, 1000, set)
		if tun.Factor != tc.factor || tun.BaseSlice != tc.slice || tun.Latency != tc.lat {
			t.Errorf("%d CPUs, %q: factor %d, base slice %d, latency %d; want %d, %d, %d",
				tc.ncpus, tc.sched, tun.Factor, tun.BaseSlice, tun.Latency, tc.factor, tc.slice, tc.lat)
		}
		// sched_nr_latency is only recomputed by sched_update_scaling().
		if tun.NrLatency != 8 {
			t.Errorf("%d CPUs, %q: sched_nr_latency %d, want 8", tc.ncpus, tc.sched, tun.NrLatency)
		}
	}
}

func TestParseSched(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"base_slice_ns=2800000", "base_slice_ns=2800000", ""},
		{" nr_migrate = 8 , base_slice_ns=1000000", "base_slice_ns=1000000,nr_migrate=8", ""},
		{"kernel.sched_schedstats=0", "sched_schedstats=0", ""},
		{"nr_migrate=4,nr_migrate=16", "nr_migrate=16", ""},
		{"migration_cost_ns=0,wakeup_granularity_ns=0", "wakeup_granularity_ns=0,migration_cost_ns=0", ""},
		{"sched_util_clamp_min=0,sched_util_clamp_max=1024", "sched_util_clamp_min=0,sched_util_clamp_max=1024", ""},
		{"", "", `"" is not NAME=VALUE (allowed names: base_slice_ns, latency_ns,`},
		{"base_slice_ns", "", `"base_slice_ns" is not NAME=VALUE`},
		{"=5", "", `"=5" is not NAME=VALUE`},
		{"slice=5", "", `unknown tunable "slice" (allowed: base_slice_ns, latency_ns, min_granularity_ns, wakeup_granularity_ns, tunable_scaling, migration_cost_ns, nr_migrate, tg_load_avg_ratelimit_ns, sched_schedstats, sched_util_clamp_min, sched_util_clamp_max)`},
		{"base_slice_ns=", "", "base_slice_ns=: not a decimal integer (allowed: 100000 to 1000000000)"},
		{"base_slice_ns=2.8ms", "", "not a decimal integer (allowed: 100000 to 1000000000)"},
		{"base_slice_ns=99999", "", "base_slice_ns=99999: out of range (allowed: 100000 to 1000000000)"},
		{"base_slice_ns=1000000001", "", "out of range (allowed: 100000 to 1000000000)"},
		{"tunable_scaling=3", "", "tunable_scaling=3: out of range (allowed: 0 to 2)"},
		{"nr_migrate=-1", "", "nr_migrate=-1: not a decimal integer (allowed: 0 to 4294967295)"},
		{"nr_migrate=4294967296", "", "out of range (allowed: 0 to 4294967295)"},
		{"migration_cost_ns=99999999999999999999999", "", "out of range (allowed: 0 to 4294967295)"},
		{"sched_util_clamp_max=1025", "", "out of range (allowed: 0 to 1024)"},
		{"sched_schedstats=2", "", "out of range (allowed: 0 to 1)"},
	} {
		s, err := ParseSched(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSched(%q): error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || s.String() != tc.want {
			t.Errorf("ParseSched(%q) = %q, %v; want %q", tc.in, s.String(), err, tc.want)
		}
	}
}

func TestParseKernel(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		extra []string
		want  string // the canonical spec
		err   string
	}{
		{"", nil, "v6.6-eevdf", ""},
		{"v6.6-eevdf,+TG_LOAD_RATELIMIT", nil, "v6.6-eevdf,+TG_LOAD_RATELIMIT", ""},
		{"v6.6-eevdf;sched:base_slice_ns=2800000", nil, "v6.6-eevdf;sched:base_slice_ns=2800000", ""},
		{"v6.7-eevdf; sched:nr_migrate=8;sched:base_slice_ns=1000000", nil, "v6.7-eevdf;sched:base_slice_ns=1000000,nr_migrate=8", ""},
		{"v6.6-eevdf", []string{"base_slice_ns=2800000"}, "v6.6-eevdf;sched:base_slice_ns=2800000", ""},
		// the set's own part wins over the common -sched lists
		{"v6.6-eevdf;sched:nr_migrate=4", []string{"nr_migrate=8,migration_cost_ns=0"}, "v6.6-eevdf;sched:migration_cost_ns=0,nr_migrate=4", ""},
		{"v5.15-cfs;sched:latency_ns=12000000,wakeup_granularity_ns=0", nil, "v5.15-cfs;sched:latency_ns=12000000,wakeup_granularity_ns=0", ""},
		{"v6.6-eevdf,-EEVDF;sched:min_granularity_ns=1000000", nil, "v6.6-eevdf,-EEVDF;sched:min_granularity_ns=1000000", ""},
		{"v6.6-eevdf;sched:latency_ns=12000000", nil, "", "latency_ns is a CFS kernel's knob, and this feature set's kernel is EEVDF (its knobs: base_slice_ns, tunable_scaling,"},
		{"v5.15-cfs;sched:base_slice_ns=2800000", nil, "", "base_slice_ns is an EEVDF kernel's knob, and this feature set's kernel is CFS (its knobs: latency_ns,"},
		{"v6.6-eevdf;base_slice_ns=2800000", nil, "", `"base_slice_ns=2800000" after ';' is not sched:NAME=VALUE`},
		{"v6.6-eevdf;", nil, "", `"" after ';' is not sched:NAME=VALUE`},
		{"v6.6-eevdf;sched:bogus=1", nil, "", `unknown tunable "bogus"`},
		{"v9.9;sched:base_slice_ns=2800000", nil, "", `unknown profile "v9.9"`},
		{"v6.6-eevdf;sched:sched_util_clamp_min=800,sched_util_clamp_max=700", nil, "", "sched_util_clamp_min=800 is above sched_util_clamp_max=700"},
	} {
		_, _, got, err := ParseKernel(tc.spec, tc.extra...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseKernel(%q, %q): error %v, want one containing %q", tc.spec, tc.extra, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseKernel(%q, %q) = %q, %v; want %q", tc.spec, tc.extra, got, err, tc.want)
		}
	}
}

// FuzzParseKernel: any spec either fails with a FeatureError or
// SchedError, or gives a canonical spec that parses to the same kernel
// and prints itself again.
func FuzzParseKernel(f *testing.F) {
	for _, s := range []string{"", "v6.6-eevdf", "v6.7-eevdf;sched:base_slice_ns=2800000", "v5.15-cfs,+PLACE_MIGRATE;sched:latency_ns=100000;sched:nr_migrate=0",
		"v6.6-eevdf;sched:kernel.sched_util_clamp_max=512,sched_schedstats=0", "v6.6-eevdf;sched:tunable_scaling=2,,", ";sched:=", "v6.6-eevdf;sched:nr_migrate=1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		feat, set, canon, err := ParseKernel(spec)
		if err != nil {
			var fe *FeatureError
			var se *SchedError
			if !asError(err, &fe) && !asError(err, &se) {
				t.Fatalf("ParseKernel(%q): error of type %T: %v", spec, err, err)
			}
			return
		}
		feat2, set2, canon2, err := ParseKernel(canon)
		if err != nil || feat2 != feat || set2 != set || canon2 != canon {
			t.Fatalf("ParseKernel(%q) = %q; its reparse gives %q, %v (features equal %v, settings equal %v)", spec, canon, canon2, err, feat2 == feat, set2 == set)
		}
	})
}

func asError[T error](err error, target *T) bool {
	e, ok := err.(T)
	if ok {
		*target = e
	}
	return ok
}

// TestBaseSliceReachesPick: two hogs share a CPU; under EEVDF each runs
// until its deadline, one base slice away (update_deadline() at the tick,
// RUN_TO_PARITY keeping it until then), so on a HZ=1000 machine the
// default 3 ms slice switches every 3-4 ticks (the first tick after the
// slice ran out) and a 1 ms one every 1-2.
func TestBaseSliceReachesPick(t *testing.T) {
	switches := func(sched string) int64 {
		s := newSimSched(t, "spr-2s", "v6.6-eevdf", sched)
		a := mustTask(t, s, TaskSpec{Comm: "a", CPU: 0, Prog: Hog()})
		b := mustTask(t, s, TaskSpec{Comm: "b", CPU: 0, Prog: Hog()})
		s.Run(60 * ms)
		return a.Stats.NrInvolSwitch + b.Stats.NrInvolSwitch
	}
	def, short := switches(""), switches("base_slice_ns=1000000")
	if def < 14 || def > 21 || short < 27 || short > 61 {
		t.Errorf("involuntary switches in 60 ms: %d with the default 3 ms slice, %d with 1 ms; want 14-21 and 27-61", def, short)
	}
}

// TestMigrationCostCapsAvgIdle: rq->avg_idle starts at, and is capped
// by, 2 * sysctl_sched_migration_cost (core.c: sched_init(),
// update_avg_idle() via ttwu_do_wakeup()).
func TestMigrationCostCapsAvgIdle(t *testing.T) {
	for _, tc := range []struct {
		sched string
		want  int64
	}{{"", 1_000_000}, {"migration_cost_ns=250000", 500_000}, {"migration_cost_ns=0", 0}} {
		s := newSimSched(t, "hikey-8", "v6.6-eevdf", tc.sched)
		if got := s.RQ(3).avgIdle; got != tc.want {
			t.Errorf("%q: avg_idle %d, want %d", tc.sched, got, tc.want)
		}
	}
}

// TestRatelimitInterval: under TG_LOAD_RATELIMIT a cfs_rq writes
// tg->load_avg at most once per tg_load_avg_ratelimit_ns; 0 never skips.
func TestRatelimitInterval(t *testing.T) {
	run := func(sched string) (writes, skips float64) {
		s := newSimSched(t, "hikey-8", "v6.7-eevdf", sched)
		g, err := s.NewGroup("docker", nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			crossPingPong(t, s, i, i+4, 20_000, g)
		}
		s.Run(20 * ms)
		c := s.Counters()
		return c["sched.TgLoadAvgWrites"], c["sched.TgRatelimitSkips"]
	}
	w1, s1 := run("")
	w4, s4 := run("tg_load_avg_ratelimit_ns=4000000")
	w0, s0 := run("tg_load_avg_ratelimit_ns=0")
	if !(w4 < w1 && w1 <= w0) || !(s4 > s1 && s0 == 0) {
		t.Errorf("tg->load_avg writes / ratelimit skips: 1 ms %v / %v, 4 ms %v / %v, 0 %v / %v; want fewer writes and more skips as the interval grows, no skips at 0",
			w1, s1, w4, s4, w0, s0)
	}
}

// TestSchedstatsOff: with kernel.sched_schedstats 0 the schedstat_inc()
// fields of /proc/schedstat read 0, sched_info's run_delay still counts,
// and /proc/<pid>/sched leaves out the schedstat block.
func TestSchedstatsOff(t *testing.T) {
	out := func(sched string) (string, string) {
		s := newSimSched(t, "hikey-8", "v6.6-eevdf", sched)
		mixedWorkload(t, s)
		s.Run(5 * ms)
		var a, b bytes.Buffer
		s.WriteSchedstat(&a)
		s.WriteTaskStats(&b)
		return a.String(), b.String()
	}
	onStat, onTask := out("")
	offStat, offTask := out("sched_schedstats=0")
	onF, offF := strings.Fields(lineOf(onStat, "cpu0 ")), strings.Fields(lineOf(offStat, "cpu0 "))
	if onF[3] == "0" || onF[8] == "0" {
		t.Fatalf("schedstats on: cpu0 line %v has no sched_count or run_delay", onF)
	}
	if strings.Join(offF[1:7], " ") != "0 0 0 0 0 0" || offF[8] != onF[8] {
		t.Errorf("schedstats off: cpu0 line %v, want six zeros then the same sched_info fields as %v", offF, onF)
	}
	for _, f := range strings.Fields(lineOf(offStat, "domain0 "))[2:] {
		if f != "0" {
			t.Errorf("schedstats off: domain0 line %q has a nonzero field", lineOf(offStat, "domain0 "))
			break
		}
	}
	if !strings.Contains(onTask, "\nwait_sum ") || strings.Contains(offTask, "\nwait_sum ") || strings.Contains(offTask, "\navg_atom ") ||
		!strings.Contains(offTask, "\nnr_switches ") {
		t.Errorf("schedstats off: /proc/<pid>/sched should drop wait_sum..avg_per_cpu and keep nr_switches:\n%.600s", offTask)
	}
}

func lineOf(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestUclampSysctl: a system default clamp other than 1024 turns
// sched_uclamp_used on (sysctl_sched_uclamp_handler()), so every enqueue
// pays uclamp_rq_inc(), and caps each task's clamps (uclamp_eff_get()).
func TestUclampSysctl(t *testing.T) {
	incNS := func(s *Sim) int64 {
		for _, p := range s.Profile(nil) {
			if p.Symbol == "uclamp_rq_inc" {
				return p.NS
			}
		}
		return 0
	}
	for _, tc := range []struct {
		sched    string
		used     bool
		free     [2]uint32 // a task without a request
		asked    [2]uint32 // one asking [600, 1024]
		chargeIn bool
	}{
		{"", false, [2]uint32{0, 1024}, [2]uint32{600, 1024}, false},
		{"sched_util_clamp_max=1024", false, [2]uint32{0, 1024}, [2]uint32{600, 1024}, false},
		{"sched_util_clamp_min=512,sched_util_clamp_max=512", true, [2]uint32{0, 512}, [2]uint32{512, 512}, true},
		{"sched_util_clamp_min=300", true, [2]uint32{0, 1024}, [2]uint32{300, 1024}, true},
		{"sched_util_clamp_min=1024,sched_util_clamp_max=1024", false, [2]uint32{0, 1024}, [2]uint32{600, 1024}, false},
	} {
		s := newSimSched(t, "hikey-8", "v6.6-eevdf", tc.sched)
		free := mustTask(t, s, TaskSpec{Comm: "free", CPU: 0, Prog: sleeper(50_000, 100_000)})
		var asked *Task
		if !tc.used {
			// a request would turn the key on by itself
			asked = &Task{sim: s, hasClamp: true, uclampReq: [2]uint32{600, 1024}}
		} else {
			asked = mustTask(t, s, TaskSpec{Comm: "asked", CPU: 1, Prog: sleeper(50_000, 100_000), Clamp: &[2]uint32{600, 1024}})
		}
		s.Run(2 * ms)
		lo, hi := free.uclampEffective()
		alo, ahi := asked.uclampEffective()
		if s.uclampUsed != tc.used || [2]uint32{lo, hi} != tc.free || [2]uint32{alo, ahi} != tc.asked || (incNS(s) > 0) != tc.chargeIn {
			t.Errorf("%q: uclamp used %v, clamps %d-%d and %d-%d, uclamp_rq_inc %d ns; want %v, %v and %v, charged %v",
				tc.sched, s.uclampUsed, lo, hi, alo, ahi, incNS(s), tc.used, tc.free, tc.asked, tc.chargeIn)
		}
	}
}
