package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

// An independent reader of the ftrace text emu writes: it knows the
// tracepoints' print formats and the kernel's rules for them, not the
// model.

var trLine = regexp.MustCompile(`^\s*(.+)-(\d+)\s+\[(\d+)\] (\S{5})\s+(\d+)\.(\d{6}): (\w+): (.*)$`)

// trEvent is one parsed line.
type trEvent struct {
	line      string
	comm      string
	flags     string // irqs-off, need-resched, hardirq/softirq, preempt depth, migrate-disable
	pid, cpu  int
	us        int64 // timestamp, µs
	event     string
	f         map[string]string
	prevState string
}

func parseTrace(t *testing.T, text string) []trEvent {
	t.Helper()
	var out []trEvent
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		m := trLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsed trace line %q", line)
		}
		e := trEvent{line: line, comm: m[1], flags: m[4], event: m[7], f: map[string]string{}}
		e.pid, _ = strconv.Atoi(m[2])
		e.cpu, _ = strconv.Atoi(m[3])
		sec, _ := strconv.ParseInt(m[5], 10, 64)
		frac, _ := strconv.ParseInt(m[6], 10, 64)
		e.us = sec*1e6 + frac
		args := m[8]
		if e.event == "sched_switch" {
			// prev_state may be "R+": keep it whole.
			if i := strings.Index(args, "prev_state="); i >= 0 {
				e.prevState = strings.Fields(args[i+len("prev_state="):])[0]
			}
		}
		for _, kv := range strings.Fields(args) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				e.f[k] = v
			}
		}
		out = append(out, e)
	}
	return out
}

func (e *trEvent) int(t *testing.T, k string) int {
	v, err := strconv.Atoi(e.f[k])
	if err != nil {
		t.Fatalf("%q: field %s: %v", e.line, k, err)
	}
	return v
}

// Task states the checker tracks from the events alone.
type trState uint8

const (
	stUnknown  trState = iota // not seen yet (its fork before the window)
	stQueued                  // runnable, not running: woken, new or preempted
	stRunning                 // switched in on cpu
	stSleeping                // switched out with prev_state S
	stDead                    // switched out with X or Z
)

type trTask struct {
	state    trState
	cpu      int   // task_cpu() as the events show it, -1: unknown
	waking   bool  // a sched_waking not yet followed by its sched_wakeup
	queued   int64 // when it last became runnable (µs), for the wait
	wait     int64 // summed wait: switch-in minus becoming runnable
	exiting  bool  // sched_process_exit seen
	statWait int64 // summed sched_stat_wait delays, ns
	inUS     int64 // its last switch-in (µs), -1: not seen
	runNS    int64 // sched_stat_runtime since then, ns
	freed    bool  // sched_process_free seen
}

// trCheck is the consistency check's result.
type trCheck struct {
	counts       map[string]int
	tasks        map[int]*trTask
	exitStates   map[string]int // prev_state of the switches out of exiting tasks
	wakeRunning  int            // sched_waking of a task still running (ttwu_runnable())
	wakeupNewIdl int            // sched_wakeup_new logged in <idle>
	newidlePulls int            // sched_migrate_task of a newidle pull
	runChecked   int            // run intervals whose sched_stat_runtime sum was checked
	maxGap       int64          // the largest preempted run interval less its runtimes, ns
	errs         []string
}

func (c *trCheck) errorf(e *trEvent, format string, a ...any) {
	if len(c.errs) < 20 {
		c.errs = append(c.errs, fmt.Sprintf("%s\n\t%s", fmt.Sprintf(format, a...), e.line))
	}
}

