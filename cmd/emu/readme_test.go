package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// -readme runs the README's commands (quick: at the scales of
// readmeOverrides; full: as written, the measurement behind the README's
// time estimates). Without it, TestREADMEExamples only extracts them and
// checks that every command is run, scaled or listed as not run here.
var readmeMode = flag.String("readme", "", "TestREADMEExamples: run the README's and -h's commands: quick or full")

// example is one command of the README (or of a subcommand's -h), with
// the output shown under it ("$ cmd" blocks), if any.
type example struct {
	where  string // README.md:LINE or "emu CMD -h"
	cmd    string
	sample []string
}

// override says what the test does with the commands containing match:
// runs them with each rewrite applied (the README says they are long), or
// not at all (skip: why, e.g. a tool absent here).
type override struct {
	match   string
	rewrite [][2]string
	skip    string
	// full: the rewrite applies in -readme=full too (a placeholder).
	full bool
}

// readmeOverrides is the documented table of what is scaled or not run.
// Every entry must match a command (a stale entry fails the test).
var readmeOverrides = []override{
	// Not commands, or not runnable from a test.
	{match: "emu run [-topo NAME|FILE]", skip: "a synopsis, not a command"},
	{match: "./scripts/test", skip: "the test command itself: .ci/run runs it"},
	{match: "./scripts/fuzz 10m", skip: "the nightly fuzz length: scripts/test runs scripts/fuzz 10s"},
	{match: "$EDITOR", skip: "an interactive editor"},
	{match: "benchstat@latest", skip: "fetches golang.org/x/perf from the network (not in go.mod)"},
	{match: "emu reproduce -quick all", skip: ".ci/run runs it (reproduce -quick -j 2 all)", full: true},
	{match: "reproduce -fit host-pipe", skip: "fits to this machine's probes and refuses (exit 1) when another load makes them too noisy; .ci/run's reproduce -quick all runs host-pipe without -fit", full: true},
	// Placeholders.
	{match: "GRID...", rewrite: [][2]string{{"GRID...", "-topo hikey-8 -workload pipe -l 100,200"}}, full: true},
	{match: "my-load.json", rewrite: [][2]string{{"my-load.json", "bench/testdata/rtapp/example.json"}}, full: true},
	{match: "--sshloginfile hosts", rewrite: [][2]string{{" --sshloginfile hosts", ""}}, full: true},
	{match: "&& sbatch sweep.sbatch", rewrite: [][2]string{{"&& sbatch sweep.sbatch", "&& grep -q '^#SBATCH --time' sweep.sbatch"}}, full: true},
	// A busy machine's probes are noisy (calibrate refuses past -max-spread,
	// exit 1): the test takes any spread, at -quick.
	{match: "emu calibrate", rewrite: [][2]string{{"emu calibrate", "emu calibrate -quick -max-spread 1000 -settle 0"}}},
	// Long at the README's scale: shorter here.
	{match: "reproduce tgload-udprr", rewrite: [][2]string{{"tgload-udprr", "-quick -l 0.0005 tgload-udprr"}}},
	{match: "reproduce -j 2 tgload-udprr", rewrite: [][2]string{{"tgload-udprr", "-quick -l 0.0005 tgload-udprr"}}},
	{match: "-o udprr.ndjson tgload-udprr", rewrite: [][2]string{{"-seeds 3", "-seeds 2"}, {"tgload-udprr", "-quick -l 0.0005 tgload-udprr"}}},
	{match: "reproduce -j 2 tgload-hackbench", skip: ".ci/run runs tgload-hackbench at -quick (reproduce -quick -j 2 all); -j 2 is run above with tgload-udprr"},
	{match: "-o udprr.ndjson tgload-hackbench", skip: ".ci/run runs tgload-hackbench at -quick; -seeds and -o are run above with tgload-udprr"},
	{match: "fit -family epyc -rounds 1", rewrite: [][2]string{{"-rounds 1", "-rounds 1 -vary latency_ns.smt_yield=0.62"}}},
	{match: "fit -family icl -vary", rewrite: [][2]string{{"=0.5,0.6,0.7", "=0.6"}}},
	{match: "fit -j 2 -family spr", skip: "a whole family's fit, tens of minutes: the fit's tests run a tiny one, and the epyc and icl examples one candidate each"},
	{match: "-family spr -check", skip: "a whole family's fit, tens of minutes: the fit's tests run a tiny one"},
	{match: "reproduce -j 2 lkp-base", skip: "lkp-base runs every calibration study too: .ci/run's reproduce -quick -j 2 all runs them"},
	{match: "-sched tg_load_avg_ratelimit_ns=500000,1000000,4000000 -seeds 3", rewrite: [][2]string{{"-seeds 3", "-seeds 1"}, {"-l 100", "-l 5"}, {"-g 8", "-g 2"}}},
	{match: "-nr 25%,50%,75%,100% -l 0.005", rewrite: [][2]string{{"-seeds 3", "-seeds 2"}, {"-l 0.005", "-l 0.0002"}}},
	{match: "-nr 25%,50%,75%,100% -l 0.002", rewrite: [][2]string{{"-seeds 3", "-seeds 2"}, {"-l 0.002", "-l 0.0002"}}},
	{match: "-workload schbench -m 2 -t 4 -r 10", rewrite: [][2]string{{"-r 10", "-r 1"}}},
	{match: "-workload schbench -m 2 -t 4 -r 2", rewrite: [][2]string{{"-r 2", "-r 1"}}},
	{match: `GRID="-topo spr-2s,epyc-9654-2s`, rewrite: [][2]string{{"-seeds 5", "-seeds 1"}, {"-g 8,16,32", "-g 1,2"}, {"-l 600", "-l 10"}}},
	{match: "-g 8 -f 20 --threads --pipe -l 1000", rewrite: [][2]string{{"-l 1000", "-l 50"}}},
	{match: "-g 32 -f 20 -T -p -l 200", rewrite: [][2]string{{"-l 200", "-l 10"}}},
	{match: "-topo icl-2s -sched base_slice_ns=2800000 -workload hackbench -g 8 -l 100", rewrite: [][2]string{{"-l 100", "-l 20"}}},
	{match: "-workload hackbench -g 28 -f 20 -T -l 50", rewrite: [][2]string{{"-l 50", "-l 5"}}},
	{match: "-topo icl-2s -workload hackbench -g 8 -l 100", rewrite: [][2]string{{"-l 100", "-l 10"}}},
	{match: "-workload pipe -l 200000", rewrite: [][2]string{{"-l 200000", "-l 2000"}}},
	{match: "-nr 100% -l 0.02 -cgroup docker", rewrite: [][2]string{{"-seeds 3", "-seeds 2"}, {"-l 0.02", "-l 0.001"}}},
	{match: "-nr 100% -l 0.05 -cgroup docker", rewrite: [][2]string{{"-l 0.05", "-l 0.002"}}},
	{match: "--time=0.05 --report-interval=0.01", rewrite: [][2]string{{"--time=0.05 --report-interval=0.01", "--time=0.004 --report-interval=0.002"}}},
	{match: "--nanosleep 224 -t 0.02", rewrite: [][2]string{{"-t 0.02", "-t 0.002"}}},
	{match: "-workload hopper -n 50 -d 500", rewrite: [][2]string{{"-d 500", "-d 50"}}},
	{match: "go test -run '^$' -bench . ", rewrite: [][2]string{{"-bench . ./bench/ ./contention/ ./emu/... ./hwmodel/", "-bench . -benchtime 1x ./contention/ ./hwmodel/"}}},
	{match: "-bench NetperfUDPRR -count 5", rewrite: [][2]string{{"-count 5", "-count 1 -benchtime 1x"}}},
}

