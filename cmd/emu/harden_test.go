package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// noStack fails if stderr looks like a Go crash.
func noStack(t *testing.T, what, stderr string) {
	t.Helper()
	for _, s := range []string{"goroutine ", "panic:", ".go:", "runtime."} {
		if strings.Contains(stderr, s) {
			t.Errorf("%s: stderr holds %q (a stack trace?):\n%s", what, s, stderr)
		}
	}
}

// TestHardening: every input of issue 14 through the CLI: the exit
// status, a message naming the flag or field, and no stack trace.
func TestHardening(t *testing.T) {
	dir := t.TempDir()
	file := fileIn(t, dir)
	spec := hikeyEdit(t, file)
	var tasks []string
	for i := range 64 {
		tasks = append(tasks, fmt.Sprintf(`"t%d": {"instance": 4096, "loop": 1, "run": 10}`, i))
	}
	many := file("many.json", `{"tasks": {`+strings.Join(tasks, ", ")+`}}`)
	deep := file("deep.json", strings.Repeat("[", 1_000_000))
	example := filepath.Join("..", "..", "bench", "testdata", "rtapp", "example.json")
	// A class this host lacks, for a calibration figure it cannot have.
	var absent string
	if m, err := hwmodel.Load("host", hwmodel.LoadOptions{}); err == nil {
		present := m.ClassesPresent()
		for _, c := range []hwmodel.Class{hwmodel.ClassSMT, hwmodel.ClassRemote, hwmodel.ClassSocket} {
			if !present[c] {
				absent = c.String()
				break
			}
		}
	}
	run := []string{"run", "-topo", "hikey-8", "-progress=false"}
	r := func(args ...string) []string { return append(append([]string{}, run...), args...) }
	type tc struct {
		name string
		args []string
		code int
		want string
	}
	cases := []tc{
		// 1: overflowing time flags
		{"hopper -b overflow", r("-workload", "hopper", "-n", "1", "-d", "50", "-b", "9223372036854775807"), 2, "-b: "},
		{"schbench -s overflow", r("-workload", "schbench", "-m", "1", "-t", "1", "-r", "1", "-s", "9223372036854775807"), 2, "-s: "},
		{"schbench -c overflow", r("-workload", "schbench", "-c", "9223372036854775807"), 2, "-c: "},
		{"schbench -t overflow", r("-workload", "schbench", "-t", "9223372036854775807"), 2, "-t: "},
		{"schbench -F huge", r("-workload", "schbench", "-F", "9223372036854775807"), 2, "-F: "},
		{"schbench -n huge", r("-workload", "schbench", "-n", "9223372036854775807"), 2, "-n: "},
		// 2: unbounded memory
		{"schbench -r huge", r("-workload", "schbench", "-r", "9223372037"), 2, "-r: "},
		{"rt-app nested 1e6 deep", r("-workload", "rtapp", "-f", deep), 2, "nested deeper than"},
		// 5: setup size
		{"rt-app 64 x 4096 threads", r("-workload", "rtapp", "-f", many), 2, ".instance: "},
		// 6: silent wrong results
		{"pipe -l overflow", r("-workload", "pipe", "-l", "9223372036854775807"), 2, "-l: "},
		{"hackbench -l overflow", r("-workload", "hackbench", "-l", "9223372036854775807"), 2, "-l: "},
		{"messaging -l overflow", r("-workload", "messaging", "-l", "9223372036854775807"), 2, "-l: "},
		{"hopper -d wraps", r("-workload", "hopper", "-d", "18446744073809"), 2, "-d: "},
		{"compare -seed overflow", []string{"compare", "-topo", "hikey-8", "-seed", "18446744073709551615", "-patch", "v6.6-eevdf", "-workload", "pipe", "-l", "10"}, 2, "-seed: "},
		{"rt-app deadlock reaches its bound", r("-workload", "rtapp", "-f", file("abba.json", `{"tasks": {
			"a": {"loop": 1, "lock": "m1", "run": 1000, "lock1": "m2", "unlock1": "m2", "unlock": "m1"},
			"b": {"loop": 1, "lock": "m2", "run": 1000, "lock1": "m1", "unlock1": "m1", "unlock": "m2"}}}`)), 1, `deadlocked: a-0 waits for mutex "m2" held by b-1; b-1 waits for mutex "m1" held by a-0`},
		{"rt-app deadlock within a duration", r("-workload", "rtapp", "-f", file("abba-d.json", `{"global": {"duration": 1}, "tasks": {
			"a": {"lock": "m1", "run": 1000, "lock1": "m2", "unlock1": "m2", "unlock": "m1"},
			"b": {"lock": "m2", "run": 1000, "lock1": "m1", "unlock1": "m1", "unlock": "m2"}}}`)), 1, "deadlocked"},
		// 7: bad input that exited 1
		{"reproduce -l NaN", []string{"reproduce", "-l", "NaN", "host-pipe"}, 2, "-l: "},
		{"topo -calib unknown hammer class", []string{"topo", "-calib", file("c1.yaml", "host: x\nhammer2_class: cluster\nhammer2_shared_ns: 4\n"), "host"}, 2, "hammer2_class"},
		{"topo DIR", []string{"topo", dir + "/"}, 2, "is a directory"},
		{"-schedstat read-only", r("-workload", "pipe", "-l", "10", "-schedstat", file("ro.txt", "")), 2, "-schedstat: "},
		{"-schedstat /proc/version", r("-workload", "pipe", "-l", "10", "-schedstat", "/proc/version"), 2, "-schedstat: "},
		{"-trace DIR", r("-workload", "pipe", "-l", "10", "-trace", dir), 2, "-trace: "},
		{"-taskstats in a missing dir", r("-workload", "pipe", "-l", "10", "-taskstats", filepath.Join(dir, "no", "such")), 2, "-taskstats: "},
		{"-sched-debug in a missing dir", r("-workload", "pipe", "-l", "10", "-sched-debug", filepath.Join(dir, "no", "such")), 2, "-sched-debug: "},
		{"-cpuprofile DIR", r("-workload", "pipe", "-l", "10", "-cpuprofile", dir), 2, "-cpuprofile: "},
		// 8: accepted silently
		{"calib negative", []string{"topo", "-calib", file("c3.yaml", "host: x\nrmw_local_ns: -1\n"), "host"}, 2, "rmw_local_ns"},
		{"calib zero ping-pong", []string{"topo", "-calib", file("c4.yaml", "host: x\npingpong_ns: {llc: 0}\n"), "host"}, 2, "pingpong_ns.llc"},
		{"calib NaN", []string{"topo", "-calib", file("c5.yaml", "host: x\npipe_rtt_us: .nan\n"), "host"}, 2, "pipe_rtt_us"},
		{"rtapp -d NaN", r("-workload", "rtapp", "-f", example, "-d", "NaN"), 2, "-d: "},
		{"rtapp -d Inf", r("-workload", "rtapp", "-f", example, "-d", "Inf"), 2, "-d: "},
		{"-trace-window -1s", r("-workload", "pipe", "-l", "10", "-trace-window", "-1s"), 2, "-trace-window: "},
		{"-window-from -1s", r("-workload", "pipe", "-l", "10", "-window-from", "-1s"), 2, "-window-from: "},
		{"-window-from after the run", r("-workload", "pipe", "-l", "10", "-window-from", "1s"), 2, "-window-from: no measurement window"},
		{"-window-to before -window-from", r("-workload", "pipe", "-l", "10", "-window-from", "2ms", "-window-to", "1ms"), 2, "-window-to: "},
		{"-window-to after the run", r("-workload", "pipe", "-l", "10", "-window-to", "1s"), 2, "-window-to: no measurement window"},
		{"-interval 1500us", r("-workload", "pipe", "-l", "10", "-interval", "1500us"), 2, "-interval: "},
		{"-interval -1ms", r("-workload", "pipe", "-l", "10", "-interval", "-1ms"), 2, "-interval: "},
		{"spec latency 1e300", []string{"topo", spec("lat.yaml", "l2: {value: 45,", "l2: {value: 1e300,")}, 2, "latency_ns.l2.value"},
		{"spec source without a tag", []string{"topo", spec("tag.yaml", `l2: {value: 45, source: "[E] by`, `l2: {value: 45, source: "by`)}, 2, "latency_ns.l2.source"},
		{"-features empty", r("-workload", "pipe", "-l", "10", "-features", ""), 2, "-features: empty"},
		{"compare -base empty", []string{"compare", "-base", "", "-patch", "v6.6-eevdf", "-topo", "hikey-8", "-workload", "pipe"}, 2, "-base: empty"},
		{"-workload twice", r("-workload", "pipe", "-workload", "hackbench"), 2, "-workload: given 2 times"},
		{"-epoch huge", r("-workload", "pipe", "-epoch", "2562047h"), 2, "-epoch: "},
		// 9: messages
		{"-features error once", r("-workload", "pipe", "-features", "v6.6-eevdf,+FOO"), 2, `emu: -features: unknown feature "FOO"`},
		{"compare -patch error once", []string{"compare", "-patch", "v6.6-eevdf,+FOO", "-topo", "hikey-8", "-workload", "pipe"}, 2, `emu: -patch: unknown feature "FOO"`},
		{"flow mapping names its key", []string{"topo", spec("flow.yaml", `l2: {value: 45, source: "[E] by`, `l2: {value: 45, source: [1, 2], x: "by`)}, 2, "latency_ns.l2.source"},
	}
	if absent != "" {
		cases = append(cases, tc{"topo -calib figure of a class the host lacks", []string{"topo", "-calib", file("c2.yaml", "host: x\npingpong_ns: {"+absent+": 10}\n"), "host"}, 2, "pingpong_ns." + absent})
	}
	if err := os.Chmod(filepath.Join(dir, "ro.txt"), 0o444); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		code, _, errs := runEmu(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: emu %s: exit %d, want %d; stderr %q lacks %q", c.name, strings.Join(c.args, " "), code, c.code, errs, c.want)
		}
		if strings.Contains(errs, "-features: -features") {
			t.Errorf("%s: flag named twice: %q", c.name, errs)
		}
		noStack(t, c.name, errs)
	}
	// The output paths were checked, not left behind.
	if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
		t.Error("a missing output directory was created")
	}
}