// checkTrace runs the kernel's rules over the events:
//   - per CPU, time never goes back;
//   - per CPU, every sched_switch's prev is the task switched in last,
//     and every event is logged in the context of the task running there
//     (before a CPU's first switch, any);
//   - every switch-in of a task that slept is preceded by its wakeup, and
//     every sched_wakeup by its sched_waking;
//   - no sched_waking of a task already runnable and not running (a
//     running task may be woken: ttwu_runnable() finds it still queued,
//     logs sched_waking and sched_wakeup, and no switch follows);
//   - sched_waking's target_cpu and sched_migrate_task's orig_cpu are the
//     task's CPU (task_cpu(p), before select_task_rq());
//   - the waker context rules: a task does not wake itself, a
//     sched_wakeup_new is logged by its parent (not the child, not in
//     <idle>: wake_up_new_task() runs in the parent's fork());
//   - nothing runs after it exited;
//   - sched_stat_runtime is logged for the running task in its own
//     context, and the runtimes logged during a run interval (update_curr()
//     until put_prev_entity()'s, before the switch out) add up to the
//     interval between its switches, within the text's µs rounding and
//     __schedule()'s own time;
//   - sched_process_free comes after the task's exit switch, in softirq
//     context, and nothing names the task after it.
func checkTrace(t *testing.T, evs []trEvent) *trCheck {
	c := &trCheck{counts: map[string]int{}, tasks: map[int]*trTask{}, exitStates: map[string]int{}}
	task := func(pid int) *trTask {
		tk := c.tasks[pid]
		if tk == nil {
			tk = &trTask{cpu: -1, inUS: -1}
			c.tasks[pid] = tk
		}
		return tk
	}
	type cur struct {
		pid  int
		seen bool
	}
	last := map[int]cur{}
	lastUS := map[int]int64{}
	parents := map[int]bool{} // pids that forked (a tool's main process, not a task of the run)
	parentOf := map[int]int{} // child pid -> the pid that forked it
	pulling := map[int]int{}  // CPU -> the task whose newidle balance pulled, until its switch
	for i := range evs {
		e := &evs[i]
		if pid, ok := pulling[e.cpu]; ok && e.event != "sched_migrate_task" {
			if e.event != "sched_switch" || e.int(t, "prev_pid") != pid {
				c.errorf(e, "a newidle pull by %d not followed by its switch", pid)
			}
			delete(pulling, e.cpu)
		}
		c.counts[e.event]++
		for _, k := range []string{"pid", "prev_pid", "next_pid", "child_pid"} {
			if pid, err := strconv.Atoi(e.f[k]); err == nil && pid >= 1000 && task(pid).freed {
				c.errorf(e, "%d named after its sched_process_free", pid)
			}
		}
		if us, ok := lastUS[e.cpu]; ok && e.us < us {
			c.errorf(e, "CPU %d goes back in time", e.cpu)
		}
		lastUS[e.cpu] = e.us
		if e.event == "sched_process_fork" {
			// The model's fork parent runs in no CPU's switch chain.
			parents[e.pid] = true
		}
		if l := last[e.cpu]; l.seen && l.pid != e.pid && !parents[e.pid] {
			c.errorf(e, "logged in pid %d's context, CPU %d runs %d", e.pid, e.cpu, l.pid)
		}
		switch e.event {
		case "sched_switch":
			prev, next := e.int(t, "prev_pid"), e.int(t, "next_pid")
			if prev != e.pid {
				c.errorf(e, "prev is not the context")
			}
			if prev >= 1000 {
				p := task(prev)
				if p.state != stRunning && p.state != stUnknown || p.cpu != e.cpu && p.cpu >= 0 && p.state == stRunning {
					c.errorf(e, "prev %d switched out but not running here (state %d cpu %d)", prev, p.state, p.cpu)
				}
				p.cpu = e.cpu
				if p.inUS >= 0 {
					// put_prev_entity()'s update_curr() logged before the
					// switch: the runtimes cover the interval, each end
					// rounded to the µs and read on rq_clock, which
					// __schedule() updates before the pick and the
					// tracepoint: 2 µs either way. A task going to sleep
					// or exiting may leave more uncharged: the newidle
					// balance pick_next_task_fair() runs after its
					// put_prev_entity().
					gap := (e.us-p.inUS)*1000 - p.runNS
					preempted := e.prevState == "R" || e.prevState == "R+"
					if gap < -2000 || preempted && gap > 5000 {
						c.errorf(e, "%d ran %d µs from its switch-in, sched_stat_runtime says %d ns", prev, e.us-p.inUS, p.runNS)
					}
					if preempted {
						c.maxGap = max(c.maxGap, gap)
					}
					c.runChecked++
				}
				p.inUS = -1
				switch st := e.prevState; st {
				case "S":
					p.state = stSleeping
				case "R", "R+":
					p.state, p.queued = stQueued, e.us
				case "X", "Z":
					p.state = stDead
					c.exitStates[st]++
					if !p.exiting {
						c.errorf(e, "exit switch of %d without its sched_process_exit", prev)
					}
				default:
					c.errorf(e, "prev_state %q", st)
				}
			}
			if next >= 1000 {
				n := task(next)
				switch n.state {
				case stSleeping:
					c.errorf(e, "switch-in of %d, asleep and not woken", next)
				case stRunning:
					c.errorf(e, "switch-in of %d, already running on CPU %d", next, n.cpu)
				case stDead:
					c.errorf(e, "switch-in of %d after its exit", next)
				case stQueued:
					n.wait += e.us - n.queued
				}
				n.state, n.cpu = stRunning, e.cpu
				n.inUS, n.runNS = e.us, 0
			}
			last[e.cpu] = cur{next, true}
		case "sched_waking":
			pid := e.int(t, "pid")
			p := task(pid)
			if pid == e.pid {
				c.errorf(e, "a task wakes itself")
			}
			switch p.state {
			case stQueued:
				c.errorf(e, "sched_waking of %d, already runnable", pid)
			case stRunning:
				c.wakeRunning++
			case stDead:
				c.errorf(e, "sched_waking of %d after its exit", pid)
			}
			if p.waking {
				c.errorf(e, "second sched_waking of %d before its sched_wakeup", pid)
			}
			if tc := e.int(t, "target_cpu"); p.cpu >= 0 && tc != p.cpu {
				c.errorf(e, "sched_waking target_cpu %d, task_cpu is %d", tc, p.cpu)
			}
			p.waking = true
		case "sched_migrate_task":
			p := task(e.int(t, "pid"))
			if e.int(t, "dest_cpu") == e.cpu && e.flags == "d..2." {
				// A pull onto this CPU under schedule()'s preempt
				// count and one rq lock (a wakeup's set_task_cpu()
				// holds p->pi_lock too, the periodic balance runs in
				// softirq, the stopper at depth 1): newidle balancing
				// inside __schedule(), in the task going to sleep,
				// before its switch.
				c.newidlePulls++
				if e.pid == 0 {
					c.errorf(e, "newidle pull logged in <idle>")
				}
				pulling[e.cpu] = e.pid
			}
			if oc := e.int(t, "orig_cpu"); p.cpu >= 0 && oc != p.cpu {
				c.errorf(e, "migrate from %d, task_cpu is %d", oc, p.cpu)
			}
			if p.state == stRunning {
				c.errorf(e, "migrate of a running task")
			}
			p.cpu = e.int(t, "dest_cpu")
		case "sched_wakeup":
			pid := e.int(t, "pid")
			p := task(pid)
			if !p.waking {
				c.errorf(e, "sched_wakeup of %d without its sched_waking", pid)
			}
			p.waking = false
			p.cpu = e.int(t, "target_cpu")
			if p.state != stRunning {
				p.state, p.queued = stQueued, e.us
			}
		case "sched_process_exit":
			pid := e.int(t, "pid")
			if pid != e.pid {
				c.errorf(e, "sched_process_exit outside the exiting task")
			}
			task(pid).exiting = true
		case "sched_stat_wait", "sched_stat_sleep":
			pid := e.int(t, "pid")
			p := task(pid)
			d, err := strconv.ParseInt(e.f["delay"], 10, 64)
			if err != nil || d < 0 {
				c.errorf(e, "delay %q", e.f["delay"])
			}
			if e.event == "sched_stat_wait" {
				// set_next_entity(), before the switch to it
				if p.state != stQueued {
					c.errorf(e, "sched_stat_wait of %d, not waiting", pid)
				}
				p.statWait += d
			} else if !p.waking || p.state != stSleeping {
				// enqueue_entity(ENQUEUE_WAKEUP), between its
				// sched_waking and its sched_wakeup
				c.errorf(e, "sched_stat_sleep of %d outside its wakeup", pid)
			}
		case "sched_stat_runtime":
			pid := e.int(t, "pid")
			p := task(pid)
			if pid != e.pid || p.state != stRunning && p.state != stUnknown || p.cpu >= 0 && p.cpu != e.cpu {
				c.errorf(e, "sched_stat_runtime of %d, not the task running here (state %d cpu %d)", pid, p.state, p.cpu)
			}
			rt, err := strconv.ParseInt(e.f["runtime"], 10, 64)
			if err != nil || rt <= 0 {
				c.errorf(e, "runtime %q", e.f["runtime"])
			}
			p.runNS += rt
		case "sched_process_free":
			pid := e.int(t, "pid")
			p := task(pid)
			if p.state != stDead || e.flags != "..s.." {
				c.errorf(e, "sched_process_free of %d in state %d, flags %s (want after its exit switch, in RCU_SOFTIRQ)", pid, p.state, e.flags)
			}
			p.freed = true
		case "sched_process_fork":
			child := e.int(t, "child_pid")
			if e.int(t, "pid") != e.pid {
				c.errorf(e, "sched_process_fork outside the parent")
			}
			if task(child).state != stUnknown {
				c.errorf(e, "fork of %d, seen before", child)
			}
			parentOf[child] = e.pid
		case "sched_wakeup_new":
			pid := e.int(t, "pid")
			p := task(pid)
			if par, ok := parentOf[pid]; ok && par != e.pid {
				c.errorf(e, "sched_wakeup_new of %d outside its parent %d (wake_up_new_task() runs in the fork)", pid, par)
			}
			if p.state != stUnknown {
				c.errorf(e, "sched_wakeup_new of %d, seen before", pid)
			}
			if pid == e.pid {
				c.errorf(e, "sched_wakeup_new in the child's context")
			}
			if e.pid == 0 {
				c.wakeupNewIdl++
			}
			p.state, p.cpu, p.queued = stQueued, e.int(t, "target_cpu"), e.us
		}
	}
	return c
}