// TestREADMEExamples: every command of the README's code blocks, of the
// workload table's example column and of each subcommand's -h examples
// is run (go run ./cmd/emu and emu are one binary built first), in a
// scratch directory holding links to the tree, in order (later commands
// read earlier ones' files); a command fails the test when it exits
// non-zero, and a "$ command" block's sample when the output no longer
// has its lines (the same words, numbers within readmeTolerance). Each
// command's host time is logged: the README's time estimates are these.
func TestREADMEExamples(t *testing.T) {
	exs := readmeExamples(t)
	// A -h example the README has too (go run ./cmd/emu is emu) runs once.
	inREADME := map[string]bool{}
	for _, ex := range exs {
		inREADME[strings.ReplaceAll(ex.cmd, "go run ./cmd/emu", "emu")] = true
	}
	for _, ex := range helpExamples(t) {
		if !inREADME[ex.cmd] {
			exs = append(exs, ex)
		}
	}
	used := make([]bool, len(readmeOverrides))
	for i := range exs {
		for j, o := range readmeOverrides {
			if strings.Contains(exs[i].cmd, o.match) {
				used[j] = true
			}
		}
	}
	for j, u := range used {
		if !u {
			t.Errorf("readmeOverrides[%d] (%q) matches no command of the README or -h: remove or update it", j, readmeOverrides[j].match)
		}
	}
	if len(exs) < 40 {
		t.Fatalf("only %d commands extracted from the README and -h", len(exs))
	}
	if *readmeMode == "" {
		t.Skipf("%d commands extracted; -readme=quick or -readme=full runs them", len(exs))
	}
	if *readmeMode != "quick" && *readmeMode != "full" {
		t.Fatalf("-readme: %q (allowed: quick, full)", *readmeMode)
	}
	dir := scratchTree(t)
	var report strings.Builder
	var total time.Duration
	for _, ex := range exs {
		cmd, skip := applyOverrides(ex.cmd, *readmeMode == "full")
		if skip != "" {
			fmt.Fprintf(&report, "  not run  %-70.70s  %s: %s\n", ex.cmd, ex.where, skip)
			continue
		}
		start := time.Now()
		out, err := runShell(dir, cmd)
		el := time.Since(start)
		total += el
		scaled := "as written"
		if cmd != ex.cmd {
			scaled = "scaled: " + cmd
		}
		fmt.Fprintf(&report, "  %6.1fs  %-70.70s  %s (%s)\n", el.Seconds(), ex.cmd, ex.where, scaled)
		t.Logf("%6.1fs  %s", el.Seconds(), cmd) // as it goes, under -v
		if err != nil {
			t.Errorf("%s: %s: %v\n%s", ex.where, cmd, err, tail(out, 30))
			continue
		}
		if len(ex.sample) > 0 {
			if msg := matchSample(ex.sample, out); msg != "" {
				t.Errorf("%s: %s: the README's sample no longer matches the output: %s\noutput:\n%s", ex.where, cmd, msg, out)
			}
		}
	}
	t.Logf("README commands (-readme=%s), host time each, %.0f s in all:\n%s", *readmeMode, total.Seconds(), report.String())
}

