package study

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/hwmodel"
)

// TestEleven: every study of experiments.md is here, in its set, and
// only the calibration set carries published figures.
func TestEleven(t *testing.T) {
	want := []string{"tgload-udprr", "tgload-hackbench", "tgload-profile", "uclamp-pipe", "host-pipe", "lkp-base",
		"tgload-postgres", "tgload-icl", "tgload-stressng", "l2-ttwu-epyc", "run-to-parity", "lb-spread-llc", "migrate-starvation",
		"sis-util-spr1s", "ttwu-idle-clxap", "preempt-short-spr", "preempt-short-icl", "base-slice-icl"}
	if got := Names(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("studies %v, want %v", got, want)
	}
	if doc, err := os.ReadFile("../../shared/experiments.md"); err == nil {
		for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
			_, err := Lookup(m[1])
			if err != nil && isRow(m[1]) {
				err = nil
			}
			switch issue, ok := pendingStudies[m[1]]; {
			case ok && err == nil:
				t.Errorf("experiments.md lists %s, which exists now: take it off pendingStudies", m[1])
			case ok:
				t.Logf("experiments.md lists %s: not built yet (%s)", m[1], issue)
			case err != nil:
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
				for _, m := range st.rowMetrics(&r) {
					if m.Pub != 0 {
						t.Errorf("%s/%s: a validation study prints no published figure (%s)", st.Name, r.Label, m.Name)
					}
				}
			}
		default:
			t.Errorf("%s: set %q", st.Name, st.Set)
		}
	}
}

// pendingStudies are the rows experiments.md gained in the current round
// that no study runs yet, with the issue that builds them: TestEleven
// names them instead of failing, and fails once one exists (take it off).
var pendingStudies = map[string]string{}

// isRow: name is a row of a study (experiments.md's lkp-base table lists
// its rows as a table of their own).
func isRow(name string) bool {
	for _, st := range All() {
		if st.row(name) != nil {
			return true
		}
	}
	return false
}

