package bench

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	gold "github.com/rqemu/rqemu/internal/golden"
)

// lkpFixtures are testdata/lkp/PROGRAM/NAME inputs that have a
// NAME.yaml: lkp-tests' spec/fixtures/stats at LKPCommit, and rqemu's own
// outputs with what lkp's parser at that commit printed for them
// (testdata/lkp/README).
func lkpFixtures(t *testing.T) (inputs []string) {
	t.Helper()
	yamls, err := filepath.Glob(filepath.Join("testdata", "lkp", "*", "*.yaml"))
	if err != nil || len(yamls) == 0 {
		t.Fatalf("no fixtures under testdata/lkp (%v)", err)
	}
	for _, y := range yamls {
		inputs = append(inputs, strings.TrimSuffix(y, ".yaml"))
	}
	return inputs
}

// lkpSource is $LKP_SRC opened for the tests, or a skip where it or
// ruby is absent (.ci/run provides both).
func lkpSource(t *testing.T) *LKPSource {
	t.Helper()
	dir := os.Getenv("LKP_SRC")
	if dir == "" {
		t.Skip("LKP_SRC not set (an lkp-tests checkout; .ci/run fetches one at LKPCommit)")
	}
	if _, err := exec.LookPath("ruby"); err != nil {
		t.Skip("ruby not installed")
	}
	src, err := OpenLKPSource(dir, "netperf", "hackbench", "schbench", "stress-ng", "pipe", "messaging", "sysbench")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// diffStats lists the keys whose values differ (exactly: both are the
// same float operations) or that only one side has.
func diffStats(got, want map[string]float64) []string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, "missing "+k)
		} else if g != w {
			d = append(d, k+": got "+strconv.FormatFloat(g, 'g', -1, 64)+", lkp "+strconv.FormatFloat(w, 'g', -1, 64))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			d = append(d, "extra "+k)
		}
	}
	sort.Strings(d)
	return d
}