// readmeExamples extracts the commands of README.md's indented code
// blocks (with their continuation lines, comments dropped) and of the
// workload table's example column.
func readmeExamples(t *testing.T) []example {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var exs []example
	tableEx := regexp.MustCompile("^\\| `[a-z-]+` \\|.*\\| `(emu run [^`]*)` \\|$")
	for i := 0; i < len(lines); i++ {
		if m := tableEx.FindStringSubmatch(lines[i]); m != nil {
			exs = append(exs, example{where: fmt.Sprintf("README.md:%d", i+1), cmd: m[1]})
			continue
		}
		if !strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == "" {
			continue
		}
		// A code block: up to the next line that is neither indented nor
		// blank-then-indented.
		start := i
		var block []string
		for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ")); i++ {
			block = append(block, strings.TrimPrefix(lines[i], "    "))
		}
		exs = append(exs, blockExamples(block, start)...)
	}
	return exs
}

// blockExamples splits a code block into commands: a "$ cmd" block is one
// command and its sample output; otherwise every line not a comment, with
// a trailing backslash joining the next. A shell variable set in the
// block (GRID="...") goes before each later command of the block.
func blockExamples(block []string, start int) []example {
	var exs []example
	prelude := ""
	for j := 0; j < len(block); j++ {
		line := block[j]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		where := fmt.Sprintf("README.md:%d", start+j+1)
		cmd := stripComment(line)
		dollar := strings.HasPrefix(cmd, "$ ")
		cmd = strings.TrimPrefix(cmd, "$ ")
		for strings.HasSuffix(cmd, "\\") && j+1 < len(block) {
			j++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(stripComment(block[j]))
		}
		cmd = strings.Join(strings.Fields(cmd), " ")
		if assign.MatchString(cmd) {
			prelude += cmd + "; "
			continue
		}
		ex := example{where: where, cmd: prelude + cmd}
		if dollar {
			ex.sample = block[j+1:]
			j = len(block)
		}
		exs = append(exs, ex)
	}
	return exs
}

var assign = regexp.MustCompile(`^[A-Z_]+=("[^"]*"|'[^']*'|[^ ]*)$`)

// stripComment drops a shell comment ("  # ...") outside quotes.
func stripComment(line string) string {
	q := byte(0)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q == 0 && c == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimRight(line[:i], " ")
		}
	}
	return strings.TrimRight(line, " ")
}

// helpExamples are the "examples:" of every subcommand's -h, once each.
func helpExamples(t *testing.T) []example {
	seen := map[string]bool{}
	var exs []example
	for _, c := range commands {
		_, _, errs := runEmu(c.name, "-h")
		lines := strings.Split(errs, "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "examples:" {
				continue
			}
			var block []string
			for i++; i < len(lines) && strings.HasPrefix(lines[i], "  ") && !strings.HasPrefix(lines[i], "  -"); i++ {
				block = append(block, strings.TrimPrefix(lines[i], "  "))
			}
			for _, ex := range blockExamples(block, 0) {
				if !seen[ex.cmd] {
					seen[ex.cmd] = true
					ex.where = "emu " + c.name + " -h"
					exs = append(exs, ex)
				}
			}
		}
	}
	return exs
}