// TestCommandLines: every row's command line is valid for its workload
// on its machine, at both scales, and its length is in the arguments or,
// for a row that runs to its window's end (Length.Until), in its
// -window-to after its -window-from, at both scales and at half length.
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
			if l := row.Length; l.Until {
				for _, quick := range []bool{false, true} {
					r := &Runner{Quick: quick}
					for _, half := range []bool{false, true} {
						run := st.runOf(row, st.Settings[0], r.length(l, half), r.window(l), "")
						if !(run.WindowTo > run.WindowFrom && run.WindowFrom > 0) || !strings.Contains(run.CommandLine(), " -window-to ") {
							t.Errorf("%s/%s (quick %v, half %v): window %v-%v s, command line %s", st.Name, row.Label, quick, half, run.WindowFrom, run.WindowTo, run.CommandLine())
						}
					}
				}
			} else if !strings.Contains(strings.Join(row.Args, " "), "{L}") {
				t.Errorf("%s/%s: the length is not in the command line", st.Name, row.Label)
			}
			if p := row.Pub; len(p) > 0 && len(p) != len(st.Settings) {
				t.Errorf("%s/%s: %d published values for %d settings", st.Name, row.Label, len(p), len(st.Settings))
			}
			for _, quick := range []bool{false, true} {
				r := &Runner{Quick: quick}
				for _, s := range st.Settings {
					for _, topo := range []string{"", st.RefTopo} {
						run := st.runOf(row, s, r.length(row.Length, false), r.window(row.Length), topo)
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
	// A window's start stays where it is unless -l ends the run before
	// it; then it keeps its fraction of the run.
	r.Quick = false
	until := Length{Default: 3, Quick: 0.005, Seconds: true, Until: true, Window: 2.5, QuickWindow: 0.002}
	for _, tc := range []struct{ l, want float64 }{{0, 2.5}, {4, 2.5}, {2.5, 2.5 * 2.5 / 3}, {0.5, 0.5 * 2.5 / 3}} {
		r.L = tc.l
		if got := r.window(until); got != tc.want {
			t.Errorf("-l %g: window from %g, want %g", tc.l, got, tc.want)
		}
	}
}

// fakeExec stands in for Execute: an Outcome whose every value is a hash
// of the run and seed (so each run differs, and the same run agrees with
// itself), after a delay that also comes from the hash, so that runs
// executed at once finish out of order. It counts the runs by key.
type fakeExec struct {
	mu    sync.Mutex
	calls map[string]int
	order []string
}

func (f *fakeExec) exec(run Run, seed uint64, _ Engine) (*Outcome, error) {
	key := run.key(seed)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[key]++
	f.order = append(f.order, key)
	f.mu.Unlock()
	h := fnv.New64a()
	h.Write([]byte(key))
	x := h.Sum64()
	time.Sleep(time.Duration(x%5) * 100 * time.Microsecond)
	vals := map[string]float64{}
	o := &Outcome{Run: run, Seed: seed, Complete: true, Metrics: bench.Metrics{Values: vals},
		LKP: map[string]float64{}, Counters: map[string]float64{}, Shares: map[string]float64{}}
	// Every name a study's metrics read resolves to a value of the hash.
	for i, name := range []string{"throughput", "throughput_per_client", "total_sec", "tps", "transactions_per_sec", "time_sec", "p99", "p50", "p95", "max"} {
		vals[name] = float64(x%1000+1) * float64(i+1)
	}
	return o, nil
}

// nonCustom is every study that runs through grid.
func nonCustom() []*Study {
	var out []*Study
	for _, st := range All() {
		if st.Custom == nil {
			out = append(out, st)
		}
	}
	return out
}

// TestPlanIsGrid: plan lists exactly the runs grid asks for, in its
// order, at both scales, so that prefetch starts no run in vain and
// leaves none to run one at a time.
func TestPlanIsGrid(t *testing.T) {
	for _, st := range nonCustom() {
		for _, c := range []struct {
			quick, all bool
			seeds      int
		}{{false, false, 0}, {true, false, 0}, {true, true, 2}} {
			quick := c.quick
			f := &fakeExec{}
			r := &Runner{Out: io.Discard, Quick: quick, All: c.all, Seeds: c.seeds, Steady: true, Seed: 1, exec: f.exec}
			var want []string
			for _, p := range r.plan(st) {
				want = append(want, p.run.key(p.seed))
			}
			if _, err := r.Reproduce(st); err != nil {
				t.Fatalf("%s: %v", st.Name, err)
			}
			// grid asks do for a cached run again (the steady line may
			// repeat a full-length run); the executions are the plan
			// without its repeats.
			var dedup []string
			seen := map[string]bool{}
			for _, k := range want {
				if !seen[k] {
					seen[k] = true
					dedup = append(dedup, k)
				}
			}
			if len(f.order) == 0 {
				t.Errorf("%s (quick %v): no run executed", st.Name, quick)
			}
			if strings.Join(f.order, "\n") != strings.Join(dedup, "\n") {
				t.Errorf("%s (quick %v): grid ran\n  %s\nplan said\n  %s", st.Name, quick,
					strings.Join(f.order, "\n  "), strings.Join(dedup, "\n  "))
			}
		}
	}
}

// TestJobsSameOutput: with runs executed four at a time, every study
// prints the same bytes and reports its runs (OnRun) in the same order as
// one at a time, and no run executes twice.
func TestJobsSameOutput(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, st := range nonCustom() {
		var outs [2]string
		var runs [2][]string
		for i, jobs := range []int{1, 4} {
			f := &fakeExec{}
			var b bytes.Buffer
			r := &Runner{Out: &b, Steady: true, Seed: 1, Jobs: jobs, exec: f.exec}
			r.OnRun = func(st *Study, row, setting string, o *Outcome, cached bool) {
				runs[i] = append(runs[i], fmt.Sprintf("%s %s %v %s", row, setting, cached, o.Run.key(o.Seed)))
			}
			if _, err := r.Reproduce(st); err != nil {
				t.Fatalf("%s -j %d: %v", st.Name, jobs, err)
			}
			for k, n := range f.calls {
				if n != 1 {
					t.Errorf("%s -j %d: %s executed %d times", st.Name, jobs, k, n)
				}
			}
			outs[i] = b.String()
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: -j 4 printed\n%s\n-j 1\n%s", st.Name, outs[1], outs[0])
		}
		if strings.Join(runs[0], "\n") != strings.Join(runs[1], "\n") {
			t.Errorf("%s: -j 4 reported the runs\n%s\n-j 1\n%s", st.Name, strings.Join(runs[1], "\n"), strings.Join(runs[0], "\n"))
		}
	}
}

// TestJobsStopOnError: a failing run ends the study with its error, and
// the runs started beside it stop; nothing is left running.
func TestJobsStopOnError(t *testing.T) {
	defer goleak.VerifyNone(t)
	st, err := Lookup("tgload-udprr")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeExec{}
	boom := errors.New("boom")
	var first string // the study's first run fails
	var mu sync.Mutex
	started := 0 // guarded by mu
	r := &Runner{Out: io.Discard, Steady: true, Seed: 1, Jobs: 2, exec: func(run Run, seed uint64, eng Engine) (*Outcome, error) {
		mu.Lock()
		started++
		mu.Unlock()
		if run.key(seed) == first {
			return nil, boom
		}
		<-eng.Stop // the others run until they are told to stop
		o, _ := f.exec(run, seed, eng)
		o.Interrupted = true
		return o, nil
	}}
	p := r.plan(st)
	first = p[0].run.key(p[0].seed)
	if _, err := r.Reproduce(st); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the first run's", err)
	}
	// The failing run and what the other job was running, perhaps one
	// more taken before the stop: never all of them.
	mu.Lock()
	n := started
	mu.Unlock()
	if n < 1 || n > 3 {
		t.Errorf("%d of the %d runs started, want 1 to 3 (the rest never start)", n, len(p))
	}
}

// TestTgLineMetrics: a run in a cgroup finds its task group's
// tg->load_avg line, and the per-wakeup and line metrics of the tgload
// studies are the counters' and the line's own numbers (fair.c
// update_tg_load_avg() writes it, calc_group_shares() in update_cfs_group()
// reads it, v6.6); a run outside any cgroup has no such line.
func TestTgLineMetrics(t *testing.T) {
	run := Run{Topo: "hikey-8", Features: "v6.6-eevdf", Workload: "netperf",
		Args: []string{"-t", "UDP_RR", "-nr", "100%", "-l", "0.002", "-cgroup", "docker"}}
	o, err := Execute(run, 1, Engine{Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	l := o.TgLine
	if l == nil || l.Name != "tg(docker)->load_avg" {
		t.Fatalf("TgLine = %+v, want tg(docker)->load_avg", l)
	}
	wakeups := o.Counters["sched.TTWUCount"]
	if wakeups == 0 || l.Ops[hwmodel.Read] == 0 || l.Ops[hwmodel.RMW] == 0 {
		t.Fatalf("no wakeups (%v) or no reads and RMWs on the line (%v)", wakeups, l.Ops)
	}
	var xfers int64
	for _, n := range l.Transfers {
		xfers += n
	}
	sec := o.Counters["run.virtual_sec"]
	for _, c := range []struct {
		m    Metric
		want float64
	}{
		{migPerWakeup, o.Counters["sched.nr_migrations"] / wakeups},
		{tgReadsPerWakeup, o.Counters["sched.TgLoadAvgReads"] / wakeups},
		{tgWritesPerWake, o.Counters["sched.TgLoadAvgWrites"] / wakeups},
		{tgXferPerWakeup, float64(xfers) / wakeups},
		{tgBusy, 100 * l.BusyNS / (sec * 1e9)},
		{tgStallPerAccess, l.StallNS / float64(l.Accesses)},
	} {
		if got := c.m.Fn(o); got != c.want || got <= 0 {
			t.Errorf("%s = %v, want %v (> 0)", c.m.Name, got, c.want)
		}
	}
	// Every read and RMW the kernel model counted reached the line (the
	// weave counts the line's accesses by op; a read may hit in cache, but
	// it is still an access).
	// set_task_rq() reads the line too (RT_GROUP_SCHED: tg->rt_se and
	// tg->rt_rq share it).
	if r, rt := o.Counters["sched.TgLoadAvgReads"], o.Counters["sched.TgLineRTReads"]; float64(l.Ops[hwmodel.Read]) != r+rt || rt == 0 {
		t.Errorf("line reads %d, TgLoadAvgReads %v + TgLineRTReads %v (want > 0)", l.Ops[hwmodel.Read], r, rt)
	}
	if w := o.Counters["sched.TgLoadAvgWrites"]; float64(l.Ops[hwmodel.RMW]) != w {
		t.Errorf("line RMWs %d, TgLoadAvgWrites %v", l.Ops[hwmodel.RMW], w)
	}
	if busy := tgBusy.Fn(o); busy > 100 {
		t.Errorf("line busy %.1f%% of the run: over capacity", busy)
	}

	run.Args = run.Args[:len(run.Args)-2] // no -cgroup
	o, err = Execute(run, 1, Engine{Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	if o.TgLine != nil {
		t.Errorf("TgLine = %s without a cgroup", o.TgLine.Name)
	}
	for _, m := range []Metric{tgBusy, tgXferPerWakeup, tgStallPerAccess} {
		if v := m.Fn(o); v != 0 {
			t.Errorf("%s = %v without a cgroup, want 0", m.Name, v)
		}
	}
}

// TestInterruptedTable: a study stopped by a signal prints the table of
// the rows that finished before it (issue 40, item 11).
func TestInterruptedTable(t *testing.T) {
	st := &Study{
		Name: "tiny2", Set: "validation", Doc: "two rows",
		Settings: []Setting{{"base", "v6.6-eevdf"}, {"cfs", "v6.5-cfs"}},
		Rows: []Row{
			{Label: "first", Topo: "hikey-8", Workload: "pipe", Args: []string{"-l", "{L}"}, Length: Length{Default: 10, Quick: 10, Int: true, Unit: "loops"}},
			{Label: "second", Topo: "hikey-8", Workload: "pipe", Args: []string{"-l", "{L}", "-T"}, Length: Length{Default: 10, Quick: 10, Int: true, Unit: "loops"}},
		},
		Metrics: []Metric{{Name: "total", Key: "total_sec"}},
	}
	f := &fakeExec{}
	var out bytes.Buffer
	r := &Runner{Seed: 1, Quick: true, Out: &out, exec: func(run Run, seed uint64, eng Engine) (*Outcome, error) {
		o, err := f.exec(run, seed, eng)
		if slices.Contains(run.Args, "-T") {
			o.Interrupted = true
		}
		return o, err
	}}
	if _, err := r.Reproduce(st); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	text := out.String()
	for _, want := range []string{"first", "total", "interrupted: 1 of the 2 rows finished"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if regexp.MustCompile(`(?m)^\s*second\s+total`).MatchString(text) {
		t.Errorf("the unfinished row is in the table:\n%s", text)
	}
}

// TestRowWindow: a row whose Length has a Window is run with
// -window-from at the default scale and whole at -quick (QuickWindow 0);
// the length line says so, and a windowed run is a different run (key)
// from the same run measured whole.
func TestRowWindow(t *testing.T) {
	st := &Study{Name: "w", Settings: []Setting{{"base", "v6.6-eevdf"}},
		Rows: []Row{{Label: "r", Topo: "hikey-8", Workload: "hackbench", Args: []string{"-g", "1", "-l", "{L}"},
			Length: Length{Default: 200, Quick: 20, Int: true, Unit: "loops", Window: 0.002}}}}
	for _, quick := range []bool{false, true} {
		r := &Runner{Quick: quick}
		for _, p := range r.plan(st) {
			want := !quick
			if got := p.run.WindowFrom == 0.002; got != want {
				t.Errorf("quick %v: window %v, want 0.002: %v", quick, p.run.WindowFrom, want)
			}
			if got := strings.HasSuffix(p.run.CommandLine(), " -window-from 2ms"); got != want {
				t.Errorf("quick %v: %q ends with -window-from 2ms: %v, want %v", quick, p.run.CommandLine(), got, want)
			}
			whole := p.run
			whole.WindowFrom = 0
			if want && whole.key(1) == p.run.key(1) {
				t.Errorf("%s: the windowed run has the whole run's key", p.run.CommandLine())
			}
		}
	}
	var out strings.Builder
	r := &Runner{Out: &out, Seed: 1}
	if _, err := r.grid(st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "200 loops, measured from 2ms to the first exit (-window-from)") {
		t.Errorf("the length line does not name the window:\n%s", out.String())
	}
}