// traceRun runs a workload with the whole run traced and returns the
// result and the ftrace text.
func traceRun(t *testing.T, topo string, args ...string) (*Result, string) {
	t.Helper()
	return traceRunSeed(t, 1, topo, args...)
}

// traceRunSeed is traceRun at seed.
func traceRunSeed(t *testing.T, seed uint64, topo string, args ...string) (*Result, string) {
	t.Helper()
	m := machine(t, topo)
	w, err := build(m, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := emu.ParseFeatures("v6.6-eevdf")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(w, RunConfig{Machine: m, Features: f, Seed: seed, Driver: "serial", Check: true, TraceWindow: 10 * maxVirtualNS})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("%v did not complete", args)
	}
	var b bytes.Buffer
	if err := res.Sim.WriteFtrace(&b); err != nil {
		t.Fatal(err)
	}
	return res, b.String()
}

type traceLoad struct {
	name, topo string
	args       []string
	exit       string // the prev_state of an exiting task: Z a process, X a thread
	events     []string
	// forks: the tool's main process forks the tasks (TaskSpec.Parent):
	// every sched_wakeup_new follows its sched_process_fork, in it.
	forks bool
}

var traceLoads = []traceLoad{
	{"hackbench", "hikey-8", []string{"hackbench", "-g", "2", "-f", "4", "-l", "50"}, "Z", nil, true},
	{"hackbench-threads", "hikey-8", []string{"hackbench", "-g", "2", "-f", "4", "-l", "50", "-T"}, "X", nil, true},
	{"hackbench-spr", "spr-2s", []string{"hackbench", "-g", "2", "-f", "5", "-l", "50"}, "Z", nil, true},
	{"schbench-spr", "spr-2s", []string{"schbench", "-m", "2", "-t", "8", "-r", "1"}, "", nil, false},
	{"messaging", "hikey-8", []string{"messaging", "-g", "1", "-l", "50"}, "Z", nil, true},
	{"pipe", "hikey-8", []string{"pipe", "-l", "500"}, "Z", nil, false},
	{"schbench", "hikey-8", []string{"schbench", "-m", "1", "-t", "4", "-r", "1"}, "", nil, false},
	{"schbench-m2", "hikey-8", []string{"schbench", "-m", "2", "-t", "4", "-r", "1"}, "", nil, false},
	{"netperf", "hikey-8", []string{"netperf", "-t", "UDP_RR", "-nr", "4", "-l", "0.005"}, "", nil, false},
	{"sysbench", "hikey-8", []string{"sysbench", "--threads=2", "--time=0.005", "oltp_read_write", "run"}, "", nil, false},
	// The hoppers only move (sched_setaffinity(): the stopper's
	// migration, no wakeups).
	{"hopper", "hikey-8", []string{"hopper", "-n", "4", "-d", "20", "-top", "5"}, "", []string{"sched_switch", "sched_migrate_task", "sched_wakeup_new"}, false},
}

