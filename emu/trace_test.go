package emu

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// traceSim runs a waker/wakee pair and a hog on hikey-8 CPU 0-1 with
// tracing on, and an exiting task.
func traceSim(t *testing.T, driver string) *Sim {
	s, err := New(Config{Machine: machine(t, "hikey-8"), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 3, Check: true, Driver: driver})
	if err != nil {
		t.Fatal(err)
	}
	s.EnableTrace(5*ms, ms/2)
	s.EnableCallChains()
	g, err := s.NewGroup("docker", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	sem := NewSem("wakee", 0)
	spawn(t, s, TaskSpec{Comm: "wakee", CPU: 1, Group: g, Prog: Loop(Wait(sem), Run(50_000)), Sems: []*Sem{sem}})
	spawn(t, s, TaskSpec{Comm: "waker", CPU: 0, Prog: Loop(Run(200_000), Signal(sem), Sleep(100_000))})
	mustTask(t, s, TaskSpec{Comm: "hog", CPU: 0, Nice: 5, Prog: Hog()})
	mustTask(t, s, TaskSpec{Comm: "hog2", CPU: 0, Prog: Hog()})
	n := 0
	spawn(t, s, TaskSpec{Comm: "short", CPU: 1, Prog: ProgramFunc(func(*Task) Action {
		if n++; n > 3 {
			return Exit()
		}
		return Run(300_000)
	})})
	s.Run(8 * ms)
	return s
}

func TestFtraceFormat(t *testing.T) {
	s := traceSim(t, "serial")
	var b bytes.Buffer
	if err := s.WriteFtrace(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# tracer: nop",
		"sched_wakeup_new: comm=wakee pid=",
		"sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=",
		"prev_state=S ==> ",
		"prev_state=R+ ==> ",
		"sched_switch: prev_comm=short prev_pid=1004 prev_prio=120 prev_state=X ==> ",
		// the waker's context: the waker, or the timer interrupt in
		// whatever task runs (hog2 on CPU 0), irqs off in ttwu;
		// target_cpu is task_cpu(p) before select_task_rq()
		"waker-1001    [002] d..3.     0.001127: sched_waking: comm=wakee pid=1000 prio=120 target_cpu=001",
		"hog2-1003    [000] d.h2.     0.000305: sched_waking: comm=waker pid=1001 prio=120 target_cpu=000",
		"hog2-1003    [000] d.h2.     0.000306: sched_migrate_task: comm=waker pid=1001 prio=120 orig_cpu=0 dest_cpu=2",
		// the wake-list drain in the IPI's handler on the WFI-idle CPU
		// (arm64 does not poll), need-resched set
		"<idle>-0       [002] dNh1.     0.000313: sched_wakeup: comm=waker pid=1001 prio=120 target_cpu=002",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
	// Lines are in time order, and nothing after the 5 ms window.
	var last string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		ts := strings.TrimSuffix(f[3], ":")
		if ts < last {
			t.Fatalf("trace out of order at %q", line)
		}
		last = ts
		if ts >= "0.005000" {
			t.Fatalf("record past the window: %q", line)
		}
	}
	if last == "" {
		t.Fatal("no records")
	}
}

// The trace is the same bytes from either driver.
func TestTraceDeterministic(t *testing.T) {
	var outs [2]string
	for i, d := range []string{"serial", "parallel"} {
		s := traceSim(t, d)
		var b bytes.Buffer
		if err := s.WriteFtrace(&b); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteChromeCounters(&b); err != nil {
			t.Fatal(err)
		}
		outs[i] = b.String()
	}
	if outs[0] != outs[1] {
		t.Error("serial and parallel traces differ")
	}
}

func TestChromeCounters(t *testing.T) {
	s := traceSim(t, "serial")
	var b bytes.Buffer
	if err := s.WriteChromeCounters(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			TS   float64        `json:"ts"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var cpu0, tg int
	for _, e := range doc.TraceEvents {
		if e.Ph != "C" {
			continue
		}
		if e.TS > 5000 {
			t.Errorf("counter sample at %.0f µs is past the 5 ms window", e.TS)
		}
		switch e.Name {
		case "cpu0":
			cpu0++
			if _, ok := e.Args["nr_running"]; !ok {
				t.Errorf("cpu0 sample without nr_running: %v", e.Args)
			}
		case "tg->load_avg /docker":
			tg++
		}
	}
	// Samples every 0.5 ms over 5 ms (at barriers: at least one per
	// period in which anything happened).
	if cpu0 < 8 || cpu0 > 11 || tg != cpu0 {
		t.Errorf("cpu0 samples %d, tg samples %d; want ~10 each", cpu0, tg)
	}
}

// A signal between the wait's check and __schedule()'s dequeue is
// ttwu_runnable(): the trace shows the sender's sched_waking and
// sched_wakeup (ttwu_do_wakeup()) of the receiver, target_cpu its CPU,
// in the sender's context, and no switch out of the receiver.
func TestTraceTTWURunnable(t *testing.T) {
	run := func(signalAt int64) (*Sim, *RQ) {
		s := newSim(t, "hikey-8", "v6.6-eevdf")
		s.EnableTrace(2*ms, 0)
		r := mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Run(98*us), Block(), Run(10*ms))})
		step := 0
		mustTask(t, s, TaskSpec{Comm: "sender", CPU: 2, Prog: ProgramFunc(func(*Task) Action {
			if step++; step == 1 {
				return Run(signalAt)
			} else if step == 2 {
				return Action{Op: ActSignal, Sem: r.sem}
			}
			return Block()
		})})
		s.Run(2 * ms)
		return s, s.cpus[2]
	}
	found := false
	for d := int64(95 * us); d <= 101*us && !found; d += 25 {
		s, sender := run(d)
		if sender.Stats.RacedRunnable != 1 {
			continue
		}
		found = true
		var b bytes.Buffer
		if err := s.WriteFtrace(&b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		for _, want := range []string{
			"sender-1001    [002] d..3.", "sched_waking: comm=receiver pid=1000 prio=120 target_cpu=001",
			"sender-1001    [002] d..4.", "sched_wakeup: comm=receiver pid=1000 prio=120 target_cpu=001",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("signal at %d ns: no %q in\n%s", d, want, text)
			}
		}
		if strings.Contains(text, "prev_comm=receiver") {
			t.Errorf("signal at %d ns: the receiver switched out:\n%s", d, text)
		}
	}
	if !found {
		t.Fatal("no signal time gave a ttwu_runnable(): the scenario no longer covers it")
	}
}

// sched_stat_wait and sched_stat_sleep are schedstat tracepoints: logged
// only with kernel.sched_schedstats on (schedstat_enabled()), the rest
// the same.
func TestTraceStatEventsNeedSchedstats(t *testing.T) {
	text := func(sched string) string {
		s := newSimSched(t, "hikey-8", "v6.6-eevdf", sched)
		s.EnableTrace(5*ms, 0)
		mixedWorkload(t, s)
		s.Run(5 * ms)
		var b bytes.Buffer
		if err := s.WriteFtrace(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	on, off := text(""), text("sched_schedstats=0")
	if !strings.Contains(on, ": sched_stat_wait: ") || !strings.Contains(on, ": sched_stat_sleep: ") {
		t.Error("schedstats on: no sched_stat_wait or sched_stat_sleep")
	}
	// sched_stat_runtime is update_curr()'s, not a schedstat event.
	statEv := func(l string) bool {
		return strings.Contains(l, "sched_stat_wait") || strings.Contains(l, "sched_stat_sleep")
	}
	if statEv(off) {
		t.Error("schedstats off: sched_stat_wait or sched_stat_sleep logged")
	}
	if !strings.Contains(off, ": sched_stat_runtime: ") {
		t.Error("schedstats off: no sched_stat_runtime")
	}
	var rest []string
	for _, l := range strings.Split(on, "\n") {
		if !statEv(l) && !strings.HasPrefix(l, "# entries") {
			rest = append(rest, l)
		}
	}
	offLines := strings.Split(off, "\n")
	offLines = slices.DeleteFunc(offLines, func(l string) bool { return strings.HasPrefix(l, "# entries") })
	if !slices.Equal(rest, offLines) {
		t.Error("schedstats changes the other events")
	}
}

// Two signals of one sender to a sleeping receiver on another CPU, in one
// epoch: the sender sees the receiver asleep (published at the last
// barrier) both times and runs try_to_wake_up() twice, and the barrier's
// claim lets the first wake it; the second finds it awake and is left
// pending. In the kernel the second try_to_wake_up() fails
// ttwu_state_match() before trace_sched_waking() (core.c v6.6): the trace
// has one sched_waking and one sched_wakeup per wakeup. Before, the first
// claim made the second's pending records real too (two wakeups for one
// sleep; messaging at seed 2 showed it). The signals are not held
// (noSignalHold): a held signal that finds the receiver woken runs no
// try_to_wake_up() at all (TestSignalHoldOneWaker), but the claim's loser
// remains for the wakers that do not hold (a raced wakeup completed at
// the barrier, a winner whose debt carries its wakeup into the next
// epoch).
func TestTraceOneWakeupPerClaim(t *testing.T) {
	twice := 0
	for d := int64(100 * us); d < 100*us+3000; d += 50 {
		s := newSim(t, "hikey-8", "v6.6-eevdf")
		s.noSignalHold = true
		s.EnableTrace(2*ms, 0)
		r := mustTask(t, s, TaskSpec{Comm: "receiver", CPU: 1, Prog: Loop(Block(), Run(10*ms))})
		wake := Action{Op: ActSignal, Sem: r.sem}
		mustTask(t, s, TaskSpec{Comm: "sender", CPU: 2, Prog: Loop(Run(d), wake, wake, Block())})
		s.Run(2 * ms)
		if s.cpus[2].Stats.TTWUCount < 2 {
			continue // the second signal saw the receiver awake
		}
		twice++
		var b bytes.Buffer
		if err := s.WriteFtrace(&b); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		wakings := strings.Count(text, "sched_waking: comm=receiver")
		wakeups := strings.Count(text, "sched_wakeup: comm=receiver")
		if r.Stats.NrWakeups != 1 || wakings != 1 || wakeups != 1 {
			t.Errorf("signals at %d ns: %d wakeups of the receiver, the trace shows %d sched_waking and %d sched_wakeup; want 1 each\n%s", d, r.Stats.NrWakeups, wakings, wakeups, text)
		}
	}
	if twice == 0 {
		t.Fatal("the sender never ran try_to_wake_up() twice: the scenario tests nothing")
	}
	t.Logf("%d signal times gave two try_to_wake_up()s", twice)
}
