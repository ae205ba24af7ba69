package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The real tools' spellings build the same workload as the canonical
// flags: getopt's glued values and bool clusters, the long options.
func TestToolSpellings(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, c := range []struct {
		name       string
		real, want []string
	}{
		{"hackbench", []string{"-g2", "-f10", "-l50", "-Tp"}, []string{"-g", "2", "-f", "10", "-l", "50", "-T", "-p"}},
		{"hackbench", []string{"-pTg", "3", "-s64"}, []string{"-p", "-T", "-g", "3", "-s", "64"}},
		{"hackbench", []string{"--groups=2", "--threads", "--pipe", "--loops", "7"}, []string{"-g", "2", "-T", "-p", "-l", "7"}},
		{"messaging", []string{"-tpg4", "-l20"}, []string{"-t", "-p", "-g", "4", "-l", "20"}},
		{"messaging", []string{"--thread", "--pipe", "--group=4", "--nr_loops=20"}, []string{"-t", "-p", "-g", "4", "-l", "20"}},
		{"messaging", []string{"--loop", "20"}, []string{"-l", "20"}},
		{"pipe", []string{"--loop=5000", "--threaded"}, []string{"-l", "5000", "-T"}},
		{"pipe", []string{"-Tl5000"}, []string{"-l", "5000", "-T"}},
		{"pipe", []string{}, []string{"-l", "1000000"}},
		{"schbench", []string{"--message-threads", "2", "--threads=4", "--runtime", "3", "--sleep_usec", "50", "--operations", "2",
			"--warmuptime", "1", "--intervaltime", "2", "--calibrate", "--no-locking", "--jobname", "x"},
			[]string{"-m", "2", "-t", "4", "-r", "3", "-s", "50", "-n", "2", "-w", "1", "-i", "2", "-C", "-L", "-J", "x"}},
		{"schbench", []string{"-m2", "-t4", "-r3", "-CL"}, []string{"-m", "2", "-t", "4", "-r", "3", "-C", "-L"}},
		// --cache_footprint is ignored, as schbench's own getopt table ignores it.
		{"schbench", []string{"--cache_footprint", "1024"}, []string{}},
		{"sysbench", []string{"--threads=4", "oltp_read_write", "--time=0.5", "run"}, []string{"--threads", "4", "--time", "0.5"}},
		{"sysbench", []string{"/usr/share/sysbench/oltp_read_write.lua", "--report-interval=1"}, []string{"--report-interval", "1"}},
	} {
		got, err := build(m, c.name, c.real...)
		if err != nil {
			t.Errorf("%s %q: %v", c.name, c.real, err)
			continue
		}
		want, err := build(m, c.name, c.want...)
		if err != nil {
			t.Fatalf("%s %q: %v", c.name, c.want, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %q builds %+v, want %+v (as %q)", c.name, c.real, got, want, c.want)
		}
	}
}

// Getopt's rewriting, and what it leaves alone.
func TestGetopt(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Bool("T", false, "")
	fs.Bool("p", false, "")
	fs.Int("g", 0, "")
	fs.String("cgroup", "", "")
	fs.Bool("json", false, "")
	for _, c := range []struct{ in, out string }{
		{"-g2 -Tp", "-g=2 -T -p"},
		{"-Tpg 3", "-T -p -g 3"},
		{"-Tpg3", "-T -p -g=3"},
		{"-g -5", "-g -5"},             // a value is not a flag
		{"-cgroup -Tp", "-cgroup -Tp"}, // nor here
		{"-json -Tx", "-json -Tx"},     // an unknown letter: left for the flag package
		{"--Tp", "--Tp"},               // a long option is never a cluster
		{"-- -g2", "-- -g=2"},          // netperf's test-specific options
		{"-h", "-h"},
		{"run -g2", "run -g=2"},
	} {
		if got := strings.Join(Getopt(fs, strings.Fields(c.in)), " "); got != c.out {
			t.Errorf("Getopt(%q) = %q, want %q", c.in, got, c.out)
		}
	}
}

// Bad positional arguments and spellings are errors naming what is wrong.
func TestToolSpellingErrors(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"hackbench", []string{"-g2", "extra"}, `unexpected argument "extra"`},
		{"hackbench", []string{"-Tx"}, "-Tx"},
		{"sysbench", []string{"oltp_read_only"}, `test "oltp_read_only" is not emulated`},
		{"sysbench", []string{"oltp_read_write", "prepare"}, `command "prepare" is not emulated`},
		{"sysbench", []string{"--report-interval=-1"}, "-report-interval"},
	} {
		_, err := build(m, c.name, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: err = %v, want one containing %q", c.name, c.args, err, c.want)
		}
	}
	var ae *ArgError
	spec, _ := Lookup("pipe")
	fs := flag.NewFlagSet("pipe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	spec.Flags(fs)
	if err := ParseArgs(fs, spec, []string{"-l", "5", "x"}); !errors.As(err, &ae) || ae.Arg != "x" {
		t.Errorf("pipe x: err = %v, want an ArgError for x", err)
	}
}

