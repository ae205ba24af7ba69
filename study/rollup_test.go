package study

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
)

func TestPairWithin(t *testing.T) {
	for _, c := range []struct {
		p    Pair
		want bool
	}{
		{Pair{Emulated: 150, Lo: 100, Hi: 100}, true},
		{Pair{Emulated: 151, Lo: 100, Hi: 100}, false},
		{Pair{Emulated: 66.7, Lo: 100, Hi: 100}, true},
		{Pair{Emulated: 66.6, Lo: 100, Hi: 100}, false},
		{Pair{Emulated: -100, Lo: 100, Hi: 100}, false},
		{Pair{Emulated: 0, Lo: 100, Hi: 100}, false},
		{Pair{Emulated: 1, Lo: 0, Hi: 0}, false},
		// "costs ≈2-3%": -3..-2, so -1.34 .. -4.5 are within.
		{Pair{Emulated: -1.4, Lo: -3, Hi: -2}, true},
		{Pair{Emulated: -4.5, Lo: -3, Hi: -2}, true},
		{Pair{Emulated: -0.3, Lo: -3, Hi: -2}, false},
		{Pair{Emulated: 2.5, Lo: -3, Hi: -2}, false},
		{Pair{Emulated: 220.5, Lo: 189, Hi: 189}, true},
	} {
		if got := c.p.Within(1.5); got != c.want {
			t.Errorf("%+v within x1.5 = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestPubParse(t *testing.T) {
	for _, c := range []struct {
		s  string
		v  float64
		ok bool
	}{{"≈25%", 25, true}, {"13.75%", 13.75, true}, {"≈4.2 M", 4.2, true}, {"8.48%, tg's home node (per-node RFC)", 8.48, true},
		{"≈0.67 (2.8 M / 4.2 M)", 0.67, true}, {"not given", 0, false}, {"", 0, false}} {
		if v, ok := pubValue(c.s); v != c.v || ok != c.ok {
			t.Errorf("pubValue(%q) = %v, %v, want %v, %v", c.s, v, ok, c.v, c.ok)
		}
	}
	if lo, hi, ok := pubChangeRange("costs ≈2-3%"); lo != -3 || hi != -2 || !ok {
		t.Errorf("costs ≈2-3%% = %v..%v %v, want -3..-2", lo, hi, ok)
	}
	if lo, hi, ok := pubChangeRange("gains 5–7%"); lo != 5 || hi != 7 || !ok {
		t.Errorf("gains 5–7%% = %v..%v %v, want 5..7", lo, hi, ok)
	}
}

// lkp-base with the rollup runs every calibration study the runner has
// not run, prints their pairs and ends with the count, which covers every
// pair of every calibration study (host-pipe's only when perf runs); a
// calibration study run before is reused, not run again.
func TestRollup(t *testing.T) {
	f := &fakeExec{}
	var out bytes.Buffer
	r := &Runner{Out: &out, Quick: true, Seed: 1, Steady: true, Rollup: true, Perf: "/nonexistent/perf", exec: f.exec}
	udprr, _ := Lookup("tgload-udprr")
	if _, err := r.Reproduce(udprr); err != nil {
		t.Fatal(err)
	}
	before := len(f.order)
	lkp, _ := Lookup("lkp-base")
	if _, err := r.Reproduce(lkp); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "tgload-udprr: netperf UDP_RR"); n != 1 {
		t.Errorf("tgload-udprr's table printed %d times, want once", n)
	}
	for k, n := range f.calls {
		if n != 1 {
			t.Errorf("%s executed %d times", k, n)
		}
	}
	if len(f.order) == before {
		t.Error("the rollup ran nothing")
	}
	want := 0
	for _, name := range []string{"tgload-udprr", "tgload-hackbench", "tgload-profile", "uclamp-pipe", "host-pipe", "lkp-base"} {
		want += len(r.sums[name].Pairs)
		if name != "host-pipe" && len(r.sums[name].Pairs) == 0 {
			t.Errorf("%s: no pairs", name)
		}
	}
	// lkp-base's rows' published metrics: 8 + 4 + 3, and the v6.11+
	// rows' 5 + 3 + 4 + 4 (v6.11-eevdf, v6.12-eevdf).
	if n := len(r.sums["lkp-base"].Pairs); n != 31 {
		t.Errorf("lkp-base: %d pairs, want 31", n)
	}
	if strings.Contains(text, "%!") {
		t.Error("a bad format verb in the output")
	}
	for _, s := range []string{"hb-spr-process-socket", "hb-icl-threads-socket", "hb-icl-process-pipe", "update_cfs_group (self)"} {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q", s)
		}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := lines[len(lines)-1]
	var n, m int
	if _, err := fmt.Sscanf(last, "calibration rows within x1.5: %d/%d", &n, &m); err != nil || m != want || n > m {
		t.Errorf("last line %q, want the count of %d pairs", last, want)
	}
}

// A row the publication reports as within noise (Noise) runs without
// -all, and its published figures are pairs; the change between its
// settings is not, where a row with a published change has one.
func TestNoiseRowsPairs(t *testing.T) {
	r := &Runner{Out: io.Discard, Quick: true, Seed: 1, exec: (&fakeExec{}).exec}
	hb, _ := Lookup("tgload-hackbench")
	sum, err := r.Reproduce(hb)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range sum.Pairs {
		got[p.Row] = append(got[p.Row], p.Metric)
	}
	for row, want := range map[string][]string{
		"g8":  {"hackbench.throughput [base]", "hackbench.throughput [+TG_LOAD_RATELIMIT]", "hackbench.throughput change [+TG_LOAD_RATELIMIT]"},
		"g16": {"hackbench.throughput [base]", "hackbench.throughput [+TG_LOAD_RATELIMIT]", "hackbench.throughput change [+TG_LOAD_RATELIMIT]"},
		"g1":  {"hackbench.throughput [base]", "hackbench.throughput [+TG_LOAD_RATELIMIT]"},
		"g4":  {"hackbench.throughput [base]", "hackbench.throughput [+TG_LOAD_RATELIMIT]"},
	} {
		if !slices.Equal(got[row], want) {
			t.Errorf("%s: pairs %q, want %q", row, got[row], want)
		}
	}
}

// TestRollupFitsHostPipe: at the default scale the rollup fits the host
// preset before host-pipe (as -fit), and a fit the probes refuse leaves
// host-pipe uncalibrated, saying why, instead of failing the rollup; at
// the quick scale (TestRollup's) it does not fit, and an explicit -fit
// still fails on a refusal.
func TestRollupFitsHostPipe(t *testing.T) {
	calls := 0
	defer func(c func(*hwmodel.Machine, contention.CalibrateOptions) (*contention.CalibReport, error)) {
		calibrate = c
	}(calibrate)
	calibrate = func(m *hwmodel.Machine, _ contention.CalibrateOptions) (*contention.CalibReport, error) {
		calls++
		return &contention.CalibReport{After: m, SettleLoad: -1, OtherLoad: -1}, &contention.NoisyError{What: []string{"the pipe round trip on 2 CPUs (IQR/median 0.40)"}, Limit: 0.25, OtherLoad: 0.3}
	}
	var out bytes.Buffer
	r := &Runner{Out: &out, Seed: 1, Rollup: true, Perf: "/nonexistent/perf", exec: (&fakeExec{}).exec}
	lkp, _ := Lookup("lkp-base")
	if _, err := r.Reproduce(lkp); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || !strings.Contains(out.String(), "uncalibrated: the fit was refused") || r.Fit {
		t.Errorf("calibrate called %d times (want 1), fit left %v; output:\n%s", calls, r.Fit, out.String())
	}
	q := &Runner{Out: io.Discard, Quick: true, Seed: 1, Rollup: true, Perf: "/nonexistent/perf", exec: (&fakeExec{}).exec}
	if _, err := q.Reproduce(lkp); err != nil || calls != 1 {
		t.Errorf("quick rollup: err %v, calibrate called %d times in all (want still 1)", err, calls)
	}
	hp, _ := Lookup("host-pipe")
	f := &Runner{Out: io.Discard, Seed: 1, Fit: true, Perf: "/nonexistent/perf", exec: (&fakeExec{}).exec}
	if _, err := f.Reproduce(hp); err == nil || !strings.Contains(err.Error(), "-fit") {
		t.Errorf("reproduce -fit host-pipe on a refused fit: err %v, want the -fit error", err)
	}
}
