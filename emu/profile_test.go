package emu

import (
	"bufio"
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// lkpPerfProfile is lkp-tests' programs/perf-profile/parse, in Go: the
// first line must be perf report --header's "# ========", the event comes
// from the "# Samples: N of event 'E'" line (':' -> '-'), and each
// "children% self% dso [k] symbol" row adds children.E.SYM and self.E.SYM,
// and each folded call chain "P% a;b;c" adds calltrace.E.a.b.c (its first
// five functions).
func lkpPerfProfile(t *testing.T, out string) map[string]float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	if !sc.Scan() || !regexp.MustCompile(`^# ========$| --header`).MatchString(sc.Text()) {
		t.Fatalf("first line %q: lkp's parser exits", sc.Text())
	}
	samples := regexp.MustCompile(`^# Samples: \d+[KMG ] of event `)
	row := regexp.MustCompile(`^\s*(\d+\.\d+)%\s+(\d+\.\d+)%\s+\S+\s+\S+\s+(\S+)(\s+\S+\s+\S+)?\s*$`)
	folded := regexp.MustCompile(`^(\d+\.\d+)%\s+(\S+)$`)
	event := ""
	for sc.Scan() {
		if loc := samples.FindStringIndex(sc.Text()); loc != nil {
			event = strings.NewReplacer(":", "-", "'", "").Replace(sc.Text()[loc[1]:])
			break
		}
	}
	res := map[string]float64{}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil {
			c, _ := strconv.ParseFloat(m[1], 64)
			s, _ := strconv.ParseFloat(m[2], 64)
			res["children."+event+"."+m[3]] += c
			res["self."+event+"."+m[3]] += s
		} else if m := folded.FindStringSubmatch(line); m != nil {
			p, _ := strconv.ParseFloat(m[1], 64)
			fns := strings.Split(m[2], ";")
			res["calltrace."+event+"."+strings.Join(fns[:min(5, len(fns))], ".")] += p
		}
	}
	return res
}

// lkp's perf-profile parser reads every row of -profile, under
// perf-profile.self.cycles-pp.SYMBOL as lkp names it.
func TestProfileLKPParse(t *testing.T) {
	s := traceSim(t, "serial")
	var b bytes.Buffer
	if err := s.WriteProfile(&b, nil, "test"); err != nil {
		t.Fatal(err)
	}
	got := lkpPerfProfile(t, b.String())
	prof := s.Profile(nil)
	event, _ := s.profileEvent(nil)
	key := strings.ReplaceAll(event, ":", "-")
	for _, e := range prof {
		if v := got["self."+key+"."+e.Symbol]; math.Abs(v-e.Percent) > 0.005 {
			t.Errorf("self.%s.%s = %v, profile %.4f", key, e.Symbol, v, e.Percent)
		}
		if c := got["children."+key+"."+e.Symbol]; c < got["self."+key+"."+e.Symbol] {
			t.Errorf("children.%s.%s = %v < self", key, e.Symbol, c)
		}
	}
	// The call chains: a caller's Children exceed its Self (the callees'
	// time), and lkp reads calltrace keys from the folded chains.
	if c, sf := got["children."+key+".__schedule"], got["self."+key+".__schedule"]; c <= sf {
		t.Errorf("__schedule: children %v, self %v: no callee time", c, sf)
	}
	nTrace := 0
	for k := range got {
		if strings.HasPrefix(k, "calltrace."+key+".") {
			nTrace++
		}
	}
	if nTrace == 0 {
		t.Errorf("no calltrace keys:\n%s", b.String())
	}
	// A per-CPU table names its own event, so the parser keeps it apart
	// from the whole machine's (it summed them: do_idle 246.84%).
	b.Reset()
	if err := s.WriteProfile(&b, []int{3}, "CPU 3"); err != nil {
		t.Fatal(err)
	}
	for k := range lkpPerfProfile(t, b.String()) {
		if !strings.Contains(k, "."+key+"-cpu3.") {
			t.Fatalf("CPU 3's table gives lkp key %s, want the event %s-cpu3", k, key)
		}
	}
}