// applyOverrides rewrites cmd by every entry that matches it, or says
// why it is not run; full keeps the scale as written (only placeholders
// are replaced).
func applyOverrides(cmd string, full bool) (string, string) {
	if strings.Contains(cmd, "LKP_SRC=") && os.Getenv("LKP_SRC") == "" {
		return "", "needs an lkp-tests checkout in LKP_SRC (.ci/run fetches one)"
	}
	out := cmd
	for _, o := range readmeOverrides {
		if !strings.Contains(cmd, o.match) || full && !o.full {
			continue
		}
		if o.skip != "" {
			return "", o.skip
		}
		for _, r := range o.rewrite {
			out = strings.ReplaceAll(out, r[0], r[1])
		}
	}
	return out, ""
}

// scratchTree is a directory with a link to each top-level entry of the
// tree (so commands read bench/testdata, run scripts/, build ./cmd/emu)
// and bin/emu built once; its own files (out/, *.ndjson) stay in it.
func scratchTree(t *testing.T) string {
	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "bin" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "emu"), "./cmd/emu")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// runShell runs cmd with bash in dir, emu on PATH and "go run ./cmd/emu"
// meaning that binary (built once, so that the times are the runs').
func runShell(dir, cmd string) (string, error) {
	cmd = strings.ReplaceAll(cmd, "go run ./cmd/emu", "emu")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"), "PWD="+dir)
	var out bytes.Buffer
	c.Stdout = &out
	c.Stderr = &out
	err := c.Run()
	return out.String(), err
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// readmeTolerance is how far a sample's number may be from the output's:
// relative, or absolute for numbers near 0 (percentage points).
const readmeTolerance = 0.25

var numField = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?%?$`)

// matchSample finds the sample's lines in the output in order ("..."
// stands for lines left out): the same fields, words equal, numbers
// within readmeTolerance. It returns "" or what did not match.
func matchSample(sample []string, out string) string {
	got := strings.Split(out, "\n")
	k := 0
	for _, want := range sample {
		if strings.TrimSpace(want) == "" || strings.TrimSpace(want) == "..." {
			continue
		}
		found := false
		for ; k < len(got); k++ {
			if sameShape(want, got[k]) {
				found, k = true, k+1
				break
			}
		}
		if !found {
			return fmt.Sprintf("no line like %q (in order)", strings.TrimSpace(want))
		}
	}
	return ""
}

// sameShape: the same fields, words equal, numbers within tolerance.
func sameShape(want, got string) bool {
	wf, gf := strings.Fields(want), strings.Fields(got)
	if len(wf) != len(gf) {
		return false
	}
	for i := range wf {
		if !numField.MatchString(wf[i]) || !numField.MatchString(gf[i]) {
			if wf[i] != gf[i] {
				return false
			}
			continue
		}
		w, _ := strconv.ParseFloat(strings.TrimSuffix(wf[i], "%"), 64)
		g, _ := strconv.ParseFloat(strings.TrimSuffix(gf[i], "%"), 64)
		if d := w - g; d > 1 || d < -1 {
			if d/max(w, -w, g, -g) > readmeTolerance || d/max(w, -w, g, -g) < -readmeTolerance {
				return false
			}
		}
	}
	return true
}

// TestMatchSample: a README sample matches output of its shape (lines
// in order, "..." skipping, numbers within readmeTolerance) and fails on
// a moved number, a changed word or a missing line.
func TestMatchSample(t *testing.T) {
	sample := []string{"header: x", "   1889333 ±  2%    +252.8%    6666333        netperf.Throughput_total_tps", "    ...", "     26.64           -24.8        1.86        perf-profile.self.cycles-pp.update_cfs_group"}
	out := "header: x\n   1900000 ±  3%    +250.0%    6700000        netperf.Throughput_total_tps\nother\n     27.00           -25.0        2.00        perf-profile.self.cycles-pp.update_cfs_group\n"
	if msg := matchSample(sample, out); msg != "" {
		t.Errorf("a matching output: %s", msg)
	}
	for name, bad := range map[string]string{
		"moved number": strings.Replace(out, "6700000", "9000000", 1),
		"changed word": strings.Replace(out, "update_cfs_group", "update_load_avg", 1),
		"missing line": strings.Replace(out, "header: x\n", "", 1),
		"extra field":  strings.Replace(out, "+250.0%", "+250.0% ± 5%", 1),
	} {
		if matchSample(sample, bad) == "" {
			t.Errorf("%s: matched", name)
		}
	}
}
