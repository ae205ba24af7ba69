package contention

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
)

// Fake probe samples: what a quiet host, one disturbed batch and a host
// busy for half the run give.
var (
	quietPipe  = []float64{15.1, 15.3, 15.2, 15.0, 15.4, 15.2, 15.3}
	onePreempt = []float64{15.1, 15.3, 15.2, 15.0, 15.4, 15.2, 153.0}
	halfBusy   = []float64{15.1, 48.0, 15.2, 97.0, 15.4, 71.0, 130.0}
)

func TestRobustOf(t *testing.T) {
	for _, tc := range []struct {
		name                string
		vals                []float64
		n                   int
		median, q1, q3, spr float64
	}{
		{"empty", nil, 0, 0, 0, 0, 0},
		{"one", []float64{7}, 1, 7, 7, 7, 0},
		{"quiet", quietPipe, 7, 15.2, 15.15, 15.3, 0.15 / 15.2},
		// One preempted batch of seven moves neither the median nor
		// the quartiles: the spread stays that of the quiet batches.
		{"one outlier", onePreempt, 7, 15.2, 15.15, 15.35, 0.2 / 15.2},
		{"half busy", halfBusy, 7, 48.0, 15.3, 84.0, (84.0 - 15.3) / 48.0},
		{"unsorted pair", []float64{3, 1}, 2, 2, 1.5, 2.5, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.vals...)
			r := RobustOf(tc.vals)
			for i := range in {
				if in[i] != tc.vals[i] {
					t.Fatalf("RobustOf modified its input: %v, was %v", tc.vals, in)
				}
			}
			near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
			if r.N != tc.n || !near(r.Median, tc.median) || !near(r.Q1, tc.q1) || !near(r.Q3, tc.q3) || !near(r.Spread, tc.spr) {
				t.Errorf("RobustOf(%v) = %+v, want n=%d median %g q1 %g q3 %g spread %g", tc.vals, r, tc.n, tc.median, tc.q1, tc.q3, tc.spr)
			}
		})
	}
}

func TestCheckSpread(t *testing.T) {
	names := []string{"pipe round trip, 2 CPUs", "pipe round trip, 1 CPU"}
	for _, tc := range []struct {
		name      string
		samples   [][]float64
		limit     float64
		otherLoad float64
		refuse    []string // names the error must give; nil: no error
		absent    []string // names it must not give
	}{
		{"quiet", [][]float64{quietPipe, quietPipe}, DefaultMaxSpread, 0.01, nil, nil},
		{"one outlier fits", [][]float64{onePreempt, quietPipe}, DefaultMaxSpread, 0.02, nil, nil},
		{"half busy refused", [][]float64{halfBusy, quietPipe}, DefaultMaxSpread, 0.45,
			[]string{"pipe round trip, 2 CPUs spread 1.43", "limit is IQR/median 0.25", "used 45% of the CPUs", "-max-spread"},
			[]string{"1 CPU spread"}},
		{"both refused, load unknown", [][]float64{halfBusy, halfBusy}, DefaultMaxSpread, -1,
			[]string{"2 CPUs spread", "1 CPU spread"}, []string{"of the CPUs"}},
		{"a wider limit fits", [][]float64{halfBusy, quietPipe}, 2, 0.45, nil, nil},
		{"negative limit never refuses", [][]float64{halfBusy, halfBusy}, -1, 0.9, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := []Robust{RobustOf(tc.samples[0]), RobustOf(tc.samples[1])}
			err := CheckSpread(names, rs, tc.limit, tc.otherLoad)
			if tc.refuse == nil {
				if err != nil {
					t.Fatalf("CheckSpread: %v, want nil", err)
				}
				return
			}
			var ne *NoisyError
			if !errors.As(err, &ne) {
				t.Fatalf("CheckSpread = %v, want a *NoisyError", err)
			}
			for _, s := range tc.refuse {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q says %q", err, s)
				}
			}
		})
	}
}

func TestOtherLoad(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(sec float64, busy int64, cpus int, own float64) LoadSample {
		return LoadSample{Wall: t0.Add(time.Duration(sec * float64(time.Second))), BusyTicks: busy, CPUs: cpus, OwnSec: own}
	}
	for _, tc := range []struct {
		name string
		a, b LoadSample
		want float64
	}{
		// 2 CPUs for 1 s: 200 ticks in all.
		{"idle but us", at(0, 1000, 2, 5), at(1, 1100, 2, 6), 0},
		{"others half", at(0, 1000, 2, 5), at(1, 1200, 2, 6), 0.5},
		{"others all", at(0, 1000, 2, 5), at(1, 1200, 2, 5), 1},
		// Tick rounding can make our own time exceed the busy time.
		{"clamped at 0", at(0, 1000, 2, 5), at(1, 1050, 2, 6), 0},
		{"no time passed", at(1, 1000, 2, 5), at(1, 1200, 2, 6), -1},
		{"no CPUs", at(0, 1000, 0, 5), at(1, 1200, 0, 6), -1},
	} {
		if got := OtherLoad(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: OtherLoad = %v, want %v", tc.name, got, tc.want)
		}
	}
	var m *LoadMeter
	if got := m.Other(); got != -1 {
		t.Errorf("nil LoadMeter: Other = %v, want -1", got)
	}
}

func TestParseProcStat(t *testing.T) {
	const good = "cpu  100 5 30 900 7 1 2 3 40 0\ncpu0 50 0 15 450 3 0 1 1 20 0\ncpu1 50 5 15 450 4 1 1 2 20 0\nintr 1 2\nctxt 99\n"
	s, err := parseProcStat([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	// user+nice+system+irq+softirq+steal; guest is inside user.
	if s.BusyTicks != 100+5+30+1+2+3 || s.CPUs != 2 {
		t.Errorf("parseProcStat: busy %d cpus %d, want 141 and 2", s.BusyTicks, s.CPUs)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"short", "cpu 1 2 3\n", "cpu line has 3 fields"},
		{"garbage", "cpu 1 2 x 4 5 6 7 8\n", `cpu field 3: "x" is not a number`},
		{"none", "intr 1\n", "no cpu line"},
	} {
		if _, err := parseProcStat([]byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSpreadChecked: only the probes the calibration applies can refuse
// a fit; the first-touch fault only while no copy-on-write fault stands
// in for it.
func TestSpreadChecked(t *testing.T) {
	set := func(*hwmodel.Calib, float64) {}
	ping := &probeSet{probe: "ping", set: set}
	first := &probeSet{probe: "first touch", set: set}
	check := &probeSet{probe: "shootdown"}
	cow := &probeSet{probe: "cow", set: set, samples: []float64{15}}
	noCoW := &probeSet{probe: "cow", set: set}
	for _, tc := range []struct {
		p, cow *probeSet
		want   bool
	}{
		{ping, cow, true}, {cow, cow, true}, {first, cow, false}, {first, noCoW, true}, {check, cow, false},
	} {
		if got := spreadChecked(tc.p, first, tc.cow); got != tc.want {
			t.Errorf("%s (cow measured %v): %v, want %v", tc.p.probe, len(tc.cow.samples) > 0, got, tc.want)
		}
	}
}