// The traces of the workloads pass the consistency check, show the
// tools' comms, and trace-cmd report reads their trace.dat.
func TestTraceConsistency(t *testing.T) {
	pulls := 0
	defer func() {
		if !t.Failed() && pulls == 0 {
			t.Error("no newidle pull in any trace: the rule is not exercised")
		}
	}()
	for _, l := range traceLoads {
		t.Run(l.name, func(t *testing.T) {
			res, c, n := checkLoad(t, l, 1)
			pulls += c.newidlePulls
			traceCmdReport(t, res.Sim, n)
		})
	}
}

// checkLoad traces load l at seed and checks its trace: the kernel's
// rules (checkTrace), the events it must show, its exits and comms. It
// returns the run, the check and the number of events.
func checkLoad(t *testing.T, l traceLoad, seed uint64) (*Result, *trCheck, int) {
	t.Helper()
	res, text := traceRunSeed(t, seed, l.topo, l.args...)
	evs := parseTrace(t, text)
	c := checkTrace(t, evs)
	for _, e := range c.errs {
		t.Error(e)
	}
	events := l.events
	if events == nil {
		events = []string{"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new"}
	}
	events = append(events, "sched_stat_wait", "sched_stat_runtime")
	for _, ev := range events {
		if c.counts[ev] == 0 {
			t.Errorf("no %s: %v", ev, c.counts)
		}
	}
	if l.forks && (c.wakeupNewIdl != 0 || c.counts["sched_process_fork"] != c.counts["sched_wakeup_new"]) {
		t.Errorf("%d sched_wakeup_new in <idle>, %d forks, %d sched_wakeup_new", c.wakeupNewIdl, c.counts["sched_process_fork"], c.counts["sched_wakeup_new"])
	}
	if l.exit != "" && c.counts["sched_process_exit"] != c.exitStates[l.exit] {
		t.Errorf("%d sched_process_exit, %d exits", c.counts["sched_process_exit"], c.exitStates[l.exit])
	}
	if l.exit != "" && (c.counts["sched_process_free"] == 0 || c.counts["sched_process_free"] > c.counts["sched_process_exit"]) {
		t.Errorf("%d sched_process_free for %d exits", c.counts["sched_process_free"], c.counts["sched_process_exit"])
	}
	if c.runChecked == 0 {
		t.Error("no run interval to check sched_stat_runtime against")
	}
	if l.exit != "" && (c.exitStates[l.exit] == 0 || len(c.exitStates) != 1) {
		t.Errorf("exits %v, want all %s", c.exitStates, l.exit)
	}
	comms := map[string]bool{}
	for _, tk := range res.Sim.Tasks() {
		comms[tk.Comm] = true
	}
	for _, bad := range []string{"-send", "-recv", "sched-msg", "-proc", "-msg", "-worker"} {
		for comm := range comms {
			if strings.Contains(comm, bad) {
				t.Errorf("invented comm %q", comm)
			}
		}
	}
	t.Logf("%v; %d wakings of running tasks; %d newidle pulls; exits %v; %d run intervals, the largest %d ns past its runtimes",
		c.counts, c.wakeRunning, c.newidlePulls, c.exitStates, c.runChecked, c.maxGap)
	return res, c, len(evs)
}

