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

	"github.com/rqemu/rqemu/hwmodel"
	"go.yaml.in/yaml/v3"
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
// message, no stack trace, the message printed once, and within 10 s
// (the bound; scaled under the race detector).
func checkCases(t *testing.T, cases []h2case) {
	t.Helper()
	limit := 10 * time.Second
	if raceEnabled {
		limit *= 20
	}
	for _, c := range cases {
		t0 := time.Now()
		code, _, errs := runEmu(c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%s: emu %s: exit %d, want %d; stderr %q lacks %q", c.name, strings.Join(c.args, " "), code, c.code, errs, c.want)
		}
		if n := strings.Count(errs, c.want); n > 1 {
			t.Errorf("%s: %q said %d times:\n%s", c.name, c.want, n, errs)
		}
		if d := time.Since(t0); d > limit {
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

// TestFlagErrors: a flag package error names the flag and the form its
// value takes, without the ~100 lines of usage (issue 40, item 12).
func TestFlagErrors(t *testing.T) {
	run := []string{"run", "-topo", "hikey-8", "-progress=false"}
	r := func(args ...string) []string { return append(append([]string{}, run...), args...) }
	cases := []h2case{
		{"-l x", r("-workload", "pipe", "-l", "x"), 2, `-l: "x" is not a whole number`},
		{"-epoch 5", r("-epoch", "5"), 2, `-epoch: "5" is not a duration with its unit, such as 500us`},
		{"-l without a value", r("-workload", "pipe", "-l"), 2, "-l: needs a value (allowed: a whole number"},
		{"-seed -1", r("-seed", "-1"), 2, `-seed: "-1" is not a whole number from 0`},
		{"unknown flag", r("-workload", "pipe", "-bogus"), 2, "flag provided but not defined: -bogus (emu run -workload pipe -h lists the flags)"},
		{"merge -base without a value", []string{"merge", "-base"}, 2, "-base: needs a value"},
		{"reproduce -l x", []string{"reproduce", "-l", "x", "host-pipe"}, 2, `-l: "x" is not a number`},
	}
	checkCases(t, cases)
	for _, c := range cases {
		_, _, errs := runEmu(c.args...)
		if n := strings.Count(errs, "\n"); n > 2 || strings.Contains(errs, "usage:") {
			t.Errorf("%s: %d lines of stderr (the usage?):\n%s", c.name, n, errs)
		}
	}
	// -h still prints the usage.
	if code, _, errs := runEmu(r("-workload", "pipe", "-h")...); code != 0 || !strings.Contains(errs, "usage: emu run") {
		t.Errorf("-h: exit %d:\n%s", code, errs)
	}
}

// TestEpochWarning: an -epoch past the machine's lookahead says what it
// costs; the exact epoch says nothing (issue 40, item 12).
func TestEpochWarning(t *testing.T) {
	base := []string{"run", "-topo", "hikey-8", "-progress=false", "-workload", "pipe", "-l", "10"}
	code, _, errs := runEmu(append(base, "-epoch", "1ms")...)
	if code != 0 || !strings.Contains(errs, "warning: -epoch 1ms is 400x hikey-8's lookahead") {
		t.Errorf("-epoch 1ms: exit %d, stderr %q", code, errs)
	}
	if _, _, errs := runEmu(base...); strings.Contains(errs, "warning") {
		t.Errorf("the exact epoch warns: %q", errs)
	}
}

// TestHardening2Specs: issue 40's spec and calibration files (items 2,
// 6, 8 and 12's names): rejected, naming the field, within the bounds.
func TestHardening2Specs(t *testing.T) {
	dir := t.TempDir()
	file := fileIn(t, dir)
	spec := hikeyEdit(t, file)
	hikey, err := hwmodel.PresetSpec("hikey-8")
	if err != nil {
		t.Fatal(err)
	}
	topo := func(path string) []string { return []string{"topo", path} }
	calib := func(name, body string) []string { return []string{"topo", "-calib", file(name, body), "host"} }
	var keys strings.Builder
	for i := range 1_000_000 {
		fmt.Fprintf(&keys, "k%d: 1\n", i)
	}
	var unknown strings.Builder
	for i := range 200 {
		fmt.Fprintf(&unknown, "x%d: 1\n", i)
	}
	var cpus strings.Builder
	cpus.WriteString("cpus:\n")
	for c := range 8192 {
		fmt.Fprintf(&cpus, "  - {cpu: %d, package: 0, core: %d, siblings: \"%d\", llc: \"0-8191\", node: 0}\n", c, c, c)
	}
	layout := string(hikey)[strings.Index(string(hikey), "layout:"):strings.Index(string(hikey), "numa_distance:")]
	json := file("hk.json", hikeyJSON(t, hikey))
	cases := []h2case{
		// 2: NaN, infinities, denormals
		{"freq_mhz .nan", topo(spec("nan.yaml", "freq_mhz: 1200", "freq_mhz: .nan")), 2, "freq_mhz: NaN out of range (allowed: 1 to 10000 MHz)"},
		{"freq_mhz 1e-300", topo(spec("tiny.yaml", "freq_mhz: 1200", "freq_mhz: 1e-300")), 2, "freq_mhz: 1e-300 out of range"},
		{"freq_mhz .inf", topo(spec("inf.yaml", "freq_mhz: 1200", "freq_mhz: .inf")), 2, "freq_mhz: +Inf out of range"},
		{"freq_ref_mhz .nan", topo(spec("refnan.yaml", "freq_mhz: 1200", "freq_mhz: 1200\nfreq_ref_mhz: .nan")), 2, "freq_ref_mhz: NaN out of range"},
		{"latency 1e-300", topo(spec("lat.yaml", "l2: {value: 45,", "l2: {value: 1e-300,")), 2, "latency_ns.l2.value: must be a number from 0.001"},
		{"calib 1e-300", calib("c1.yaml", "host: x\nrmw_local_ns: 1e-300\n"), 2, "rmw_local_ns: must be a number from 0.001"},
		{"calib .inf", calib("c2.yaml", "host: x\npipe_rtt_us: .inf\n"), 2, "pipe_rtt_us: must be a number from 0.001"},
		{"calib host with a newline", calib("c3.yaml", "host: \"a\\nb\"\n"), 2, "host: \"a\\nb\" holds a control character"},
		{"calib trailing text", calib("c4.yaml", "{\"host\": \"x\"} garbage\n"), 2, "text after the end of the document"},
		// 6: decoding bounds
		{"1M keys", topo(file("keys.yaml", "name: x\n"+keys.String())), 2, "(document): line 257: a mapping of more than 256 keys"},
		{"10,000 nested [", topo(spec("nest.yaml", "name: hikey-8", "name: "+strings.Repeat("[", 10000))), 2, "(document): line 6: nested deeper than 16 levels"},
		{"200 unknown keys", topo(file("unknown.yaml", string(hikey)+unknown.String())), 2, "(and 195 more errors)"},
		{"8192 CPUs in one LLC", topo(spec("cpus.yaml", layout, cpus.String())), 2, "latency_ns.llc: required"},
		// 8: floats into integers, trailing text
		{"sockets 2.9", topo(spec("s29.yaml", "sockets: 1", "sockets: 2.9")), 2, "layout.sockets: 2.9 is not a whole number"},
		{"sockets 1.99", topo(spec("s199.yaml", "sockets: 1", "sockets: 1.99")), 2, "layout.sockets: 1.99 is not a whole number"},
		{"hz 250.5", topo(spec("hz.yaml", "hz: 250", "hz: 250.5")), 2, "hz: 250.5 is not a whole number"},
		{"numa_distance 10.5", topo(spec("slit.yaml", "- [10]", "- [10.5]")), 2, "numa_distance[0][0]: 10.5 is not a whole number"},
		{"JSON with trailing text", topo(file("trail.json", mustRead(t, json)+" garbage")), 2, "text after the end of the document"},
		{"JSON with a second brace", topo(file("brace.json", mustRead(t, json)+"}")), 2, "text after the end of the document"},
		// 12: control characters in names
		{"spec name with a newline", topo(spec("nl.yaml", "name: hikey-8", `name: "hikey\n8"`)), 2, `name: "hikey\n8" holds a control character`},
	}
	checkCases(t, cases)
	// The JSON spec itself is accepted.
	if code, _, errs := runEmu("topo", json); code != 0 {
		t.Errorf("the hikey-8 spec as JSON: exit %d: %s", code, errs)
	}
	// Errors are capped: at most maxErrorLines lines and the count.
	if _, _, errs := runEmu(topo(file("unknown2.yaml", string(hikey)+unknown.String()))...); strings.Count(errs, "\n") > 8 {
		t.Errorf("200 unknown keys print %d lines:\n%s", strings.Count(errs, "\n"), errs)
	}
}

// hikeyJSON is the hikey-8 spec as one JSON object.
func hikeyJSON(t *testing.T, spec []byte) string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(spec, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHardening2Sweep: sweep and calibrate check their grid and outputs
// before anything runs (issue 40, item 9), and sweep's progress counts
// the records written (item 11).
func TestHardening2Sweep(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.ndjson")
	if err := os.WriteFile(ro, nil, 0o444); err != nil {
		t.Fatal(err)
	}
	var many []string
	for i := 1; i <= 100; i++ {
		many = append(many, fmt.Sprint(i))
	}
	list := strings.Join(many, ",")
	huge := []string{"-seeds", "1000", "-workload", "hackbench", "-g", list, "-l", list}
	sweep := func(args ...string) []string { return append([]string{"sweep", "-topo", "hikey-8"}, args...) }
	cases := []h2case{
		{"sweep -o read-only", sweep("-o", ro, "-workload", "pipe", "-l", "10"), 2, "-o: " + ro + " is read-only"},
		{"sweep -o in a file", sweep("-o", filepath.Join(ro, "x")+"/", "-workload", "pipe", "-l", "10"), 2, "-o: " + ro + " is not a directory"},
		{"sweep -print bad value", sweep("-print", "-workload", "pipe", "-l", "10,-5"), 2, "sweep: the point -l=-5 on hikey-8: -l: "},
		{"sweep bad topo", sweep("-print", "-topo", "hikey-8,nosuch", "-workload", "pipe", "-l", "10"), 2, "nosuch"},
		{"sweep bad features", sweep("-print", "-features", "v6.6-eevdf|+NOPE", "-workload", "pipe", "-l", "10"), 2, "-features: "},
		{"sweep -print 10M points", sweep(append([]string{"-print"}, huge...)...), 2, "sweep: the grid has 10000000 points, more than the 100000 allowed"},
		{"calibrate -o in a missing dir", []string{"calibrate", "-quick", "-o", filepath.Join(dir, "no", "such", "c.yaml")}, 2, "-o: cannot write"},
	}
	checkCases(t, cases)
	if _, err := os.Stat(ro); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ro); len(b) != 0 {
		t.Errorf("the read-only -o was appended to: %d bytes", len(b))
	}
	t0 := time.Now()
	code, out, errs := runEmu(sweep(append([]string{"-count"}, huge...)...)...)
	if code != 0 || strings.TrimSpace(out) != "10000000" || time.Since(t0) > 10*time.Second && !raceEnabled {
		t.Errorf("sweep -count of a 10M grid: exit %d in %v: %q %q", code, time.Since(t0), out, errs)
	}
	// An interrupted sweep wrote no record: its progress says so.
	interruptAtOnce(t)
	code, _, errs = runEmu(sweep("-o", filepath.Join(dir, "int.ndjson"), "-workload", "pipe", "-l", "10,20")...)
	if code != 130 || !strings.Contains(errs, "0/2 written") {
		t.Errorf("interrupted sweep: exit %d, progress %q", code, errs)
	}
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
