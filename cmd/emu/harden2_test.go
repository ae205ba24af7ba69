package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// h2case is one input of issue 40: the exit status and a piece of
// stderr (the flag or field named, the allowed form).
type h2case struct {
	name string
	args []string
	code int
	want string
}

// checkCases runs each case through the CLI: the exit status, the
// message, no stack trace, and the message printed once.
func checkCases(t *testing.T, cases []h2case) {
	t.Helper()
	for _, c := range cases {
		t0 := time.Now()
		code, _, errs := runEmu(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: emu %s: exit %d, want %d; stderr %q lacks %q", c.name, strings.Join(c.args, " "), code, c.code, errs, c.want)
		}
		if n := strings.Count(errs, c.want); n > 1 {
			t.Errorf("%s: %q said %d times:\n%s", c.name, c.want, n, errs)
		}
		if d := time.Since(t0); d > 10*time.Second {
			t.Errorf("%s: took %v to be rejected", c.name, d)
		}
		noStack(t, c.name, errs)
	}
}

// TestHardening2: issue 40's inputs that are bad input (exit 2).
func TestHardening2(t *testing.T) {
	dir := t.TempDir()
	file := fileIn(t, dir)
	run := []string{"run", "-topo", "hikey-8", "-progress=false"}
	r := func(args ...string) []string { return append(append([]string{}, run...), args...) }
	example := filepath.Join("..", "..", "bench", "testdata", "rtapp", "example.json")
	rt := func(name, task string) string {
		return file(name, `{"global": {"duration": 1}, "tasks": {`+task+`}}`)
	}
	deepGroup := "/" + strings.Repeat("g/", 3000)
	cases := []h2case{
		// 1: a schbench request that takes no time
		{"schbench -s 0 -n 0", r("-workload", "schbench", "-s", "0", "-n", "0", "-r", "1"), 2, "-s: -s 0 with 0 matrix"},
		{"schbench -s0 -c0", []string{"run", "-topo", "spr-2s", "-progress=false", "-workload", "schbench", "-s0", "-c0"}, 2, "-s: -s 0 with -c 0"},
		{"schbench -s 0 -F 0", r("-workload", "schbench", "-s", "0", "-F", "0", "-r", "1"), 2, "-s: -s 0 with 5 matrix"},
		// 7: group depth
		{"-cgroup 3000 levels", []string{"run", "-topo", "spr-2s", "-progress=false", "-workload", "pipe", "-l", "10", "-cgroup", strings.Repeat("a/", 3000)}, 2, "-cgroup: 3000 levels is too deep (allowed: at most 64"},
		{"rt-app taskgroup 3000 levels", r("-workload", "rtapp", "-f", rt("deepg.json", `"a": {"run": 1000, "sleep": 1000, "taskgroup": "`+deepGroup+`"}`)), 2, "3000 levels is too deep (allowed: at most 64"},
		// 12: minor
		{"schbench -t MaxInt64", r("-workload", "schbench", "-t", "9223372036854775807"), 2, "= 9.223e+18 tasks"},
		{"sysbench --time 5e-7", r("-workload", "sysbench", "--time", "5e-7"), 2, "-time: run time 5e-07 s is out of range (allowed: 0.001 to"},
		{"rtapp -d 1e-12", r("-workload", "rtapp", "-f", example, "-d", "1e-12"), 2, "-d: duration 1e-12 s is out of range (allowed: 0.001 to"},
		{"rt-app thread name with a newline", r("-workload", "rtapp", "-f", rt("nl.json", `"a\nb": {"run": 1000, "sleep": 1000}`)), 2, "holds a control character"},
		{"-cgroup with a newline", r("-workload", "pipe", "-l", "10", "-cgroup", "a\nb"), 2, "-cgroup: \"a\\nb\" holds a control character"},
	}
	checkCases(t, cases)
}