// The sampled event follows the PMU: cycles:pp (precise) on the x86
// servers, plain cycles on a Cortex-A53, which has no precise sampling;
// idle's exit is in the vendor's idle driver.
func TestProfileEventAndIdle(t *testing.T) {
	for _, c := range []struct{ topo, event, idle string }{
		{"hikey-8", "cycles", "cpu_do_idle"},
		{"spr-2s", "cycles:pp", "intel_idle"},
		{"epyc-9654-2s", "cycles:pp", "acpi_idle_do_entry"},
	} {
		m, err := hwmodel.Load(c.topo, hwmodel.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Config{Machine: m, Seed: 1, Driver: "serial"})
		if err != nil {
			t.Fatal(err)
		}
		if ev, _ := s.profileEvent(nil); ev != c.event {
			t.Errorf("%s: event %q, want %q", c.topo, ev, c.event)
		}
		if ev, _ := s.profileEvent([]int{0, 5}); ev != c.event+"-cpu0_5" {
			t.Errorf("%s: CPUs 0 and 5's event %q, want %q", c.topo, ev, c.event+"-cpu0_5")
		}
		if n := s.symbolName(SymIdleExit); n != c.idle {
			t.Errorf("%s: idle exit in %q, want %q", c.topo, n, c.idle)
		}
	}
}

// Symbol names follow the architecture, the kernel version and the
// workload's sockets.
func TestProfileSymbolNames(t *testing.T) {
	arm := newSim(t, "hikey-8", "v6.6-eevdf")
	x86 := newSim(t, "spr-2s", "v5.15-cfs")
	for _, c := range []struct {
		s    *Sim
		sym  Symbol
		want string
	}{
		{arm, SymSyscall, "el0_svc"}, {arm, SymIPIHandler, "do_handle_IPI"}, {arm, SymSendIPI, "gic_ipi_send_mask"},
		{x86, SymSyscall, "entry_SYSCALL_64"}, {x86, SymIPIHandler, "sysvec_call_function_single"},
		{x86, SymLoadBalance, "load_balance"}, {x86, SymNewidleBalance, "newidle_balance"},
		{x86, SymUpdateBlockedAverages, "update_blocked_averages"}, {arm, SymSchedTick, "scheduler_tick"},
		{x86, SymSockSend, "udp_sendmsg"},
	} {
		if got := c.s.symbolName(c.sym); got != c.want {
			t.Errorf("%s: symbol %d is %q, want %q", c.s.m.Name, c.sym, got, c.want)
		}
	}
	if err := x86.SetSocketFamily("unix"); err != nil {
		t.Fatal(err)
	}
	if got := x86.symbolName(SymSockRecv); got != "unix_stream_recvmsg" {
		t.Errorf("AF_UNIX receive is %q", got)
	}
	if err := x86.SetSocketFamily("sctp"); err == nil {
		t.Error("unknown socket family accepted")
	}
}

// -taskstats is /proc/<pid>/sched: a "comm (pid, #threads: 1)" title, a
// rule, and "key : value" lines, times in ms with 6 decimals.
func TestTaskStatsProcSched(t *testing.T) {
	s := traceSim(t, "serial")
	var b bytes.Buffer
	if err := s.WriteTaskStats(&b); err != nil {
		t.Fatal(err)
	}
	title := regexp.MustCompile(`^\S+ \((\d+), #threads: 1\)$`)
	// Keys as debug.c names them: "effective uclamp.min", "clock-delta",
	// "mm->numa_scan_seq"; sched_show_numa()'s current_node line.
	kv := regexp.MustCompile(`^([a-z_.>-]+( [a-z_.]+)?)\s+:\s+(-?\d+(\.\d{6})?)$`)
	numa := regexp.MustCompile(`^current_node=\d+, numa_group_id=\d+$`)
	blocks := 0
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for i, l := range lines {
		switch {
		case title.MatchString(l):
			blocks++
			if lines[i+1] != strings.Repeat("-", 67) {
				t.Fatalf("no rule after %q", l)
			}
		case l == strings.Repeat("-", 67), numa.MatchString(l):
		case kv.MatchString(l):
			if len(l) != 67 {
				t.Errorf("%q: %d columns, want 67 (%%-45s:%%21Ld)", l, len(l))
			}
		default:
			t.Fatalf("line %q is not /proc/<pid>/sched's", l)
		}
	}
	if blocks != len(s.tasks) {
		t.Errorf("%d blocks, %d tasks", blocks, len(s.tasks))
	}
	if !strings.Contains(b.String(), "\nse.sum_exec_runtime                          :") {
		t.Error("no se.sum_exec_runtime line")
	}
}
