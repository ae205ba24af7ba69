package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeJSON puts a description in a temporary file and returns its path.
func writeJSON(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A periodic pair with uclamp, a mutex pair in a taskgroup, and a hog in
// a sibling group, on finite loops (the run ends when every thread does).
func TestRtAppGolden(t *testing.T) {
	res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", "testdata/rtapp/golden.json")
	golden(t, "rtapp/hikey-8.golden", []byte(out))
	w := res.Workload.(*rtApp)
	if w.DurationBound() {
		t.Error("golden.json has no duration but is duration-bound")
	}
	for _, th := range w.threads {
		if !th.exited {
			t.Errorf("%s did not finish its loops", th.comm)
		}
		if want := int64(th.task.loop); th.loops != want {
			t.Errorf("%s: %d loops, want %d", th.comm, th.loops, want)
		}
	}
	// The lockers share mtx: one of them must have waited for it.
	if w.threads[2].blockNS+w.threads[3].blockNS == 0 {
		t.Error("the two lockers of mtx never blocked on it")
	}
	// Each distinct taskgroup path is created once: /app, /app/db,
	// /app/batch.
	seen := map[string]int{}
	for _, task := range res.Sim.Tasks() {
		if g := task.Group(); g != nil && g != res.Sim.Root() {
			seen[g.Name]++
		}
	}
	if seen["db"] != 2 || seen["batch"] != 1 {
		t.Errorf("tasks per group %v, want db:2 batch:1", seen)
	}
}

// The JSON order is the execution order, duplicate keys included.
func TestRtAppOrderedKeys(t *testing.T) {
	src := `{"tasks": {"b": {"loop": 1, "run": 10, "sleep": 20, "run1": 30, "run": 40, "runtime": 50},
	                   "a": {"loop": 1, "phases": {"z": {"run": 1}, "y": {"sleep": 2}}}}}`
	cfg, err := parseRtApp("t.json", []byte(src), 8)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.tasks[0].name != "b" || cfg.tasks[1].name != "a" {
		t.Fatalf("task order %s, %s; want b, a", cfg.tasks[0].name, cfg.tasks[1].name)
	}
	var got []string
	for _, e := range cfg.tasks[0].phases[0].events {
		got = append(got, e.path[len("tasks.b."):]+"="+strconv.FormatInt(e.ns/1000, 10))
	}
	if s := strings.Join(got, " "); s != "run=10 sleep=20 run1=30 run=40 runtime=50" {
		t.Errorf("events %s", s)
	}
	if cfg.tasks[0].phases[0].events[4].kind != rtRuntime {
		t.Error("runtime parsed as run")
	}
	if p := cfg.tasks[1].phases; p[0].name != "z" || p[1].name != "y" {
		t.Errorf("phases %s, %s; want z, y", p[0].name, p[1].name)
	}
}

// periodicJSON is a periodic task pinned to CPU 0 (2 ms every 10 ms) and
// hogs more CPU hogs pinned with it.
func periodicJSON(hogs int) string {
	s := `{"tasks": {"periodic": {"cpus": [0], "run": 2000, "timer": {"ref": "tick", "period": 10000}}`
	if hogs > 0 {
		s += `, "hog": {"instance": ` + strconv.Itoa(hogs) + `, "cpus": [0], "run": 50000}`
	}
	return s + `}}`
}

// Competing hogs on the periodic task's CPU delay its timer wakeups.
func TestRtAppHogsRaiseWakeupLatency(t *testing.T) {
	alone := metric(t, "hikey-8", "v6.6-eevdf", "rtapp", "-f", writeJSON(t, "alone.json", periodicJSON(0)), "-d", "0.2")
	hogged := metric(t, "hikey-8", "v6.6-eevdf", "rtapp", "-f", writeJSON(t, "hogs.json", periodicJSON(2)), "-d", "0.2")
	t.Logf("wu_lat max: alone %.0f us, with 2 hogs %.0f us", alone, hogged)
	if hogged < alone+100 {
		t.Errorf("wu_lat max with 2 hogs on the CPU %.0f us, alone %.0f us: want a clear rise", hogged, alone)
	}
}

// A mutex excludes: two threads on two CPUs that only compute inside the
// lock get at most one CPU's worth of run time between them.
func TestRtAppMutexExcludes(t *testing.T) {
	src := func(lock string) string {
		ev := `"run": 1000`
		if lock != "" {
			ev = `"lock": "m", "run": 1000, "unlock": "m"`
		}
		return `{"tasks": {"a": {"cpus": [0], ` + ev + `}, "b": {"cpus": [1], ` + ev + `}}}`
	}
	run := func(lock string) float64 {
		res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", writeJSON(t, "m.json", src(lock)), "-d", "0.1")
		var ns int64
		for _, th := range res.Workload.(*rtApp).threads {
			ns += th.runNS
		}
		return float64(ns) / 1e8 // CPUs' worth over 0.1 s
	}
	free, locked := run(""), run("m")
	t.Logf("run time in CPUs: unlocked %.2f, locked %.2f", free, locked)
	if free < 1.9 || locked > 1.0 || locked < 0.7 {
		t.Errorf("CPUs of run: unlocked %.2f (want ~2), locked %.2f (want <= 1, and not starved)", free, locked)
	}
}

// A condition: the waiter runs once per signal it is waiting for.
func TestRtAppCondition(t *testing.T) {
	src := `{"tasks": {
		"producer": {"loop": 20, "sleep": 1000, "lock": "m", "signal": "c", "unlock": "m"},
		"consumer": {"loop": 20, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m", "run": 100}}}`
	res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", writeJSON(t, "c.json", src))
	th := res.Workload.(*rtApp).threads
	if th[1].loops != 20 || th[1].blockNS < 15_000_000 {
		t.Errorf("consumer: %d loops, blocked %d us; want 20 loops, blocked ~20 ms:\n%s", th[1].loops, th[1].blockNS/1000, out)
	}
}

// A relative timer that overran restarts from now; an absolute one keeps
// its grid and catches up: after a 15 ms overrun of a 10 ms period, the
// next nine 1 ms activations sleep 5 ms less in total.
func TestRtAppTimerModes(t *testing.T) {
	sleep := func(mode string) int64 {
		src := `{"tasks": {"t": {"loop": 1, "phases": {
			"long": {"run": 15000, "timer": {"ref": "t", "period": 10000, "mode": "` + mode + `"}},
			"short": {"loop": 9, "run": 1000, "timer": {"ref": "t", "period": 10000, "mode": "` + mode + `"}}}}}}`
		res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", writeJSON(t, "m.json", src))
		th := res.Workload.(*rtApp).threads[0]
		if th.misses != 1 || th.loops != 10 {
			t.Errorf("%s: %d misses, %d loops; want 1, 10", mode, th.misses, th.loops)
		}
		return th.sleepNS
	}
	rel, abs := sleep("relative"), sleep("absolute")
	if d := rel - abs; d < 4_900_000 || d > 5_100_000 {
		t.Errorf("sleep relative %d us - absolute %d us = %d us, want 5000", rel/1000, abs/1000, d/1000)
	}
}

// Phase-level cpus move the thread at each phase change
// (set_thread_affinity()).
func TestRtAppPhaseCPUs(t *testing.T) {
	src := `{"tasks": {"t": {"loop": 3, "phases": {"a": {"cpus": [1], "run": 1000}, "b": {"cpus": [6], "run": 1000}}}}}`
	res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", writeJSON(t, "p.json", src))
	th := res.Workload.(*rtApp).threads[0]
	if n := th.t.Stats.NrMigrations; n < 5 {
		t.Errorf("%d migrations over 3 loops of two phases on CPUs 1 and 6, want >= 5", n)
	}
	if th.t.CPU() != 6 {
		t.Errorf("ended on CPU %d, want 6 (phase b)", th.t.CPU())
	}
}

func TestRtAppBadInput(t *testing.T) {
	task := func(body string) string { return `{"tasks": {"t": {` + body + `}}}` }
	cases := []struct {
		name, src, want string
	}{
		{"malformed", `{"tasks": {"t": {"run": 10,}}}`, "malformed JSON"},
		{"malformed line", "{\n\"tasks\": {\n\"t\": {\"run\" 10}}}", "t.json:3:"},
		{"truncated", `{"tasks": {"t": {"run": 10}`, "unexpected end"},
		{"trailing", `{"tasks": {"t": {"run": 10}}} {}`, "after the top-level"},
		{"not object", `[1]`, "must be an object"},
		{"missing tasks", `{"global": {"duration": 1}}`, "tasks: missing"},
		{"empty tasks", `{"tasks": {}}`, "tasks: empty"},
		{"unknown top", `{"tasks": {"t": {"run": 1}}, "foo": 1}`, "foo: unknown field"},
		{"unknown global", `{"global": {"durations": 1}, "tasks": {"t": {"run": 1}}}`, "global.durations: unknown field"},
		{"unknown phase field", `{"global": {"duration": 1}, "tasks": {"worker": {"phases": {"p1": {"run": 10, "foo": 1}}}}}`, "tasks.worker.phases.p1.foo: unknown field"},
		{"unknown task field", task(`"loop": 1, "run": 10, "colour": "red"`), "tasks.t.colour: unknown field"},
		{"unknown timer field", task(`"loop": 1, "timer": {"ref": "a", "period": 10, "phase": 1}`), "tasks.t.timer.phase: unknown field"},
		{"unsupported event", task(`"loop": 1, "run": 10, "barrier": "b"`), "tasks.t.barrier: event not supported"},
		{"negative run", task(`"loop": 1, "run": -5`), "tasks.t.run: must be >= 0"},
		{"negative sleep", task(`"loop": 1, "run": 5, "sleep2": -1`), "tasks.t.sleep2: must be >= 0"},
		{"float run", task(`"loop": 1, "run": 1.5`), "tasks.t.run: must be an integer"},
		{"string run", task(`"loop": 1, "run": "10"`), "tasks.t.run: must be an integer"},
		{"zero period", task(`"loop": 1, "timer": {"ref": "a", "period": 0}`), "tasks.t.timer.period: must be > 0"},
		{"timer no ref", task(`"loop": 1, "timer": {"period": 10}`), "tasks.t.timer.ref: missing"},
		{"timer mode", task(`"loop": 1, "timer": {"ref": "a", "period": 10, "mode": "sometimes"}`), "tasks.t.timer.mode: unknown mode"},
		{"instance 0", task(`"instance": 0, "loop": 1, "run": 10`), "tasks.t.instance: 0 out of range"},
		{"loop 0", task(`"loop": 0, "run": 10`), "tasks.t.loop: 0 out of range"},
		{"cpu out of range", task(`"loop": 1, "cpus": [0, 8], "run": 10`), "tasks.t.cpus[1]: CPU 8 out of range for this machine (allowed: 0-7)"},
		{"cpus empty", task(`"loop": 1, "cpus": [], "run": 10`), "tasks.t.cpus: empty"},
		{"phase cpu out of range", `{"tasks": {"t": {"loop": 1, "phases": {"p": {"cpus": [-1], "run": 10}}}}}`, "tasks.t.phases.p.cpus[0]: CPU -1 out of range"},
		{"util_min > util_max", task(`"loop": 1, "util_min": 600, "util_max": 500, "run": 10`), "tasks.t.util_min: util_min 600 > util_max 500"},
		{"util_max > 1024", task(`"loop": 1, "util_max": 2000, "run": 10`), "tasks.t.util_max: 2000 out of range (allowed: 0-1024"},
		{"util_min alone > 1024", task(`"loop": 1, "util_min": 1025, "run": 10`), "tasks.t.util_min: 1025 out of range"},
		{"unlock not held", task(`"loop": 1, "run": 10, "unlock": "m"`), `tasks.t.unlock: mutex "m" is not held`},
		{"unlock before lock", `{"tasks": {"t": {"loop": 1, "phases": {"p1": {"run": 10, "unlock": "m"}, "p2": {"lock": "m", "run": 1}}}}}`, `tasks.t.phases.p1.unlock: mutex "m" is not held`},
		{"unlock other mutex", task(`"loop": 1, "lock": "a", "run": 10, "unlock": "b"`), `tasks.t.unlock: mutex "b" is not held`},
		{"double lock", task(`"loop": 1, "lock": "a", "run": 10, "lock": "a"`), `tasks.t.lock: mutex "a" is already held`},
		{"lock in looping phase", `{"tasks": {"t": {"loop": 1, "phases": {"p1": {"loop": 3, "lock": "m", "run": 10}, "p2": {"unlock": "m", "run": 1}}}}}`, `tasks.t.phases.p1.lock: mutex "m" is already held`},
		{"held at end", task(`"loop": 1, "lock": "a", "run": 10`), `tasks.t: mutex "a" is still held`},
		{"wait without mutex", task(`"loop": 1, "run": 10, "wait": {"ref": "c", "mutex": "m"}`), `tasks.t.wait: mutex "m" must be held`},
		{"unknown policy", task(`"loop": 1, "policy": "SCHED_BATCHY", "run": 10`), `tasks.t.policy: unknown policy "SCHED_BATCHY" (allowed: SCHED_OTHER`},
		{"fifo policy", task(`"loop": 1, "policy": "SCHED_FIFO", "run": 10`), "tasks.t.policy: SCHED_FIFO is not modeled"},
		{"default policy", `{"global": {"default_policy": "SCHED_RR"}, "tasks": {"t": {"loop": 1, "run": 1}}}`, "global.default_policy: SCHED_RR is not modeled"},
		{"nice range", task(`"loop": 1, "priority": 30, "run": 10`), "tasks.t.priority: nice 30 out of range"},
		{"nice and priority", task(`"loop": 1, "priority": 1, "nice": 2, "run": 10`), "tasks.t.nice: give either priority or nice"},
		{"empty phases", task(`"phases": {}`), "tasks.t.phases: empty"},
		{"empty phase", `{"tasks": {"t": {"loop": 1, "phases": {"p": {"loop": 2}}}}}`, "tasks.t.phases.p: no events"},
		{"no events", task(`"loop": 1, "cpus": [1]`), "tasks.t: no events and no phases"},
		{"events beside phases", task(`"run": 10, "phases": {"p": {"run": 1}}`), "tasks.t: events must be inside phases"},
		{"phase-level nice", `{"tasks": {"t": {"loop": 1, "phases": {"p": {"priority": 1, "run": 1}}}}}`, "tasks.t.phases.p.priority: not supported at phase level"},
		{"deadline keys", task(`"loop": 1, "dl-runtime": 100, "run": 10`), "tasks.t.dl-runtime: not modeled"},
		{"taskgroup no slash", task(`"loop": 1, "taskgroup": "app", "run": 10`), `tasks.t.taskgroup: "app" must start with /`},
		{"taskgroup empty element", task(`"loop": 1, "taskgroup": "/a//b", "run": 10`), "tasks.t.taskgroup: \"/a//b\" has an empty path element"},
		{"duplicate field", task(`"loop": 1, "instance": 2, "instance": 3, "run": 10`), "tasks.t.instance: duplicate key"},
		{"forever without duration", task(`"run": 10`), "tasks.t.loop: -1 (forever"},
		{"spin", task(`"loop": 5, "lock": "m", "unlock": "m"`), "tasks.t: no run, runtime, sleep or timer"},
		{"spinning phase", `{"global": {"duration": 1}, "tasks": {"t": {"phases": {"a": {"run": 1}, "b": {"loop": -1, "yield": ""}}}}}`, "tasks.t.phases.b: loops forever without"},
		{"bad duration", `{"global": {"duration": -3}, "tasks": {"t": {"loop": 1, "run": 1}}}`, "global.duration: must be seconds > 0"},
		{"wait no mutex name", task(`"loop": 1, "run": 1, "wait": {"ref": "c"}`), "tasks.t.wait.mutex: missing"},
	}
	m := machine(t, "hikey-8")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(m, "rtapp", "-f", writeJSON(t, "t.json", c.src))
			var fe *FlagError
			if !errors.As(err, &fe) || fe.Flag != "-f" {
				t.Fatalf("err = %v, want a FlagError on -f", err)
			}
			if !strings.Contains(fe.Msg, c.want) {
				t.Errorf("message %q does not contain %q", fe.Msg, c.want)
			}
		})
	}
	// The flags themselves.
	if _, err := build(m, "rtapp"); !isFlagErr(err, "-f") {
		t.Errorf("no -f: err = %v, want a FlagError on -f", err)
	}
	if _, err := build(m, "rtapp", "-f", "testdata/rtapp/no-such.json"); !isFlagErr(err, "-f") {
		t.Errorf("missing file: err = %v, want a FlagError on -f", err)
	}
	if _, err := build(m, "rtapp", "-f", "testdata/rtapp/example.json", "-d", "-1"); !isFlagErr(err, "-d") {
		t.Errorf("-d -1: err = %v, want a FlagError on -d", err)
	}
}