// TestPartialMessages: an interrupted hackbench or messaging run reports
// over the messages sent, says it stopped early, and its NDJSON record
// says it was interrupted, which emu merge warns about (issue 40, item 3).
func TestPartialMessages(t *testing.T) {
	interruptAtOnce(t)
	dir := t.TempDir()
	for _, wl := range []string{"hackbench", "messaging"} {
		out := filepath.Join(dir, wl+".ndjson")
		code, stdout, errs := runEmu("run", "-topo", "hikey-8", "-progress=false", "-o", out, "-workload", wl, "-g", "1", "-l", "10")
		if code != 130 || !strings.Contains(stdout, "stopped early") || !strings.Contains(stdout, "0 of the 4000 messages were sent") {
			t.Errorf("%s: exit %d, want 130 and a \"stopped early\" line:\n%s\n%s", wl, code, stdout, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Interrupted *bool `json:"interrupted"`
			Result      struct {
				Values map[string]float64 `json:"values"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Interrupted == nil || !*rec.Interrupted {
			t.Errorf("%s: the record does not say interrupted: %s", wl, b)
		}
		if v := rec.Result.Values["messages_per_sec"]; v != 0 {
			t.Errorf("%s: messages_per_sec %g, want 0 (no message was sent)", wl, v)
		}
		code, _, errs = runEmu("merge", out)
		if code != 0 || !strings.Contains(errs, "warning: 1 of the 1 records are of interrupted runs") {
			t.Errorf("%s: merge: exit %d, no warning: %q", wl, code, errs)
		}
	}
}

// TestProfileOutputs: -fgprof on a run far shorter than fgprof's 99 Hz
// period writes a profile, and a profile that cannot be written is exit 1
// after the result (issue 40, item 4).
func TestProfileOutputs(t *testing.T) {
	dir := t.TempDir()
	base := []string{"run", "-topo", "hikey-8", "-progress=false", "-workload", "pipe", "-l", "10"}
	fg := filepath.Join(dir, "fg.pprof")
	code, out, errs := runEmu(append(base, "-fgprof", fg)...)
	if st, err := os.Stat(fg); code != 0 || err != nil || st.Size() == 0 || !strings.Contains(out, "usecs/op") {
		t.Errorf("-fgprof on a short run: exit %d, profile %v, stdout %q, stderr %q", code, err, out, errs)
	}
	noStack(t, "-fgprof", errs)
	for _, fl := range []string{"-fgprof", "-cpuprofile", "-memprofile"} {
		code, out, errs := runEmu(append(base, fl, "/dev/full")...)
		if code != 1 || !strings.Contains(errs, fl+": ") || !strings.Contains(out, "usecs/op") {
			t.Errorf("%s /dev/full: exit %d, want 1 with the result and the flag named; stdout %q, stderr %q", fl, code, out, errs)
		}
	}
}

// TestFIFOOutput: a FIFO as an output path is not opened by the
// pre-check (which would give its reader an end of file) and gets the
// data (issue 40, item 5).
func TestFIFOOutput(t *testing.T) {
	dir := t.TempDir()
	for _, fl := range []string{"-schedstat", "-o"} {
		fifo := filepath.Join(dir, "fifo"+fl)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Skip("mkfifo:", err)
		}
		got := make(chan int, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- -1
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- len(b)
		}()
		type result struct {
			code int
			errs string
		}
		ran := make(chan result, 1)
		go func() {
			code, _, errs := runEmu("run", "-topo", "hikey-8", "-progress=false", fl, fifo, "-workload", "pipe", "-l", "10")
			ran <- result{code, errs}
		}()
		deadline := time.After(20 * time.Second)
		var res result
		n := -2
		for range 2 {
			select {
			case res = <-ran:
			case n = <-got:
			case <-deadline:
				t.Fatalf("%s FIFO: emu or its reader still blocked after 20 s (the reader got %d bytes)", fl, n)
			}
		}
		if res.code != 0 || n <= 0 {
			t.Errorf("%s FIFO: exit %d, the reader got %d bytes: %s", fl, res.code, n, res.errs)
		}
	}
}

var _ = fmt.Sprint
