package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// traceLine is one event as a trace reader prints it.
type traceLine struct {
	comm  string // the context's task (as saved_cmdlines names it)
	pid   int
	cpu   int
	flags string // irqs-off, need-resched, hardirq/softirq, preempt, migrate
	ts    string
	event string
	args  string
}

var (
	// trace-cmd report -N -l: "comm-pid  CPUflags  ts: event:   args"
	reportLine = regexp.MustCompile(`^\s*(.+)-(\d+)\s+(\d+)(\S{5})\s+(\d+\.\d+): (\w+):\s+(.*)$`)
	// tracefs trace text: "comm-pid  [CPU] flags  ts: event: args"
	ftraceLine = regexp.MustCompile(`^\s*(.+)-(\d+)\s+\[(\d+)\] (\S{5})\s+(\d+\.\d+): (\w+): (.*)$`)
)

func parseTraceLines(t *testing.T, text string, re *regexp.Regexp) []traceLine {
	t.Helper()
	var out []traceLine
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "cpus=") || strings.TrimSpace(line) == "" {
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsed trace line %q", line)
		}
		pid, _ := strconv.Atoi(m[2])
		cpu, _ := strconv.Atoi(m[3])
		out = append(out, traceLine{comm: m[1], pid: pid, cpu: cpu, flags: m[4], ts: m[5], event: m[6], args: strings.TrimSpace(m[7])})
	}
	return out
}

// fieldsOf splits "k=v k=v ==> k=v" into a map.
func fieldsOf(args string) map[string]string {
	f := map[string]string{}
	for _, kv := range strings.Fields(args) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			f[k] = v
		}
	}
	return f
}

// checkSwitchChain checks that every sched_switch's prev is the task the
// CPU's previous sched_switch switched in, and that each event's context
// on a CPU is the task last switched in there. It returns the number of
// sched_switch events.
func checkSwitchChain(t *testing.T, lines []traceLine) int {
	t.Helper()
	type cur struct{ comm, pid string }
	last := map[int]cur{}
	n := 0
	for _, l := range lines {
		if l.event != "sched_switch" {
			continue
		}
		n++
		f := fieldsOf(l.args)
		if c, ok := last[l.cpu]; ok && (c.comm != f["prev_comm"] || c.pid != f["prev_pid"]) {
			t.Errorf("CPU %d at %s: switch from %s:%s, but %s:%s was switched in last", l.cpu, l.ts, f["prev_comm"], f["prev_pid"], c.comm, c.pid)
		}
		if strconv.Itoa(l.pid) != f["prev_pid"] {
			t.Errorf("CPU %d at %s: sched_switch logged in pid %d's context, prev is %s", l.cpu, l.ts, l.pid, f["prev_pid"])
		}
		last[l.cpu] = cur{f["next_comm"], f["next_pid"]}
	}
	return n
}

// The -trace FILE.dat file is a trace.dat that trace-cmd reads: the same
// events, fields, contexts and flags as the text form of the same run,
// and a consistent switch chain on every CPU.
func TestTraceCmdReport(t *testing.T) {
	tc, err := exec.LookPath("trace-cmd")
	if err != nil {
		t.Skip("trace-cmd not installed (apt-get install trace-cmd)")
	}
	dir := t.TempDir()
	dat, txt := filepath.Join(dir, "run.dat"), filepath.Join(dir, "run.txt")
	for _, f := range []string{dat, txt} {
		code, _, errs := runEmu("run", "-topo", "hikey-8", "-workload", "hackbench", "-g", "2", "-f", "4", "-l", "200",
			"-seed", "5", "-trace", f, "-progress=false")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
	}
	out, err := exec.Command(tc, "report", "-N", "-l", dat).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%s", err, out)
	}
	got := parseTraceLines(t, string(out), reportLine)
	// trace-cmd dump --clock says "No tracing clock saved in the file"
	// without the TRACECLOCK option; report --uname prints UNAME.
	if d, err := exec.Command(tc, "dump", "--clock", "-i", dat).CombinedOutput(); err != nil || !strings.Contains(string(d), "[local]") {
		t.Errorf("trace-cmd dump --clock: %v\n%s", err, d)
	}
	if u, err := exec.Command(tc, "report", "--uname", dat).CombinedOutput(); err != nil || !strings.Contains(string(u), "Linux hikey-8 6.6.0 aarch64") {
		t.Errorf("trace-cmd report --uname: %v\n%s", err, u)
	}
	b, err := os.ReadFile(txt)
	if err != nil {
		t.Fatal(err)
	}
	want := parseTraceLines(t, string(b), ftraceLine)
	m := regexp.MustCompile(`entries-in-buffer/entries-written: (\d+)/`).FindSubmatch(b)
	if m == nil || string(m[1]) != strconv.Itoa(len(want)) {
		t.Errorf("text header %q, %d lines", m, len(want))
	}
	if len(got) != len(want) || len(got) < 100 {
		t.Fatalf("trace-cmd report shows %d events, the text trace %d", len(got), len(want))
	}
	// Per CPU, the same events in the same order (the merge across CPUs
	// at equal timestamps may differ).
	perCPU := func(ls []traceLine) map[int][]traceLine {
		m := map[int][]traceLine{}
		for _, l := range ls {
			m[l.cpu] = append(m[l.cpu], l)
		}
		return m
	}
	g, w := perCPU(got), perCPU(want)
	for cpu, wl := range w {
		for i, l := range wl {
			l.comm = l.comm[:min(len(l.comm), 8)] // -l prints the context's comm as %8.8s
			if i >= len(g[cpu]) || g[cpu][i] != l {
				t.Fatalf("CPU %d event %d: trace-cmd shows %+v, the text %+v", cpu, i, g[cpu][i], l)
			}
		}
	}
	counts := map[string]int{}
	for _, l := range got {
		counts[l.event]++
	}
	for _, ev := range []string{"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new"} {
		if counts[ev] == 0 {
			t.Errorf("no %s events: %v", ev, counts)
		}
	}
	if n := checkSwitchChain(t, got); n != counts["sched_switch"] {
		t.Errorf("switch count %d vs %d", n, counts["sched_switch"])
	}
}