func isFlagErr(err error, flag string) bool {
	var fe *FlagError
	return errors.As(err, &fe) && fe.Flag == flag
}

// Serial and parallel drivers print the same report.
func TestRtAppDeterminism(t *testing.T) {
	driversAgree(t, "hikey-8", "v6.6-eevdf", 3, 4, "rtapp", "-f", "testdata/rtapp/example.json", "-d", "0.1")
}

// The example users copy parses and runs: its duration is 2 s, cut here.
func TestRtAppExample(t *testing.T) {
	res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "rtapp", "-f", "testdata/rtapp/example.json", "-d", "0.1")
	w := res.Workload.(*rtApp)
	if !w.DurationBound() {
		t.Error("example.json with -d is not duration-bound")
	}
	for _, th := range w.threads {
		if th.loops == 0 {
			t.Errorf("%s did no loop in 0.1 s:\n%s", th.comm, out)
		}
	}
	// Without -d it runs for global.duration.
	wk, err := build(machine(t, "hikey-8"), "rtapp", "-f", "testdata/rtapp/example.json")
	if err != nil {
		t.Fatal(err)
	}
	if wk.Limit() != 2e9 {
		t.Errorf("example.json limit %d, want 2 s", wk.Limit())
	}
}

// -f - reads the description from stdin.
func TestRtAppStdin(t *testing.T) {
	f, err := os.Open("testdata/rtapp/example.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	w, err := build(machine(t, "hikey-8"), "rtapp", "-f", "-")
	if err != nil {
		t.Fatal(err)
	}
	if r := w.(*rtApp); r.label != "<stdin>" || len(r.cfg.tasks) != 5 {
		t.Errorf("stdin: label %q, %d tasks; want <stdin>, 5", r.label, len(r.cfg.tasks))
	}
}