// TestPartialResult: an interrupted duration-bound run reports over the
// time that ran, and says so (issue 14, item 4).
func TestPartialResult(t *testing.T) {
	interruptAtOnce(t)
	for _, c := range []struct{ args []string }{
		{[]string{"netperf", "-l", "1"}},
		{[]string{"schbench", "-r", "5"}},
		{[]string{"sysbench", "--time", "1"}},
		{[]string{"hopper", "-n", "2", "-d", "1000"}},
	} {
		code, out, errs := runEmu(append([]string{"run", "-topo", "hikey-8", "-progress=false", "-workload"}, c.args...)...)
		if code != 130 || !strings.Contains(out, "stopped early") {
			t.Errorf("%v: exit %d, want 130 and a \"stopped early\" note:\n%s\n%s", c.args, code, out, errs)
		}
		if strings.Contains(out, " 1.00 ") {
			t.Errorf("%v: the configured length is printed as the time run:\n%s", c.args, out)
		}
	}
}

// TestCrashExit: a panic anywhere in a command is an internal error with
// its own exit status, never the 2 of bad input (issue 14, item 1/12).
func TestCrashExit(t *testing.T) {
	old := commands
	defer func() { commands = old }()
	commands = append(append([]command{}, old...),
		command{"boom", "", func([]string, io.Writer, io.Writer) error { panic("kaboom") }},
		command{"cpuboom", "", func([]string, io.Writer, io.Writer) error {
			panic(&emu.CPUPanic{CPU: 7, Now: 42, Task: "hog:3", Value: "bad", Stack: []byte("worker stack\n")})
		}})
	code, _, errs := runEmu("boom")
	if code != exitCrash || !strings.Contains(errs, "internal error") || !strings.Contains(errs, "kaboom") {
		t.Errorf("panic: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runEmu("cpuboom")
	if code != exitCrash || !strings.Contains(errs, "CPU 7 at 42 ns (running hog:3): bad") || !strings.Contains(errs, "worker stack") {
		t.Errorf("CPU panic: exit %d, stderr %q", code, errs)
	}
}

// TestSIGTERM: SIGTERM stops a run like SIGINT, and the exit status is
// 143 (issue 14, item 11).
func TestSIGTERM(t *testing.T) {
	defer caught.Store(0)
	raise(t, syscall.SIGTERM)
	if code := exitCode(errInterrupted, io.Discard); code != 143 {
		t.Errorf("exit %d after SIGTERM, want 143", code)
	}
	if !errors.Is(errInterrupted, errInterrupted) || caughtSignal() != syscall.SIGTERM {
		t.Errorf("caught %v", caughtSignal())
	}
}
