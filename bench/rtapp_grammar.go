package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The rt-app grammar (rtapp.go): the description's types (rtConfig,
// rtTask, rtPhase, rtEvent) and the strict reader that fills them from the
// ordered JSON, each error naming its JSON path.

// rtMaxThreads caps the threads of a description (instances summed), as
// hackbench's tasks are capped.
const rtMaxThreads = 1 << 16

type rtEvKind uint8

const (
	rtRun rtEvKind = iota
	rtRuntime
	rtSleep
	rtTimer
	rtLock
	rtUnlock
	rtSignal
	rtBroad
	rtWait
	rtSync
	rtYield
)

// rtEventNames are the supported events, in the order their names are
// matched (runtime before run, as rt-app's prefix matching).
var rtEventNames = []struct {
	name string
	kind rtEvKind
}{
	{"runtime", rtRuntime}, {"run", rtRun}, {"sleep", rtSleep}, {"timer", rtTimer},
	{"lock", rtLock}, {"unlock", rtUnlock}, {"signal", rtSignal}, {"broad", rtBroad},
	{"wait", rtWait}, {"sync", rtSync}, {"yield", rtYield},
}

// rt-app events this model does not implement.
var rtUnsupportedEvents = []string{"barrier", "suspend", "resume", "mem", "iorun", "fork"}

const rtSupportedEvents = "run, runtime, sleep, timer, lock, unlock, signal, broad, wait, sync, yield"

type rtEvent struct {
	kind  rtEvKind
	ns    int64 // run, runtime, sleep: duration; timer: period
	res   int   // timer index in the task; mutex id (lock, unlock); condition id
	mutex int   // wait, sync: the mutex id
	abs   bool  // timer: this use says "mode": "absolute"
	node  *jnode
	path  string
}

type rtPhase struct {
	name   string
	loop   int   // -1: forever
	cpus   []int // nil: the task's
	events []rtEvent
	node   *jnode
	path   string
}

type rtTask struct {
	name      string
	instances int
	delay     int64 // ns
	loop      int   // -1: forever
	cpus      []int // nil: every CPU
	nice      int
	taskgroup string
	clamp     *[2]uint32
	phases    []rtPhase
	timers    []string
	timerAbs  []bool // per timer: absolute (any use says so, as rt-app's timer resource)
	path      string
}

type rtConfig struct {
	duration int64 // ns; 0: until every thread ends
	tasks    []*rtTask
	mutexes  []string
	conds    []string
	// mutexUsers counts the threads (instances) using each mutex.
	mutexUsers []int
}

func (c *rtConfig) mutexID(name string) int {
	if i := slices.Index(c.mutexes, name); i >= 0 {
		return i
	}
	c.mutexes = append(c.mutexes, name)
	c.mutexUsers = append(c.mutexUsers, 0)
	return len(c.mutexes) - 1
}

func (c *rtConfig) condID(name string) int {
	if i := slices.Index(c.conds, name); i >= 0 {
		return i
	}
	c.conds = append(c.conds, name)
	return len(c.conds) - 1
}

// managed reports whether a mutex has a lock manager (more than one
// thread uses it).
func (c *rtConfig) managed(mutex int) bool { return c.mutexUsers[mutex] > 1 }

type rtParse struct {
	file string
	src  []byte
	ncpu int
	cfg  *rtConfig
}

func (p *rtParse) errf(n *jnode, path, format string, args ...any) error {
	line, _ := lineCol(p.src, n.off)
	if path == "" {
		path = "(top level)"
	}
	return flagErr("-f", "%s:%d: %s: %s", p.file, line, path, fmt.Sprintf(format, args...))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *rtParse) int(n *jnode, path string) (int64, error) {
	if n.kind != jNum {
		return 0, p.errf(n, path, "must be an integer, got %v", n.kind)
	}
	v, err := strconv.ParseInt(n.num.String(), 10, 64)
	if err != nil {
		return 0, p.errf(n, path, "must be an integer, got %s", n.num)
	}
	return v, nil
}