// traceCmdReport writes the trace.dat and, where trace-cmd is installed,
// checks that trace-cmd report reads every event, with the clock.
func traceCmdReport(t *testing.T, s *emu.Sim, events int) {
	t.Helper()
	tc, err := exec.LookPath("trace-cmd")
	if err != nil {
		return
	}
	dat := filepath.Join(t.TempDir(), "trace.dat")
	f, err := os.Create(dat)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTraceDat(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tc, "report", dat).CombinedOutput()
	if err != nil {
		t.Fatalf("trace-cmd report: %v\n%.2000s", err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, ": sched_") {
			n++
		}
	}
	if n != events {
		t.Errorf("trace-cmd report shows %d events, the text %d", n, events)
	}
	if d, err := exec.Command(tc, "dump", "--clock", "-i", dat).CombinedOutput(); err != nil || !bytes.Contains(d, []byte("[local]")) {
		t.Errorf("trace-cmd dump --clock: %v\n%s", err, d)
	}
}

// The wait perf sched latency computes from the trace (switch-in minus
// the time the task became runnable: its sched_wakeup, sched_wakeup_new
// or preempted switch-out) is the run_delay taskstats shows
// (sched_info_arrive() minus sched_info_enqueue()), per task, within
// what separates them: the text's µs rounding at both ends and the
// enqueue's path before the tracepoint (ttwu_do_wakeup() logs after
// activate_task() and wakeup_preempt(), as in the kernel), 2 µs per
// switch-in; and a remote enqueue applied up to an epoch late on its
// target's clock (DESIGN.md "Virtual time"), 10% of the wait.
func TestTraceWaitIsRunDelay(t *testing.T) {
	for _, l := range traceLoads {
		t.Run(l.name, func(t *testing.T) {
			res, text := traceRun(t, l.topo, l.args...)
			c := checkTrace(t, parseTrace(t, text))
			var sumTrace, sumStats, switchIns int64
			for _, tk := range res.Sim.Tasks() {
				p := c.tasks[tk.PID]
				if p == nil {
					t.Fatalf("task %d not in the trace", tk.PID)
				}
				got, want := p.wait*1000, tk.Stats.RunDelay
				sumTrace += got
				sumStats += want
				switchIns += tk.Stats.Pcount
				// sched_stat_wait carries sched_info's own waits.
				if p.statWait != want {
					t.Errorf("%s/%d: sched_stat_wait sums to %d ns, run_delay %d ns", tk.Comm, tk.PID, p.statWait, want)
				}
				if tol := 2000*tk.Stats.Pcount + want/10; got < want-tol || got > want+tol {
					t.Errorf("%s/%d: wait from the trace %d ns, run_delay %d ns (%d switch-ins)", tk.Comm, tk.PID, got, want, tk.Stats.Pcount)
				}
			}
			if tol := 2000*switchIns + sumStats/20; sumTrace < sumStats-tol || sumTrace > sumStats+tol {
				t.Errorf("total wait from the trace %d ns, run_delay %d ns (%d switch-ins)", sumTrace, sumStats, switchIns)
			}
			t.Logf("total wait from the trace %d ns, run_delay %d ns (%d switch-ins)", sumTrace, sumStats, switchIns)
		})
	}
}