// Each port reads lkp's own fixtures (and rqemu's outputs) into exactly
// the values lkp's parser at LKPCommit printed for them. With -update
// and LKP_SRC, the .yaml files are rewritten by lkp's parsers.
func TestLKPFixtures(t *testing.T) {
	var src *LKPSource
	if gold.Updating() {
		src = lkpSource(t)
	}
	programs := map[string]bool{}
	for _, in := range lkpFixtures(t) {
		prog := filepath.Base(filepath.Dir(in))
		programs[prog] = true
		input, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if src != nil {
			cmd := exec.Command("ruby", filepath.Join(src.Dir(), "programs", prog, "parse"))
			cmd.Env = append(os.Environ(), "LKP_SRC="+src.Dir())
			cmd.Stdin = strings.NewReader(string(input))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v", in, err)
			}
			if err := os.WriteFile(in+".yaml", out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(in + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		w := ParseLKPStatsText(string(want))
		if len(w) == 0 {
			t.Fatalf("%s.yaml: no stats", in)
		}
		if d := diffStats(LKPParse(prog, string(input)), w); len(d) > 0 {
			t.Errorf("%s: the port of programs/%s/parse differs from lkp's:\n  %s", in, prog, strings.Join(d, "\n  "))
		}
	}
	for _, w := range []string{"netperf", "hackbench", "schbench", "stress-ng", "pipe", "messaging", "sysbench"} {
		if !programs[LKPProgram(w)] {
			t.Errorf("no fixture for %s's parser programs/%s/parse", w, LKPProgram(w))
		}
	}
}

// lkpRuns are small runs of every workload lkp has a parser for.
var lkpRuns = []struct {
	name string
	args []string
}{
	{"hackbench", []string{"-g", "2", "-f", "4", "-l", "100"}},
	{"messaging", []string{"-g", "1", "-l", "50"}},
	{"pipe", []string{"-l", "500"}},
	{"schbench", []string{"-m", "1", "-t", "2", "-s", "10000", "-c", "20000", "-r", "2", "-i", "1"}},
	{"netperf", []string{"-t", "UDP_RR", "-nr", "2", "-l", "0.005"}},
	{"netperf", []string{"-t", "UDP_STREAM", "-nr", "2", "-l", "0.005"}},
	{"sysbench", []string{"--threads", "4", "--time", "0.01"}},
	{"stress-ng", []string{"--switch", "2", "--sem", "2", "-t", "0.005", "--metrics-brief"}},
}

// Every workload lkp has a parser for gets lkp's metrics from its
// output (no "lkp": null in NDJSON); hopper and rtapp have none.
func TestLKPStatsEveryWorkload(t *testing.T) {
	want := map[string]string{
		"hackbench": "hackbench.throughput_avg", "messaging": "perf-bench-sched-messaging.total_time_sec",
		"pipe": "perf-bench-sched-pipe.ops_per_sec", "schbench": "schbench.wakeup_end_latency_99%_us_max",
		"netperf": "netperf.ThroughputBoth_total_", "sysbench": "oltp.transactions/s", "stress-ng": "stress-ng.switch.ops_per_sec",
	}
	for _, r := range lkpRuns {
		_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, r.name, r.args...)
		st := LKPStats(r.name, out)
		found := false
		for k, v := range st {
			if strings.HasPrefix(k, want[r.name]) && v > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %v: no %s in lkp's stats %v\n%s", r.name, r.args, want[r.name], st, out)
		}
	}
	for _, w := range []string{"hopper", "rtapp"} {
		if LKPProgram(w) != "" || LKPStats(w, "Time: 1\n") != nil {
			t.Errorf("%s: lkp has no parser for it", w)
		}
	}
}

// With LKP_SRC (and ruby), lkp's own parsers and the ports agree on
// every fixture and on each workload's output, and LKPSource.Stats names
// the keys as LKPStats does.
func TestLKPSourceAgrees(t *testing.T) {
	src := lkpSource(t)
	for _, in := range lkpFixtures(t) {
		prog := filepath.Base(filepath.Dir(in))
		input, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		lkp, err := src.Parse(prog, string(input))
		if err != nil {
			t.Fatal(err)
		}
		if d := diffStats(LKPParse(prog, string(input)), lkp); len(d) > 0 {
			t.Errorf("%s: the port differs from %s/programs/%s/parse:\n  %s", in, src.Dir(), prog, strings.Join(d, "\n  "))
		}
	}
	for _, r := range lkpRuns {
		_, out := runW(t, "hikey-8", "v6.6-eevdf", 2, r.name, r.args...)
		lkp, err := src.Stats(r.name, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(lkp) == 0 {
			t.Errorf("%s %v: lkp's parser read nothing from\n%s", r.name, r.args, out)
		}
		if d := diffStats(LKPStats(r.name, out), lkp); len(d) > 0 {
			t.Errorf("%s %v: the port differs from lkp's parser:\n  %s\n%s", r.name, r.args, strings.Join(d, "\n  "), out)
		}
	}
	// Edge cases: a zero mean (stddev% NaN, left out), a parser failure.
	zero := "Wakeup Latencies percentiles (usec) runtime 1 (s) (1 total samples)\n\t  50.0th: 0          (1 samples)\n\t  min=0, max=0\n"
	lkp, err := src.Stats("schbench", zero)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffStats(LKPStats("schbench", zero), lkp); len(d) > 0 {
		t.Errorf("zero latencies: %v", d)
	}
	if _, err := src.Parse("schbench", zero); err == nil {
		t.Error("lkp's schbench parser without an Iteration line: no error (it raises IndexError)")
	}
}

// A wrong LKP_SRC is an error naming it and what it must be.
func TestOpenLKPSourceErrors(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.MkdirAll(filepath.Join(old, "stats"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "stats", "hackbench"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, workload string
		want          *regexp.Regexp
	}{
		{filepath.Join(dir, "none"), "netperf", regexp.MustCompile(`^LKP_SRC=.*/none: not a directory \(it must be an lkp-tests checkout`)},
		{dir, "netperf", regexp.MustCompile(`^LKP_SRC=.*: no programs/netperf/parse, lkp's parser of netperf \(LKP_SRC must be an lkp-tests checkout from 2023 on`)},
		{old, "hackbench", regexp.MustCompile(`this checkout has stats/hackbench, the layout before 2023: update it\)$`)},
		{dir, "pipe", regexp.MustCompile(`no programs/perf-bench-sched-pipe/parse, lkp's parser of pipe`)},
	} {
		_, err := OpenLKPSource(c.dir, c.workload)
		if err == nil || !c.want.MatchString(err.Error()) {
			t.Errorf("OpenLKPSource(%s, %s) = %v, want %v", c.dir, c.workload, err, c.want)
		}
	}
	// A workload lkp has no parser for needs none (nor ruby).
	if _, err := OpenLKPSource(dir, "hopper", "rtapp"); err != nil {
		t.Errorf("hopper: %v", err)
	}
}

// Ruby's Float#round(2), String#to_f and Array#sum, as the parsers use
// them.
func TestRubyNumbers(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{2.675, 2.68}, {1.005, 1.01}, {0.125, 0.13}, {-2.675, -2.68}, {82210.52631578948, 82210.53},
		{1e20, 1e20}, {0.0001, 0}, {0.004, 0}, {0.005, 0.01}, {12.0, 12}, {math.NaN(), math.NaN()},
	} {
		if got := rubyRound2(c.in); got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("rubyRound2(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		want float64
	}{{"272.69", 272.69}, {"", 0}, {"abc", 0}, {" 12abc", 12}, {"1e3x", 1000}, {"1.e3", 1}, {"-.5", 0}, {"+3.25%", 3.25}, {"7.", 7}} {
		if got := rubyToF(c.in); got != c.want {
			t.Errorf("rubyToF(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := rubyFloatSum([]float64{1e16, 1, -1e16, 1}); got != 2 {
		t.Errorf("Kahan-Babuska sum = %v, want 2", got)
	}
	if got := rubyToI("  -42 samples"); got != -42 {
		t.Errorf("rubyToI = %d", got)
	}
}

// Where lkp's parsers fail (Ruby raises), the ports return nothing.
func TestLKPParseFailures(t *testing.T) {
	for _, c := range []struct{ prog, in string }{
		{"hackbench", "Time: 0.5\n"}, // no header: nil * ...
		{"hackbench", "Running in process mode with 1 groups using 2 file descriptors each (== 4 tasks)\nEach sender will pass 10 messages of 100 bytes\n"},
		{"schbench", "Wakeup Latencies percentiles (usec) runtime 1 (s) (1 total samples)\n\t  50.0th: 3 (1 samples)\n"},
		{"netperf", "nothing\n"},
		{"stress-ng", "stress-ng: info:  [1] (secs) (secs) (secs)\nstress-ng: info:  [1] x (average)\n"},
	} {
		if st := LKPParse(c.prog, c.in); st != nil {
			t.Errorf("%s on %q: %v, want nothing", c.prog, c.in, st)
		}
	}
}

// lkp's hackbench parser reads the report: KiB passed by all tasks over
// the printed time, which is rqemu's throughput up to the time's rounding.
func TestLKPHackbench(t *testing.T) {
	res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "hackbench", "-g", "2", "-f", "4", "-l", "200")
	st := LKPStats("hackbench", out)
	m := regexp.MustCompile(`(?m)^Time: (\S+)$`).FindStringSubmatch(out)
	if st == nil || m == nil {
		t.Fatalf("no lkp stats from:\n%s", out)
	}
	printed, _ := strconv.ParseFloat(m[1], 64)
	v := res.Workload.Metrics(res.Sim).Values
	want := v["throughput"] * v["time_sec"] / printed
	for _, k := range []string{"hackbench.throughput", "hackbench.throughput_best", "hackbench.throughput_worst"} {
		if got := st[k]; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
}

// lkpRandomOutputs are seeded random outputs of the tools lkp parses
// (several instances and iterations, zero latencies, receive lines,
// failed stressors and per-stressor metrics), for the property test.
func lkpRandomOutputs(seed int64) map[string]string {
	r := rand.New(rand.NewSource(seed))
	var hb, sb, np, sn strings.Builder
	for inst := 1; inst <= 1+r.Intn(3); inst++ {
		fmt.Fprintf(&hb, "Instance: %d\n", inst)
		g, fds, loops := 1+r.Intn(64), 1+r.Intn(40), 1+r.Intn(60000)
		for it := 1; it <= 1+r.Intn(6); it++ {
			fmt.Fprintf(&hb, "Iterations: %d\nRunning in process mode with %d groups using %d file descriptors each (== %d tasks)\n", it, g, fds, 2*g*fds)
			fmt.Fprintf(&hb, "Each sender will pass %d messages of 100 bytes\nTime: %.3f\n", loops, 0.001+r.Float64()*20)
		}
		fmt.Fprintf(&sb, "Instance: %d\n", inst)
		for it := 1; it <= 1+r.Intn(3); it++ {
			fmt.Fprintf(&sb, "Iteration : %d\n", it)
			for blk := 0; blk <= r.Intn(3); blk++ {
				for _, sec := range []string{"Wakeup Latencies", "Request Latencies", "RPS"} {
					fmt.Fprintf(&sb, "%s percentiles (usec) runtime %d (s) (%d total samples)\n", sec, blk+1, r.Intn(1000))
					for _, p := range []string{"  50.0th", "  90.0th", "* 99.0th", "  99.9th"} {
						fmt.Fprintf(&sb, "\t%s: %-10d (%d samples)\n", p, r.Intn(3)*r.Intn(20000), r.Intn(100))
					}
					fmt.Fprintf(&sb, "\t  min=%d, max=%d\n", r.Intn(2)*r.Intn(50), r.Intn(90000))
				}
				fmt.Fprintf(&sb, "current rps: %.2f\n", r.Float64()*1000)
			}
		}
	}
	for i := 0; i < 1+r.Intn(8); i++ {
		if r.Intn(2) == 0 {
			fmt.Fprintf(&np, "MIGRATED UDP STREAM TEST\nSocket  Message  Elapsed      Messages                   CPU      Service\nSize    Size     Time         Okay Errors   Throughput   Util     Demand\nbytes   bytes    secs            #      #   10^6bits/sec %% SS     us/KB\n\n")
			fmt.Fprintf(&np, "212992   %d   %.2f    %d      0    %.1f     24.11    3.977 \n", 1+r.Intn(65507), 1+r.Float64()*300, r.Intn(1e8), r.Float64()*70000)
			fmt.Fprintf(&np, "212992           %.2f    %d           %.1f     24.11    3.977 \n\n", 1+r.Float64()*300, r.Intn(1e8), r.Float64()*70000)
		} else {
			fmt.Fprintf(&np, "MIGRATED UDP REQUEST/RESPONSE TEST\nLocal /Remote\nSocket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\nSend   Recv   Size    Size   Time    Rate     local  remote local   remote\nbytes  bytes  bytes   bytes  secs.   per sec  %% S    %% S    us/Tr   us/Tr\n\n")
			fmt.Fprintf(&np, "16384  131072 1       1      %.2f    %.2f  23.40  23.40  46.457  46.457 \n16384  131072\n", 0.01+r.Float64()*300, r.Float64()*90000)
		}
	}
	fmt.Fprintf(&sn, "stress-ng: info:  [9] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\nstress-ng: info:  [9]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n")
	for _, name := range []string{"switch", "sem", "nanosleep", "futex"} {
		ops := r.Intn(3) * r.Intn(1e7)
		fmt.Fprintf(&sn, "stress-ng: info:  [9] %-12s %9d     60.00    128.04   1291.13   %.2f      331824.84\n", name, ops, float64(ops)/60)
		if r.Intn(2) == 0 {
			fmt.Fprintf(&sn, "stress-ng: info:  [9] %-12s %12.2f nanosecs per call (harmonic mean of %d instances)\n", name, float64(r.Intn(2))*r.Float64()*2000, 1+r.Intn(224))
		}
	}
	fmt.Fprintf(&sn, "stress-ng: info:  [9] for a 60.00s run time:\n")
	return map[string]string{"hackbench": hb.String(), "schbench": sb.String(), "netperf": np.String(), "stress-ng": sn.String()}
}

// Property: on random outputs, each port prints what lkp's own parser
// prints (LKP_SRC and ruby; 8 seeds of each of four parsers).
func TestLKPPortsAgreeRandom(t *testing.T) {
	src := lkpSource(t)
	for seed := int64(1); seed <= 8; seed++ {
		for prog, out := range lkpRandomOutputs(seed) {
			lkp, err := src.Parse(prog, out)
			if err != nil {
				t.Fatalf("seed %d %s: %v\n%s", seed, prog, err, out)
			}
			if d := diffStats(LKPParse(prog, out), lkp); len(d) > 0 {
				t.Errorf("seed %d: the port of %s differs from lkp's:\n  %s\n%s", seed, prog, strings.Join(d, "\n  "), out)
			}
		}
	}
}

// No output makes a port panic, and what a port returns is finite (JSON
// carries it). Seeds: lkp's fixtures and rqemu's outputs.
func FuzzLKPParse(f *testing.F) {
	yamls, _ := filepath.Glob(filepath.Join("testdata", "lkp", "*", "*.yaml"))
	for _, y := range yamls {
		in, err := os.ReadFile(strings.TrimSuffix(y, ".yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(filepath.Dir(y)), string(in))
	}
	f.Fuzz(func(t *testing.T, prog, out string) {
		for _, p := range []string{prog, "netperf", "hackbench", "schbench", "stress-ng", "perf-bench-sched-pipe", "perf-bench-sched-messaging", "oltp", "sysbench"} {
			for k, v := range LKPParse(p, out) {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s: %s = %v", p, k, v)
				}
			}
		}
	})
}