func (p *rtParse) string(n *jnode, path string) (string, error) {
	if n.kind != jStr {
		return "", p.errf(n, path, "must be a string, got %v", n.kind)
	}
	return n.str, nil
}

func (p *rtParse) object(n *jnode, path string) error {
	if n.kind != jObj {
		return p.errf(n, path, "must be an object, got %v", n.kind)
	}
	return nil
}

// usec reads a non-negative duration in microseconds.
func (p *rtParse) usec(n *jnode, path string) (int64, error) {
	v, err := p.int(n, path)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, p.errf(n, path, "must be >= 0 usec, got %d", v)
	}
	if v > 1e12 {
		return 0, p.errf(n, path, "%d usec is out of range (at most 1e12)", v)
	}
	return v * 1000, nil
}

// uniqueKeys rejects a repeated non-event key (rt-app would keep only one
// of them).
func (p *rtParse) uniqueKeys(n *jnode, path string, isEvent func(string) bool) error {
	seen := map[string]bool{}
	for _, f := range n.obj {
		if isEvent != nil && isEvent(f.key) {
			continue
		}
		if seen[f.key] {
			return p.errf(f.val, join(path, f.key), "duplicate key")
		}
		seen[f.key] = true
	}
	return nil
}

func eventKind(key string) (rtEvKind, bool) {
	for _, e := range rtEventNames {
		if rest, ok := strings.CutPrefix(key, e.name); ok && allDigits(rest) {
			return e.kind, true
		}
	}
	return 0, false
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func unsupportedEvent(key string) bool {
	for _, e := range rtUnsupportedEvents {
		if rest, ok := strings.CutPrefix(key, e); ok && allDigits(rest) {
			return true
		}
	}
	return false
}

func isEventKey(key string) bool {
	_, ok := eventKind(key)
	return ok || unsupportedEvent(key)
}

// parseRtApp parses and validates an rt-app description for a machine
// with ncpu CPUs.
func parseRtApp(file string, src []byte, ncpu int) (*rtConfig, error) {
	root, err := parseOrdered(file, src)
	if err != nil {
		return nil, err
	}
	p := &rtParse{file: file, src: src, ncpu: ncpu, cfg: &rtConfig{}}
	if err := p.object(root, ""); err != nil {
		return nil, err
	}
	if err := p.uniqueKeys(root, "", nil); err != nil {
		return nil, err
	}
	var tasks *jnode
	for _, f := range root.obj {
		switch f.key {
		case "global":
			if err := p.global(f.val, "global"); err != nil {
				return nil, err
			}
		case "tasks":
			tasks = f.val
		case "resources":
			if err := p.resources(f.val, "resources"); err != nil {
				return nil, err
			}
		default:
			return nil, p.errf(f.val, f.key, "unknown field (allowed: global, tasks, resources)")
		}
	}
	if tasks == nil {
		return nil, p.errf(root, "tasks", "missing: the description needs a \"tasks\" object with at least one task")
	}
	if err := p.object(tasks, "tasks"); err != nil {
		return nil, err
	}
	if len(tasks.obj) == 0 {
		return nil, p.errf(tasks, "tasks", "empty: at least one task is needed")
	}
	if err := p.uniqueKeys(tasks, "tasks", nil); err != nil {
		return nil, err
	}
	threads := 0
	for _, f := range tasks.obj {
		t, err := p.task(f.key, f.val, join("tasks", f.key))
		if err != nil {
			return nil, err
		}
		p.cfg.tasks = append(p.cfg.tasks, t)
		if threads += t.instances; threads > rtMaxThreads {
			return nil, p.errf(f.val, join("tasks", f.key)+".instance", "the tasks up to this one make %d threads (instances summed), more than %d in all", threads, rtMaxThreads)
		}
	}
	// Count each mutex's threads: a mutex of one thread needs no manager.
	for _, t := range p.cfg.tasks {
		used := map[int]bool{}
		for _, ph := range t.phases {
			for _, e := range ph.events {
				switch e.kind {
				case rtLock, rtUnlock:
					used[e.res] = true
				case rtWait, rtSync:
					used[e.mutex] = true
				}
			}
		}
		for m := range used {
			p.cfg.mutexUsers[m] += t.instances
		}
	}
	return p.cfg, nil
}

var rtPolicies = []string{"SCHED_OTHER", "SCHED_IDLE", "SCHED_RR", "SCHED_FIFO", "SCHED_DEADLINE"}

func (p *rtParse) policy(n *jnode, path string) error {
	s, err := p.string(n, path)
	if err != nil {
		return err
	}
	if s == "SCHED_OTHER" {
		return nil
	}
	if slices.Contains(rtPolicies, s) {
		return p.errf(n, path, "%s is not modeled: the emulator has the fair class only (allowed: SCHED_OTHER)", s)
	}
	return p.errf(n, path, "unknown policy %q (allowed: SCHED_OTHER; rt-app also knows SCHED_IDLE, SCHED_RR, SCHED_FIFO, SCHED_DEADLINE, not modeled)", s)
}

func (p *rtParse) global(n *jnode, path string) error {
	if err := p.object(n, path); err != nil {
		return err
	}
	if err := p.uniqueKeys(n, path, nil); err != nil {
		return err
	}
	for _, f := range n.obj {
		fp := join(path, f.key)
		var err error
		switch f.key {
		case "duration":
			var v int64
			v, err = p.int(f.val, fp)
			if err == nil && v > 0 {
				if v > 1e6 {
					return p.errf(f.val, fp, "%d s is out of range (at most 1e6)", v)
				}
				p.cfg.duration = v * 1e9
			} else if err == nil && v < -1 {
				return p.errf(f.val, fp, "must be seconds > 0, or -1 to run until every thread ends; got %d", v)
			}
		case "default_policy":
			err = p.policy(f.val, fp)
		case "calibration":
			if f.val.kind != jStr && f.val.kind != jNum {
				err = p.errf(f.val, fp, "must be a string (\"CPU0\") or an integer (ns per loop), got %v", f.val.kind)
			}
		case "logdir", "log_basename", "io_device":
			_, err = p.string(f.val, fp)
		case "log_size":
			if f.val.kind != jStr && f.val.kind != jNum {
				err = p.errf(f.val, fp, "must be a string or an integer, got %v", f.val.kind)
			}
		case "ftrace":
			if f.val.kind != jStr && f.val.kind != jBool {
				err = p.errf(f.val, fp, "must be a string or a boolean, got %v", f.val.kind)
			}
		case "pi_enabled", "lock_pages", "gnuplot", "cumulative_slack":
			if f.val.kind != jBool {
				err = p.errf(f.val, fp, "must be a boolean, got %v", f.val.kind)
			}
		case "mem_buffer_size":
			_, err = p.int(f.val, fp)
		default:
			err = p.errf(f.val, fp, "unknown field (allowed: duration, calibration, default_policy, pi_enabled, lock_pages, logdir, log_basename, log_size, ftrace, gnuplot, io_device, mem_buffer_size, cumulative_slack)")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// resources is rt-app's legacy resource table: accepted, as rt-app now
// creates resources by name when the events use them.
func (p *rtParse) resources(n *jnode, path string) error {
	if err := p.object(n, path); err != nil {
		return err
	}
	for _, f := range n.obj {
		fp := join(path, f.key)
		if err := p.object(f.val, fp); err != nil {
			return err
		}
		for _, g := range f.val.obj {
			if g.key != "type" {
				return p.errf(g.val, join(fp, g.key), "unknown field (allowed: type)")
			}
			s, err := p.string(g.val, join(fp, g.key))
			if err != nil {
				return err
			}
			if !slices.Contains([]string{"mutex", "wait", "signal", "broadcast", "sync", "sleep", "run", "timer", "barrier"}, s) {
				return p.errf(g.val, join(fp, g.key), "unknown resource type %q (allowed: mutex, wait, signal, broadcast, sync, sleep, run, timer, barrier)", s)
			}
		}
	}
	return nil
}

func (p *rtParse) cpus(n *jnode, path string) ([]int, error) {
	if n.kind != jArr {
		return nil, p.errf(n, path, "must be an array of CPU numbers, got %v", n.kind)
	}
	if len(n.arr) == 0 {
		return nil, p.errf(n, path, "empty: list at least one CPU (allowed: 0-%d)", p.ncpu-1)
	}
	var cpus []int
	for i, c := range n.arr {
		ep := fmt.Sprintf("%s[%d]", path, i)
		v, err := p.int(c, ep)
		if err != nil {
			return nil, err
		}
		if v < 0 || v >= int64(p.ncpu) {
			return nil, p.errf(c, ep, "CPU %d out of range for this machine (allowed: 0-%d)", v, p.ncpu-1)
		}
		if !slices.Contains(cpus, int(v)) {
			cpus = append(cpus, int(v))
		}
	}
	slices.Sort(cpus)
	return cpus, nil
}

func (p *rtParse) utilClamp(n *jnode, path string) (int64, error) {
	v, err := p.int(n, path)
	if err != nil {
		return 0, err
	}
	if v < -1 || v > 1024 {
		return 0, p.errf(n, path, "%d out of range (allowed: 0-1024, or -1 for unset)", v)
	}
	return v, nil
}

// Keys rt-app takes at phase level that this model sets once per thread.
var rtThreadOnly = []string{"policy", "priority", "nice", "util_min", "util_max", "taskgroup"}

// rt-app keys this model does not implement.
var rtUnmodeled = []string{"dl-runtime", "dl-period", "dl-deadline", "nodes_membind", "membind_nodes"}

func (p *rtParse) task(name string, n *jnode, path string) (*rtTask, error) {
	if err := p.object(n, path); err != nil {
		return nil, err
	}
	if err := p.uniqueKeys(n, path, isEventKey); err != nil {
		return nil, err
	}
	t := &rtTask{name: name, instances: 1, loop: -1, path: path}
	var phases *jnode
	hasEvents := false
	var nice, prio *jnode
	utilMin, utilMax := int64(-1), int64(-1)
	var utilNode *jnode
	for _, f := range n.obj {
		fp := join(path, f.key)
		if isEventKey(f.key) {
			hasEvents = true
			continue
		}
		switch f.key {
		case "instance":
			v, err := p.int(f.val, fp)
			if err != nil {
				return nil, err
			}
			if v < 1 || v > 4096 {
				return nil, p.errf(f.val, fp, "%d out of range (allowed: 1-4096)", v)
			}
			t.instances = int(v)
		case "delay":
			v, err := p.usec(f.val, fp)
			if err != nil {
				return nil, err
			}
			t.delay = v
		case "loop":
			v, err := p.int(f.val, fp)
			if err != nil {
				return nil, err
			}
			if v == 0 || v < -1 || v > 1e9 {
				return nil, p.errf(f.val, fp, "%d out of range (allowed: -1 for forever, or 1-1e9)", v)
			}
			t.loop = int(v)
		case "cpus":
			c, err := p.cpus(f.val, fp)
			if err != nil {
				return nil, err
			}
			t.cpus = c
		case "policy":
			if err := p.policy(f.val, fp); err != nil {
				return nil, err
			}
		case "priority":
			prio = f.val
		case "nice":
			nice = f.val
		case "taskgroup":
			s, err := p.string(f.val, fp)
			if err != nil {
				return nil, err
			}
			if s != "" && s != "/" {
				if !strings.HasPrefix(s, "/") {
					return nil, p.errf(f.val, fp, "%q must start with / (a cgroup path such as /app/db; \"\" for none)", s)
				}
				for _, part := range strings.Split(strings.Trim(s, "/"), "/") {
					if part == "" {
						return nil, p.errf(f.val, fp, "%q has an empty path element", s)
					}
				}
			}
			t.taskgroup = strings.TrimRight(s, "/") // "/": the root group
		case "util_min":
			v, err := p.utilClamp(f.val, fp)
			if err != nil {
				return nil, err
			}
			utilMin, utilNode = v, f.val
		case "util_max":
			v, err := p.utilClamp(f.val, fp)
			if err != nil {
				return nil, err
			}
			utilMax, utilNode = v, f.val
		case "phases":
			phases = f.val
		default:
			if slices.Contains(rtUnmodeled, f.key) {
				return nil, p.errf(f.val, fp, "not modeled (SCHED_DEADLINE and NUMA binding are not part of the emulator)")
			}
			return nil, p.errf(f.val, fp, "unknown field (allowed: instance, delay, loop, cpus, policy, priority, nice, taskgroup, util_min, util_max, phases, and the events %s)", rtSupportedEvents)
		}
	}
	// rt-app's "priority" is the nice value of a SCHED_OTHER thread.
	if nice != nil && prio != nil {
		return nil, p.errf(nice, join(path, "nice"), "give either priority or nice (rt-app's priority is the nice value of a SCHED_OTHER thread)")
	}
	for _, x := range []struct {
		n   *jnode
		key string
	}{{prio, "priority"}, {nice, "nice"}} {
		if x.n == nil {
			continue
		}
		v, err := p.int(x.n, join(path, x.key))
		if err != nil {
			return nil, err
		}
		if v < -20 || v > 19 {
			return nil, p.errf(x.n, join(path, x.key), "nice %d out of range (allowed: -20-19)", v)
		}
		t.nice = int(v)
	}
	if utilMin >= 0 || utilMax >= 0 {
		lo, hi := max(utilMin, 0), utilMax
		if hi < 0 {
			hi = 1024
		}
		if lo > hi {
			return nil, p.errf(utilNode, join(path, "util_min"), "util_min %d > util_max %d (allowed: 0 <= util_min <= util_max <= 1024)", lo, hi)
		}
		t.clamp = &[2]uint32{uint32(lo), uint32(hi)}
	}
	timers := map[string]int{}
	if phases != nil {
		pp := join(path, "phases")
		if hasEvents {
			return nil, p.errf(n, path, "events must be inside phases when the task has a phases object")
		}
		if err := p.object(phases, pp); err != nil {
			return nil, err
		}
		if len(phases.obj) == 0 {
			return nil, p.errf(phases, pp, "empty: at least one phase with events is needed")
		}
		if err := p.uniqueKeys(phases, pp, nil); err != nil {
			return nil, err
		}
		for _, f := range phases.obj {
			ph, err := p.phase(f.key, f.val, join(pp, f.key), true, timers, t)
			if err != nil {
				return nil, err
			}
			t.phases = append(t.phases, ph)
		}
	} else {
		// One implicit phase: the task object's events; its loop is the
		// task's (rt-app: same number of rows).
		if !hasEvents {
			return nil, p.errf(n, path, "no events and no phases: the task needs events (%s)", rtSupportedEvents)
		}
		ph, err := p.phase("", n, path, false, timers, t)
		if err != nil {
			return nil, err
		}
		t.phases = append(t.phases, ph)
	}
	t.timers = make([]string, len(timers))
	for name, i := range timers {
		t.timers[i] = name
	}
	t.timerAbs = make([]bool, len(timers))
	for _, ph := range t.phases {
		for _, e := range ph.events {
			if e.kind == rtTimer && e.abs {
				t.timerAbs[e.res] = true
			}
		}
	}
	if err := p.checkTask(t); err != nil {
		return nil, err
	}
	return t, nil
}

// phase parses a phase object (or, with ownObject false, the events of a
// task object that has no phases).
func (p *rtParse) phase(name string, n *jnode, path string, ownObject bool, timers map[string]int, t *rtTask) (rtPhase, error) {
	ph := rtPhase{name: name, loop: 1, node: n, path: path}
	if err := p.object(n, path); err != nil {
		return ph, err
	}
	if ownObject {
		if err := p.uniqueKeys(n, path, isEventKey); err != nil {
			return ph, err
		}
	}
	for _, f := range n.obj {
		fp := join(path, f.key)
		if kind, ok := eventKind(f.key); ok {
			e, err := p.event(kind, f.val, fp, timers)
			if err != nil {
				return ph, err
			}
			ph.events = append(ph.events, e)
			continue
		}
		if unsupportedEvent(f.key) {
			return ph, p.errf(f.val, fp, "event not supported by the emulator (supported: %s)", rtSupportedEvents)
		}
		if !ownObject {
			continue // a task key, parsed by task()
		}
		switch f.key {
		case "loop":
			v, err := p.int(f.val, fp)
			if err != nil {
				return ph, err
			}
			if v == 0 || v < -1 || v > 1e9 {
				return ph, p.errf(f.val, fp, "%d out of range (allowed: -1 for forever, or 1-1e9)", v)
			}
			ph.loop = int(v)
		case "cpus":
			c, err := p.cpus(f.val, fp)
			if err != nil {
				return ph, err
			}
			ph.cpus = c
		default:
			if slices.Contains(rtThreadOnly, f.key) {
				return ph, p.errf(f.val, fp, "not supported at phase level: the emulator sets it once per thread (move it to %s)", t.path)
			}
			if slices.Contains(rtUnmodeled, f.key) {
				return ph, p.errf(f.val, fp, "not modeled (SCHED_DEADLINE and NUMA binding are not part of the emulator)")
			}
			return ph, p.errf(f.val, fp, "unknown field (allowed: loop, cpus, and the events %s)", rtSupportedEvents)
		}
	}
	if len(ph.events) == 0 {
		return ph, p.errf(n, path, "no events: a phase needs at least one of %s", rtSupportedEvents)
	}
	if !ownObject {
		// The task's loop counts iterations of its only phase.
		ph.loop = 1
	}
	return ph, nil
}

func (p *rtParse) event(kind rtEvKind, n *jnode, path string, timers map[string]int) (rtEvent, error) {
	e := rtEvent{kind: kind, node: n, path: path}
	var err error
	switch kind {
	case rtRun, rtRuntime, rtSleep:
		e.ns, err = p.usec(n, path)
	case rtTimer:
		if err := p.object(n, path); err != nil {
			return e, err
		}
		if err := p.uniqueKeys(n, path, nil); err != nil {
			return e, err
		}
		var ref string
		var period *jnode
		for _, f := range n.obj {
			fp := join(path, f.key)
			switch f.key {
			case "ref":
				if ref, err = p.string(f.val, fp); err != nil {
					return e, err
				}
			case "period":
				period = f.val
			case "mode":
				s, err := p.string(f.val, fp)
				if err != nil {
					return e, err
				}
				switch s {
				case "relative":
				case "absolute":
					e.abs = true
				default:
					return e, p.errf(f.val, fp, "unknown mode %q (allowed: relative, absolute)", s)
				}
			default:
				return e, p.errf(f.val, fp, "unknown field (allowed: ref, period, mode)")
			}
		}
		if ref == "" {
			return e, p.errf(n, join(path, "ref"), "missing: a timer needs a ref name")
		}
		if period == nil {
			return e, p.errf(n, join(path, "period"), "missing: a timer needs a period in usec")
		}
		if e.ns, err = p.usec(period, join(path, "period")); err != nil {
			return e, err
		}
		if e.ns == 0 {
			return e, p.errf(period, join(path, "period"), "must be > 0 usec")
		}
		i, ok := timers[ref]
		if !ok {
			i = len(timers)
			timers[ref] = i
		}
		e.res = i
	case rtLock, rtUnlock:
		s, err := p.string(n, path)
		if err != nil {
			return e, err
		}
		if s == "" {
			return e, p.errf(n, path, "empty mutex name")
		}
		e.res = p.cfg.mutexID(s)
	case rtSignal, rtBroad:
		s, err := p.string(n, path)
		if err != nil {
			return e, err
		}
		if s == "" {
			return e, p.errf(n, path, "empty condition name")
		}
		e.res = p.cfg.condID(s)
	case rtWait, rtSync:
		if err := p.object(n, path); err != nil {
			return e, err
		}
		if err := p.uniqueKeys(n, path, nil); err != nil {
			return e, err
		}
		var ref, mutex string
		for _, f := range n.obj {
			fp := join(path, f.key)
			switch f.key {
			case "ref":
				ref, err = p.string(f.val, fp)
			case "mutex":
				mutex, err = p.string(f.val, fp)
			default:
				err = p.errf(f.val, fp, "unknown field (allowed: ref, mutex)")
			}
			if err != nil {
				return e, err
			}
		}
		if ref == "" {
			return e, p.errf(n, join(path, "ref"), "missing: name the condition")
		}
		if mutex == "" {
			return e, p.errf(n, join(path, "mutex"), "missing: name the mutex held around the wait")
		}
		e.res = p.cfg.condID(ref)
		e.mutex = p.cfg.mutexID(mutex)
	case rtYield:
		if n.kind != jStr {
			err = p.errf(n, path, "must be a string (may be empty), got %v", n.kind)
		}
	}
	e.kind = kind
	return e, err
}

// checkTask replays a thread's events in order: a mutex is unlocked (or
// waited with) only when held, never locked twice, and released by the
// end of the phases (or a loop would relock it); the thread must use
// time somewhere, or it would spin.
func (p *rtParse) checkTask(t *rtTask) error {
	held := map[int]bool{}
	timed := false
	for _, ph := range t.phases {
		phTimed := false
		iters := 1
		if ph.loop != 1 {
			iters = 2 // a second iteration catches a lock left held
		}
		for range iters {
			for _, e := range ph.events {
				switch e.kind {
				case rtRun, rtRuntime, rtSleep:
					if e.ns > 0 {
						phTimed = true
					}
				case rtTimer:
					phTimed = true
				case rtLock:
					if held[e.res] {
						return p.errf(e.node, e.path, "mutex %q is already held here (rt-app mutexes are not recursive; unlock it first)", p.cfg.mutexes[e.res])
					}
					held[e.res] = true
				case rtUnlock:
					if !held[e.res] {
						return p.errf(e.node, e.path, "mutex %q is not held here (lock it earlier in the phase order)", p.cfg.mutexes[e.res])
					}
					delete(held, e.res)
				case rtWait, rtSync:
					if !held[e.mutex] {
						return p.errf(e.node, e.path, "mutex %q must be held around the wait (lock it before, as pthread_cond_wait() requires)", p.cfg.mutexes[e.mutex])
					}
				}
			}
		}
		if ph.loop < 0 && !phTimed {
			return p.errf(ph.node, ph.path, "loops forever without a run, runtime, sleep or timer event: it would spin without using time")
		}
		timed = timed || phTimed
	}
	for m := range held {
		return p.errf(t.phases[len(t.phases)-1].node, t.path, "mutex %q is still held at the end of the phases (unlock it in the phase order)", p.cfg.mutexes[m])
	}
	if !timed {
		return p.errf(t.phases[0].node, t.path, "no run, runtime, sleep or timer event with a duration: the thread would spin without using time")
	}
	return nil
}

// checkEnds rejects a description that never ends: a thread looping
// forever needs a duration.
func (c *rtConfig) checkEnds(file string) error {
	if c.duration > 0 {
		return nil
	}
	for _, t := range c.tasks {
		if t.loop < 0 {
			return flagErr("-f", "%s: %s.loop: -1 (forever, the default with phases) needs global.duration > 0 or -d SECONDS; or give the task a loop count", file, t.path)
		}
		for _, ph := range t.phases {
			if ph.loop < 0 {
				return flagErr("-f", "%s: %s.loop: -1 (forever) needs global.duration > 0 or -d SECONDS", file, ph.path)
			}
		}
	}
	return nil
}
