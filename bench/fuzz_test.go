package bench

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

// fuzzRun runs w on hikey-8 for at most about 2 ms of virtual time and
// checks that it reports without a panic and with finite numbers.
func fuzzRun(t *testing.T, w Workload) {
	t.Helper()
	if l := w.Limit(); l <= 0 || l > maxVirtualNS {
		t.Fatalf("Limit() = %d ns, out of (0, %d]", l, maxVirtualNS)
	}
	m := machine(t, "hikey-8")
	f, _, err := emu.ParseFeatures(emu.DefaultProfile)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	closed := false
	res, err := Execute(w, RunConfig{Machine: m, Features: f, Seed: 1, Driver: "serial", Check: true, Stop: stop,
		Progress: func(now, limit int64) {
			if now >= 2_000_000 && !closed {
				closed = true
				close(stop)
			}
		}})
	if err != nil {
		var fe *FlagError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Flag, "-") {
			t.Fatalf("setup error %v does not name a flag", err)
		}
		return
	}
	var b bytes.Buffer
	if err := w.Report(&b, res.Sim); err != nil {
		t.Fatal(err)
	}
	for k, v := range w.Metrics(res.Sim).Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("metric %s = %v after %d ns:\n%s", k, v, res.Sim.Now(), b.String())
		}
	}
}

// FuzzRtApp: any bytes as an rt-app file are parsed without a panic and
// rejected (if at all) with a -f error that says where; a description that
// parses sets up and runs for a bounded time on hikey-8.
func FuzzRtApp(f *testing.F) {
	files, _ := filepath.Glob("testdata/rtapp/*.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"tasks": {"b": {"loop": 1, "run": 10, "sleep": 20, "run1": 30, "runtime": 50}}}`,
		`{"global": {"duration": 1}, "tasks": {"periodic": {"cpus": [0], "run": 2000, "timer": {"ref": "tick", "period": 10000}}}}`,
		`{"tasks": {"a": {"loop": 3, "lock": "m", "run": 100, "unlock": "m", "sleep": 50}, "b": {"instance": 2, "loop": 3, "lock": "m", "run": 100, "unlock": "m"}}}`,
		`{"global": {"duration": 1}, "tasks": {"w": {"lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 10}, "s": {"run": 100, "lock": "m", "signal": "c", "unlock": "m", "sleep": 100}}}`,
		`{"tasks": {"t": {"loop": 3, "taskgroup": "/a/b", "util_min": 512, "phases": {"a": {"cpus": [1], "run": 1000}, "b": {"cpus": [6], "run": 1000, "yield": ""}}}}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseRtApp("fuzz.json", data, 8)
		if err == nil {
			err = cfg.checkEnds("fuzz.json")
		}
		if err != nil {
			var fe *FlagError
			if !errors.As(err, &fe) || fe.Flag != "-f" || !strings.Contains(fe.Msg, "fuzz.json") {
				t.Fatalf("error %v is not a -f error naming the file", err)
			}
			return
		}
		threads := 0
		for _, tk := range cfg.tasks {
			threads += tk.instances
		}
		if threads > 64 {
			return // parsed; too big to run here
		}
		w := &rtApp{cfg: cfg, m: machine(t, "hikey-8"), label: "fuzz.json"}
		fuzzRun(t, w)
	})
}

// FuzzWorkloadFlags: any flags of any workload build it for hikey-8 or
// fail with an error naming a flag; a workload that builds sets up, runs
// for a bounded virtual time, and reports finite numbers.
func FuzzWorkloadFlags(f *testing.F) {
	names := Names()
	for i, n := range names {
		s, _ := Lookup(n)
		for _, ex := range s.Examples {
			if _, args, ok := strings.Cut(ex, "-workload "+n); ok {
				f.Add(uint8(i), args)
			}
		}
		f.Add(uint8(i), "")
	}
	for _, c := range []struct{ name, args string }{
		{"hopper", "-n 1 -d 50 -b 9223372036854775807"},
		{"schbench", "-m 1 -t 1 -r 1 -s 9223372036854775807"},
		{"schbench", "-r 9223372037"},
		{"pipe", "-l 9223372036854775807"},
		{"hackbench", "-l 9223372036854775807"},
		{"hopper", "-d 18446744073809"},
		{"rtapp", "-f testdata/rtapp/example.json -d NaN"},
		{"netperf", "-t UDP_STREAM -m 1 -nr 300% -l 1e-6"},
		{"sysbench", "--threads 100% --time 0.001 -commit-lock -query-jitter 0.99"},
		{"sysbench", "--threads=3 --time=0.003 --report-interval=0.001 oltp_read_write run"},
		{"hackbench", "-g2 -f5 -Tpl10"},
		{"schbench", "--message-threads 2 --threads=2 --runtime 1 -j -"},
		{"netperf", "-nr 4 -l 0.001 -start fork"},
		{"sysbench", "--threads 4 --time 0.001 -commit-lock -start fork"},
		{"netperf", "-start forked"},
	} {
		for i, n := range names {
			if n == c.name {
				f.Add(uint8(i), c.args)
			}
		}
	}
	f.Fuzz(func(t *testing.T, idx uint8, args string) {
		name := names[int(idx)%len(names)]
		argv := strings.Fields(args)
		if name == "rtapp" {
			for _, a := range argv {
				if strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "--f") {
					return // a file other than the test's (stdin, a device) is FuzzRtApp's business
				}
			}
			argv = append([]string{"-f", "testdata/rtapp/example.json"}, argv...)
		}
		spec, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		mk := spec.Flags(fs)
		if err := ParseArgs(fs, spec, argv); err != nil {
			var fe *FlagError
			if errors.As(err, &fe) && !strings.HasPrefix(fe.Flag, "-") {
				t.Fatalf("%s %v: error %v does not name a flag", name, argv, err)
			}
			return // the flag package's own error, or a positional argument (exit 2 in emu run)
		}
		w, err := mk(machine(t, "hikey-8"))
		if err != nil {
			var fe *FlagError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Flag, "-") {
				t.Fatalf("%s %v: error %v does not name a flag", name, argv, err)
			}
			return
		}
		fuzzRun(t, w)
	})
}