// sysbench prints its banner and, with --report-interval, one line per
// interval in db_report_intermediate()'s format.
func TestSysbenchReportInterval(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "sysbench", "--threads=4", "--time=0.02", "--report-interval=0.005", "oltp_read_write", "run")
	head := "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta3)\n\nRunning the test with following options:\nNumber of threads: 4\n" +
		"Report intermediate results every 0.005 second(s)\nInitializing random number generator from current time\n\n\n" +
		"Initializing worker threads...\n\nThreads started!\n\n"
	if !strings.HasPrefix(out, head) {
		t.Fatalf("sysbench output starts\n%s\nwant\n%s", out[:min(len(out), len(head)+200)], head)
	}
	line := regexp.MustCompile(`^\[ (\S+)s \] thds: (\d+) tps: \d+\.\d\d qps: \d+\.\d\d \(r/w/o: \d+\.\d\d/\d+\.\d\d/\d+\.\d\d\) lat \(ms,95%\): \d+\.\d\d err/s: 0\.00 reconn/s: 0\.00$`)
	var stamps []string
	for _, l := range strings.Split(strings.TrimPrefix(out, head), "\n") {
		if l == "SQL statistics:" {
			break
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("interval line %q is not sysbench's", l)
		}
		stamps = append(stamps, m[1])
		if m[2] != "4" {
			t.Errorf("%q: want 4 threads running", l)
		}
	}
	// The last transactions end after --time: the report thread still
	// prints at 0.02.
	if want := []string{"0.005", "0.01", "0.015", "0.02"}; !reflect.DeepEqual(stamps, want) {
		t.Errorf("interval stamps %v, want %v", stamps, want)
	}
}

// schbench -j writes the tool's JSON layout: {"normal":{...},"int":{...}}
// with every percentile of the three stats, their min and max, and the
// runtime, matching the text report.
func TestSchbenchJSON(t *testing.T) {
	m := machine(t, "hikey-8")
	file := filepath.Join(t.TempDir(), "out.json")
	w, err := build(m, "schbench", "-m", "2", "-t", "4", "-r", "2", "-j", file, "-J", `job"1`)
	if err != nil {
		t.Fatal(err)
	}
	res, text := runWorkload(t, m, w)
	fw := w.(FileWriter)
	if f := fw.Files(); len(f) != 1 || f[0] != (OutputFile{"-j", file}) {
		t.Fatalf("Files() = %v", f)
	}
	info := RunInfo{Args: []string{"-m", "2", "-t", "4", "-r", "2", "-j", file, "-J", `job"1`}, Kernel: "v6.6-eevdf", Unix: 1700000000}
	if err := fw.WriteFiles(io.Discard, res.Sim, info); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantHead := `{"normal": {"version": "v6.6-eevdf","jobname": "job\"1","hostname": "hikey-8","sched_ext": "disabled","cmdline": "schbench -m 2 -t 4 -r 2 -j ` +
		file + ` -J job\"1"},"int": {"time": 1700000000, "wakeup_latency_pct20.0": `
	if !bytes.HasPrefix(raw, []byte(wantHead)) || !bytes.HasSuffix(raw, []byte(`, "runtime": 2}}`)) {
		t.Fatalf("JSON is\n%s\nwant it to start\n%s", raw, wantHead)
	}
	var doc struct {
		Normal map[string]string  `json:"normal"`
		Int    map[string]float64 `json:"int"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	if len(doc.Int) != 2+3*7 {
		t.Errorf("int has %d keys, want time, runtime and 7 per stat: %v", len(doc.Int), doc.Int)
	}
	// The text's final wakeup p99 and max are the JSON's.
	final := text[strings.LastIndex(text, "Wakeup Latencies"):]
	p99 := regexp.MustCompile(`\* 99\.0th: (\d+)`).FindStringSubmatch(final)
	mx := regexp.MustCompile(`max=(\d+)`).FindStringSubmatch(final)
	if p99 == nil || mx == nil {
		t.Fatalf("no final p99/max in\n%s", final)
	}
	if got := doc.Int["wakeup_latency_pct99.0"]; p99[1] != ftoa(got) {
		t.Errorf("JSON wakeup p99 %v, text %s", got, p99[1])
	}
	if got := doc.Int["wakeup_latency_max"]; mx[1] != ftoa(got) {
		t.Errorf("JSON wakeup max %v, text %s", got, mx[1])
	}
	// -j - writes to the stdout given.
	var b bytes.Buffer
	w2, _ := build(m, "schbench", "-m", "2", "-t", "4", "-r", "2", "-j", "-")
	res2, _ := runWorkload(t, m, w2)
	if err := w2.(FileWriter).WriteFiles(&b, res2.Sim, info); err != nil || !strings.HasPrefix(b.String(), `{"normal": {`) {
		t.Errorf("-j -: %v %q", err, b.String())
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
