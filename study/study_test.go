package study

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/hwmodel"
)

// TestEleven: every study of experiments.md is here, in its set, and
// only the calibration set carries published figures.
func TestEleven(t *testing.T) {
	want := []string{"tgload-udprr", "tgload-hackbench", "tgload-profile", "uclamp-pipe", "host-pipe",
		"tgload-postgres", "tgload-icl", "l2-ttwu-epyc", "run-to-parity", "lb-spread-llc", "migrate-starvation"}
	if got := Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("studies %v, want %v", got, want)
	}
	if doc, err := os.ReadFile("../../shared/experiments.md"); err == nil {
		for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
			if _, err := Lookup(m[1]); err != nil {
				t.Errorf("experiments.md lists %s: %v", m[1], err)
			}
		}
	}
	for _, st := range All() {
		switch st.Set {
		case "calibration":
			if st.Published == "" {
				t.Errorf("%s: calibration study without its published figure", st.Name)
			}
		case "validation":
			if st.Published != "" || (st.Headline != nil && st.Headline.Pub != "") {
				t.Errorf("%s: a validation study prints no published figure", st.Name)
			}
			for _, r := range st.Rows {
				if len(r.Pub) > 0 || r.PubChange != "" {
					t.Errorf("%s/%s: a validation study prints no published figure", st.Name, r.Label)
				}
			}
		default:
			t.Errorf("%s: set %q", st.Name, st.Set)
		}
	}
}

// TestCommandLines: every row's command line is valid for its workload
// on its machine, at both scales, and its length is in the arguments.
func TestCommandLines(t *testing.T) {
	for _, st := range All() {
		if st.Custom != nil {
			continue
		}
		if st.Headline != nil && st.row(st.Headline.Row) == nil {
			t.Errorf("%s: headline row %q missing", st.Name, st.Headline.Row)
		}
		for _, n := range st.Notes {
			if st.row(n.Row) == nil || n.Setting >= len(st.Settings) {
				t.Errorf("%s: note on %s/%d has no cell", st.Name, n.Row, n.Setting)
			}
		}
		for i := range st.Rows {
			row := &st.Rows[i]
			if !strings.Contains(strings.Join(row.Args, " "), "{L}") {
				t.Errorf("%s/%s: the length is not in the command line", st.Name, row.Label)
			}
			if p := row.Pub; len(p) > 0 && len(p) != len(st.Settings) {
				t.Errorf("%s/%s: %d published values for %d settings", st.Name, row.Label, len(p), len(st.Settings))
			}
			for _, quick := range []bool{false, true} {
				r := &Runner{Quick: quick}
				for _, s := range st.Settings {
					for _, topo := range []string{"", st.RefTopo} {
						run := st.runOf(row, s, r.length(row.Length, false), topo)
						checkRun(t, run)
					}
				}
			}
		}
	}
}

func checkRun(t *testing.T, run Run) {
	t.Helper()
	m, err := hwmodel.Load(run.Topo, hwmodel.LoadOptions{})
	if err != nil {
		t.Fatalf("%s: %v", run.CommandLine(), err)
	}
	if _, err := bench.Build(run.Workload, run.Args, m); err != nil {
		t.Errorf("%s: %v", run.CommandLine(), err)
	}
}

// TestRunnerTable runs a small study end to end: the table, the notes,
// the steady-state line, and the cache (the half-length runs are new,
// the rest are not run twice).
func TestRunnerTable(t *testing.T) {
	st := &Study{
		Name: "tiny", Set: "calibration", Doc: "schbench on hikey-8", Published: "made up for the test",
		Settings: []Setting{{"base", "v6.6-eevdf"}, {"cfs", "v6.5-cfs"}},
		Rows: []Row{{Label: "m1", Topo: "hikey-8", Workload: "schbench", Args: []string{"-m", "1", "-t", "2", "-r", "{L}"},
			Length: Length{Default: 2, Quick: 1, Int: true, Unit: "s"}, Pub: []float64{10, 0}}},
		Metrics:  []Metric{{Name: "p99", Key: "wakeup_p99_usec"}},
		Notes:    []Note{{Row: "m1", Metric: Metric{Name: "wakeups/s", Key: "rate.wakeups_per_sec"}, Pub: "≈1"}},
		Headline: &Headline{Row: "m1", Setting: 1},
	}
	var out bytes.Buffer
	runs := 0
	r := &Runner{Seed: 1, Seeds: 2, Quick: true, Steady: true, Out: &out,
		OnRun: func(_ *Study, _, _ string, _ *Outcome, cached bool) {
			if !cached {
				runs++
			}
		}}
	sum, err := r.Reproduce(st)
	if err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"tiny: schbench on hikey-8", "-r 1", "pub base", "wakeups/s", "(≈1)", "steady state:", "at half length"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// 2 settings x 2 seeds, and the half-length pair (-r 1 halves to
	// -r 1: the same runs, cached).
	if runs != 4 {
		t.Errorf("%d runs, want 4", runs)
	}
	if sum.Steady == "" || sum.Headline == "" {
		t.Errorf("summary %+v", sum)
	}
	if _, err := r.Reproduce(st); err != nil || runs != 4 {
		t.Errorf("a second reproduce ran %d new runs (err %v), want none", runs-4, err)
	}
	t.Log("\n" + text)
}

func TestOutcomeValue(t *testing.T) {
	o := &Outcome{Run: Run{Workload: "netperf"}, Metrics: bench.Metrics{Values: map[string]float64{"throughput": 3}},
		LKP: map[string]float64{"netperf.Throughput_tps": 2}, Counters: map[string]float64{"rate.wakeups_per_sec": 1},
		Shares: map[string]float64{"update_cfs_group": 25}}
	for name, want := range map[string]float64{"throughput": 3, "netperf.throughput": 3, "netperf.Throughput_tps": 2,
		"rate.wakeups_per_sec": 1, "share.update_cfs_group": 25, "share.nothing": 0} {
		if v, ok := o.Value(name); !ok || v != want {
			t.Errorf("Value(%q) = %v, %v; want %v", name, v, ok, want)
		}
	}
	if _, ok := o.Value("nope"); ok {
		t.Error("Value(nope) found")
	}
}

func TestLength(t *testing.T) {
	l := Length{Default: 600, Quick: 60, Int: true}
	r := &Runner{}
	if got := r.length(l, true); got != "300" {
		t.Errorf("half of 600 loops: %s", got)
	}
	r.Quick, r.L = true, 0.5
	if got := r.length(l, false); got != "60" {
		t.Errorf("-l applies to loops: %s", got)
	}
	if got := r.length(Length{Default: 0.02, Quick: 0.002, Seconds: true}, false); got != "0.5" {
		t.Errorf("-l 0.5 on seconds: %s", got)
	}
}
