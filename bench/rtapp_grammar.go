package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The rt-app grammar (rtapp.go): which keys each object of a description
// takes and what reads each one's value, as tables. A table is the
// grammar of one kind of object (the top level, global, a task, a phase,
// a timer, a wait), in the order its error messages list the keys: the
// reader and the "unknown field (allowed: ...)" message come from the
// same rows, so they cannot drift apart. Events are a table of their own,
// matched by prefix (run0, timer1), as rt-app's parse_task_event_data()
// matches them.

// rtMaxThreads caps the threads of a description (instances summed), as
// hackbench's tasks are capped.
const rtMaxThreads = 1 << 16

// rtKey is one key an object takes: its name and the reader of its value
// into dst, the object being built.
type rtKey[T any] struct {
	name string
	read func(p *rtParse, dst T, n *jnode, path string) error
	// thread marks a task key that rt-app also takes in a phase and this
	// model sets once per thread (a phase names it in its error).
	thread bool
}

// rtKeys is the grammar of one kind of object.
type rtKeys[T any] []rtKey[T]

// allowed lists the keys, for the error of an unknown one.
func (ks rtKeys[T]) allowed() string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func (ks rtKeys[T]) lookup(name string) (rtKey[T], bool) {
	for _, k := range ks {
		if k.name == name {
			return k, true
		}
	}
	return rtKey[T]{}, false
}

// read reads object n's keys into dst in file order: a key of the table
// with its reader; any other with other (nil: none), which reports
// whether it took the key; a key neither takes is an unknown field, whose
// error lists the table's keys and then more (the events a task or phase
// also takes).
func (ks rtKeys[T]) read(p *rtParse, dst T, n *jnode, path string, other func(f jfield, fp string) (bool, error), more string) error {
	for _, f := range n.obj {
		fp := join(path, f.key)
		if k, ok := ks.lookup(f.key); ok {
			if err := k.read(p, dst, f.val, fp); err != nil {
				return err
			}
			continue
		}
		if other != nil {
			took, err := other(f, fp)
			if err != nil {
				return err
			}
			if took {
				continue
			}
		}
		return p.errf(f.val, fp, "unknown field (allowed: %s%s)", ks.allowed(), more)
	}
	return nil
}

// readObject reads n, which must be an object without repeated keys,
// with table ks into dst (the global, timer and wait objects).
func readObject[T any](p *rtParse, ks rtKeys[T], dst T, n *jnode, path string) error {
	if err := p.object(n, path); err != nil {
		return err
	}
	if err := p.uniqueKeys(n, path, nil); err != nil {
		return err
	}
	return ks.read(p, dst, n, path, nil, "")
}

// rtAccept is a reader that checks the value's kind and ignores it (keys
// rt-app takes that do not change the model); what names the kinds in the
// error.
func rtAccept[T any](what string, kinds ...jkind) func(*rtParse, T, *jnode, string) error {
	return func(p *rtParse, _ T, n *jnode, path string) error {
		if !slices.Contains(kinds, n.kind) {
			return p.errf(n, path, "must be %s, got %v", what, n.kind)
		}
		return nil
	}
}

// rtAcceptInt is a reader that checks for an integer and ignores it.
func rtAcceptInt[T any](p *rtParse, _ T, n *jnode, path string) error {
	_, err := p.int(n, path)
	return err
}

// rtTop is the top level of a description.
type rtTop struct{ tasks *jnode }

var rtTopKeys = rtKeys[*rtTop]{
	{name: "global", read: func(p *rtParse, _ *rtTop, n *jnode, path string) error { return p.global(n, path) }},
	{name: "tasks", read: func(_ *rtParse, top *rtTop, n *jnode, _ string) error { top.tasks = n; return nil }},
	{name: "resources", read: func(p *rtParse, _ *rtTop, n *jnode, path string) error { return p.resources(n, path) }},
}

// rtGlobalKeys is the "global" object: the duration and the default
// policy count; the logging, calibration and memory keys are checked and
// ignored.
var rtGlobalKeys = rtKeys[*rtConfig]{
	{name: "duration", read: func(p *rtParse, c *rtConfig, n *jnode, path string) error {
		v, err := p.int(n, path)
		if err != nil {
			return err
		}
		if v > 0 {
			if v > 1e6 {
				return p.errf(n, path, "%d s is out of range (at most 1e6)", v)
			}
			c.duration = v * 1e9
		} else if v < -1 {
			return p.errf(n, path, "must be seconds > 0, or -1 to run until every thread ends; got %d", v)
		}
		return nil
	}},
	{name: "calibration", read: rtAccept[*rtConfig](`a string ("CPU0") or an integer (ns per loop)`, jStr, jNum)},
	{name: "default_policy", read: func(p *rtParse, _ *rtConfig, n *jnode, path string) error { return p.policy(n, path) }},
	{name: "pi_enabled", read: rtAccept[*rtConfig]("a boolean", jBool)},
	{name: "lock_pages", read: rtAccept[*rtConfig]("a boolean", jBool)},
	{name: "logdir", read: rtAccept[*rtConfig]("a string", jStr)},
	{name: "log_basename", read: rtAccept[*rtConfig]("a string", jStr)},
	{name: "log_size", read: rtAccept[*rtConfig]("a string or an integer", jStr, jNum)},
	{name: "ftrace", read: rtAccept[*rtConfig]("a string or a boolean", jStr, jBool)},
	{name: "gnuplot", read: rtAccept[*rtConfig]("a boolean", jBool)},
	{name: "io_device", read: rtAccept[*rtConfig]("a string", jStr)},
	{name: "mem_buffer_size", read: rtAcceptInt[*rtConfig]},
	{name: "cumulative_slack", read: rtAccept[*rtConfig]("a boolean", jBool)},
}

// rtResourceTypes are the types of rt-app's legacy resource table.
var rtResourceTypes = []string{"mutex", "wait", "signal", "broadcast", "sync", "sleep", "run", "timer", "barrier"}

// rtResourceKeys is one entry of the legacy resource table.
var rtResourceKeys = rtKeys[any]{
	{name: "type", read: func(p *rtParse, _ any, n *jnode, path string) error {
		s, err := p.string(n, path)
		if err != nil {
			return err
		}
		if !slices.Contains(rtResourceTypes, s) {
			return p.errf(n, path, "unknown resource type %q (allowed: %s)", s, strings.Join(rtResourceTypes, ", "))
		}
		return nil
	}},
}

// rtTaskParse is a task being read: the task, and the keys read after
// the others (the phases, and the nice value and clamps, which depend on
// each other).
type rtTaskParse struct {
	t                *rtTask
	phases           *jnode
	nice, prio       *jnode
	utilMin, utilMax int64
	utilNode         *jnode
}

var rtTaskKeys = rtKeys[*rtTaskParse]{
	{name: "instance", read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) error {
		v, err := p.int(n, path)
		if err != nil {
			return err
		}
		if v < 1 || v > 4096 {
			return p.errf(n, path, "%d out of range (allowed: 1-4096)", v)
		}
		tp.t.instances = int(v)
		return nil
	}},
	{name: "delay", read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) (err error) {
		tp.t.delay, err = p.usec(n, path)
		return err
	}},
	{name: "loop", read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) (err error) {
		tp.t.loop, err = p.loop(n, path)
		return err
	}},
	{name: "cpus", read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) (err error) {
		tp.t.cpus, err = p.cpus(n, path)
		return err
	}},
	{name: "policy", thread: true, read: func(p *rtParse, _ *rtTaskParse, n *jnode, path string) error { return p.policy(n, path) }},
	{name: "priority", thread: true, read: func(_ *rtParse, tp *rtTaskParse, n *jnode, _ string) error { tp.prio = n; return nil }},
	{name: "nice", thread: true, read: func(_ *rtParse, tp *rtTaskParse, n *jnode, _ string) error { tp.nice = n; return nil }},
	{name: "taskgroup", thread: true, read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) error {
		s, err := p.string(n, path)
		if err != nil {
			return err
		}
		if s != "" && s != "/" {
			if !strings.HasPrefix(s, "/") {
				return p.errf(n, path, "%q must start with / (a cgroup path such as /app/db; \"\" for none)", s)
			}
			parts := strings.Split(strings.Trim(s, "/"), "/")
			if len(parts) > MaxGroupDepth {
				return p.errf(n, path, "%d levels is too deep (allowed: at most %d path elements)", len(parts), MaxGroupDepth)
			}
			if strings.IndexFunc(s, unicode.IsControl) >= 0 {
				return p.errf(n, path, "%q holds a control character (allowed: printable path elements)", s)
			}
			for _, part := range parts {
				if part == "" {
					return p.errf(n, path, "%q has an empty path element", s)
				}
			}
		}
		tp.t.taskgroup = strings.TrimRight(s, "/") // "/": the root group
		return nil
	}},
	{name: "util_min", thread: true, read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) (err error) {
		tp.utilMin, err = p.utilClamp(n, path)
		tp.utilNode = n
		return err
	}},
	{name: "util_max", thread: true, read: func(p *rtParse, tp *rtTaskParse, n *jnode, path string) (err error) {
		tp.utilMax, err = p.utilClamp(n, path)
		tp.utilNode = n
		return err
	}},
	{name: "phases", read: func(_ *rtParse, tp *rtTaskParse, n *jnode, _ string) error { tp.phases = n; return nil }},
}

var rtPhaseKeys = rtKeys[*rtPhase]{
	{name: "loop", read: func(p *rtParse, ph *rtPhase, n *jnode, path string) (err error) {
		ph.loop, err = p.loop(n, path)
		return err
	}},
	{name: "cpus", read: func(p *rtParse, ph *rtPhase, n *jnode, path string) (err error) {
		ph.cpus, err = p.cpus(n, path)
		return err
	}},
}

// rtUnmodeled are rt-app keys of a task or phase this model does not
// implement.
var rtUnmodeled = []string{"dl-runtime", "dl-period", "dl-deadline", "nodes_membind", "membind_nodes"}

// rtEvents are the supported events and their readers, in the order the
// messages list them (a key matches the first whose name it is, with a
// numeric suffix or none; no two of them match one key).
var rtEvents = []struct {
	name string
	kind rtEvKind
	read func(p *rtParse, e *rtEvent, n *jnode, path string) error
}{
	{"run", rtRun, (*rtParse).duration},
	{"runtime", rtRuntime, (*rtParse).duration},
	{"sleep", rtSleep, (*rtParse).duration},
	{"timer", rtTimer, (*rtParse).timer},
	{"lock", rtLock, (*rtParse).mutexName},
	{"unlock", rtUnlock, (*rtParse).mutexName},
	{"signal", rtSignal, (*rtParse).condName},
	{"broad", rtBroad, (*rtParse).condName},
	{"wait", rtWait, (*rtParse).wait},
	{"sync", rtSync, (*rtParse).wait},
	{"yield", rtYield, func(p *rtParse, _ *rtEvent, n *jnode, path string) error {
		return rtAccept[*rtEvent]("a string (may be empty)", jStr)(p, nil, n, path)
	}},
}

// rtUnsupportedEvents are rt-app events this model does not implement.
var rtUnsupportedEvents = []string{"barrier", "suspend", "resume", "mem", "iorun", "fork"}

// rtSupportedEvents lists the events, for error messages.
var rtSupportedEvents = func() string {
	names := make([]string, len(rtEvents))
	for i, e := range rtEvents {
		names[i] = e.name
	}
	return strings.Join(names, ", ")
}()

// rtTimerUse is a timer event being read.
type rtTimerUse struct {
	e      *rtEvent
	ref    string
	period *jnode
}

var rtTimerKeys = rtKeys[*rtTimerUse]{
	{name: "ref", read: func(p *rtParse, tu *rtTimerUse, n *jnode, path string) (err error) {
		tu.ref, err = p.string(n, path)
		return err
	}},
	{name: "period", read: func(_ *rtParse, tu *rtTimerUse, n *jnode, _ string) error { tu.period = n; return nil }},
	{name: "mode", read: func(p *rtParse, tu *rtTimerUse, n *jnode, path string) error {
		s, err := p.string(n, path)
		if err != nil {
			return err
		}
		switch s {
		case "relative":
		case "absolute":
			tu.e.abs = true
		default:
			return p.errf(n, path, "unknown mode %q (allowed: relative, absolute)", s)
		}
		return nil
	}},
}

// rtWaitUse is a wait or sync event being read: the condition and the
// mutex held around it.
type rtWaitUse struct{ ref, mutex string }

var rtWaitKeys = rtKeys[*rtWaitUse]{
	{name: "ref", read: func(p *rtParse, wu *rtWaitUse, n *jnode, path string) (err error) {
		wu.ref, err = p.string(n, path)
		return err
	}},
	{name: "mutex", read: func(p *rtParse, wu *rtWaitUse, n *jnode, path string) (err error) {
		wu.mutex, err = p.string(n, path)
		return err
	}},
}

// rtParse is the reader of one description.
type rtParse struct {
	file string
	src  []byte
	ncpu int
	cfg  *rtConfig
	// timers are the current task's timer refs, by index.
	timers map[string]int
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

// loop reads a task's or phase's loop count.
func (p *rtParse) loop(n *jnode, path string) (int, error) {
	v, err := p.int(n, path)
	if err != nil {
		return 0, err
	}
	if v == 0 || v < -1 || v > 1e9 {
		return 0, p.errf(n, path, "%d out of range (allowed: -1 for forever, or 1-1e9)", v)
	}
	return int(v), nil
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

// eventIndex is the row of rtEvents a key names, or -1.
func eventIndex(key string) int {
	for i, e := range rtEvents {
		if rest, ok := strings.CutPrefix(key, e.name); ok && allDigits(rest) {
			return i
		}
	}
	return -1
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
	return eventIndex(key) >= 0 || unsupportedEvent(key)
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
	var top rtTop
	if err := rtTopKeys.read(p, &top, root, "", nil, ""); err != nil {
		return nil, err
	}
	tasks := top.tasks
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

// rtPolicies are rt-app's policies; the first is the one modeled.
var rtPolicies = []string{"SCHED_OTHER", "SCHED_IDLE", "SCHED_RR", "SCHED_FIFO", "SCHED_DEADLINE"}

func (p *rtParse) policy(n *jnode, path string) error {
	s, err := p.string(n, path)
	if err != nil {
		return err
	}
	if s == rtPolicies[0] {
		return nil
	}
	if slices.Contains(rtPolicies, s) {
		return p.errf(n, path, "%s is not modeled: the emulator has the fair class only (allowed: %s)", s, rtPolicies[0])
	}
	return p.errf(n, path, "unknown policy %q (allowed: %s; rt-app also knows %s, not modeled)", s, rtPolicies[0], strings.Join(rtPolicies[1:], ", "))
}

func (p *rtParse) global(n *jnode, path string) error {
	return readObject(p, rtGlobalKeys, p.cfg, n, path)
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
		if err := rtResourceKeys.read(p, nil, f.val, fp, nil, ""); err != nil {
			return err
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

func (p *rtParse) unmodeled(n *jnode, path string) error {
	return p.errf(n, path, "not modeled (SCHED_DEADLINE and NUMA binding are not part of the emulator)")
}

func (p *rtParse) task(name string, n *jnode, path string) (*rtTask, error) {
	if err := p.object(n, path); err != nil {
		return nil, err
	}
	if err := p.uniqueKeys(n, path, isEventKey); err != nil {
		return nil, err
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return nil, p.errf(n, "tasks", "the thread name %q holds a control character (allowed: printable characters; the name is the tables' and the trace's comm)", name)
	}
	tp := &rtTaskParse{t: &rtTask{name: name, instances: 1, loop: -1, path: path}, utilMin: -1, utilMax: -1}
	t := tp.t
	hasEvents := false
	err := rtTaskKeys.read(p, tp, n, path, func(f jfield, fp string) (bool, error) {
		switch {
		case isEventKey(f.key):
			hasEvents = true // read by phase()
			return true, nil
		case slices.Contains(rtUnmodeled, f.key):
			return false, p.unmodeled(f.val, fp)
		}
		return false, nil
	}, ", and the events "+rtSupportedEvents)
	if err != nil {
		return nil, err
	}
	// rt-app's "priority" is the nice value of a SCHED_OTHER thread.
	if tp.nice != nil && tp.prio != nil {
		return nil, p.errf(tp.nice, join(path, "nice"), "give either priority or nice (rt-app's priority is the nice value of a SCHED_OTHER thread)")
	}
	for _, x := range []struct {
		n   *jnode
		key string
	}{{tp.prio, "priority"}, {tp.nice, "nice"}} {
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
	if tp.utilMin >= 0 || tp.utilMax >= 0 {
		lo, hi := max(tp.utilMin, 0), tp.utilMax
		if hi < 0 {
			hi = 1024
		}
		if lo > hi {
			return nil, p.errf(tp.utilNode, join(path, "util_min"), "util_min %d > util_max %d (allowed: 0 <= util_min <= util_max <= 1024)", lo, hi)
		}
		t.clamp = &[2]uint32{uint32(lo), uint32(hi)}
	}
	p.timers = map[string]int{}
	if phases := tp.phases; phases != nil {
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
			ph, err := p.phase(f.key, f.val, join(pp, f.key), true, t)
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
		ph, err := p.phase("", n, path, false, t)
		if err != nil {
			return nil, err
		}
		t.phases = append(t.phases, ph)
	}
	t.timers = make([]string, len(p.timers))
	for name, i := range p.timers {
		t.timers[i] = name
	}
	t.timerAbs = make([]bool, len(p.timers))
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
func (p *rtParse) phase(name string, n *jnode, path string, ownObject bool, t *rtTask) (rtPhase, error) {
	ph := rtPhase{name: name, loop: 1, node: n, path: path}
	if err := p.object(n, path); err != nil {
		return ph, err
	}
	// event reads f if it is an event.
	event := func(f jfield, fp string) (bool, error) {
		if i := eventIndex(f.key); i >= 0 {
			e := rtEvent{kind: rtEvents[i].kind, node: f.val, path: fp}
			if err := rtEvents[i].read(p, &e, f.val, fp); err != nil {
				return false, err
			}
			ph.events = append(ph.events, e)
			return true, nil
		}
		if unsupportedEvent(f.key) {
			return false, p.errf(f.val, fp, "event not supported by the emulator (supported: %s)", rtSupportedEvents)
		}
		return false, nil
	}
	if ownObject {
		if err := p.uniqueKeys(n, path, isEventKey); err != nil {
			return ph, err
		}
		err := rtPhaseKeys.read(p, &ph, n, path, func(f jfield, fp string) (bool, error) {
			if took, err := event(f, fp); took || err != nil {
				return took, err
			}
			if k, ok := rtTaskKeys.lookup(f.key); ok && k.thread {
				return false, p.errf(f.val, fp, "not supported at phase level: the emulator sets it once per thread (move it to %s)", t.path)
			}
			if slices.Contains(rtUnmodeled, f.key) {
				return false, p.unmodeled(f.val, fp)
			}
			return false, nil
		}, ", and the events "+rtSupportedEvents)
		if err != nil {
			return ph, err
		}
	} else {
		for _, f := range n.obj {
			if _, err := event(f, join(path, f.key)); err != nil {
				return ph, err
			} // the task's own keys are task()'s
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

// duration reads run, runtime and sleep: a time in usec.
func (p *rtParse) duration(e *rtEvent, n *jnode, path string) (err error) {
	e.ns, err = p.usec(n, path)
	return err
}

// timer reads a timer event: clock_nanosleep() to the next period
// boundary of the timer named by ref.
func (p *rtParse) timer(e *rtEvent, n *jnode, path string) error {
	tu := &rtTimerUse{e: e}
	if err := readObject(p, rtTimerKeys, tu, n, path); err != nil {
		return err
	}
	if tu.ref == "" {
		return p.errf(n, join(path, "ref"), "missing: a timer needs a ref name")
	}
	if tu.period == nil {
		return p.errf(n, join(path, "period"), "missing: a timer needs a period in usec")
	}
	var err error
	if e.ns, err = p.usec(tu.period, join(path, "period")); err != nil {
		return err
	}
	if e.ns == 0 {
		return p.errf(tu.period, join(path, "period"), "must be > 0 usec")
	}
	i, ok := p.timers[tu.ref]
	if !ok {
		i = len(p.timers)
		p.timers[tu.ref] = i
	}
	e.res = i
	return nil
}

// name reads the name of a mutex or condition (what).
func (p *rtParse) name(n *jnode, path, what string) (string, error) {
	s, err := p.string(n, path)
	if err == nil && s == "" {
		err = p.errf(n, path, "empty %s name", what)
	}
	return s, err
}

// mutexName reads lock and unlock: the mutex's name.
func (p *rtParse) mutexName(e *rtEvent, n *jnode, path string) error {
	s, err := p.name(n, path, "mutex")
	if err == nil {
		e.res = p.cfg.mutexID(s)
	}
	return err
}

// condName reads signal and broad: the condition's name.
func (p *rtParse) condName(e *rtEvent, n *jnode, path string) error {
	s, err := p.name(n, path, "condition")
	if err == nil {
		e.res = p.cfg.condID(s)
	}
	return err
}

// wait reads wait and sync: the condition and the mutex held around it.
func (p *rtParse) wait(e *rtEvent, n *jnode, path string) error {
	var wu rtWaitUse
	if err := readObject(p, rtWaitKeys, &wu, n, path); err != nil {
		return err
	}
	if wu.ref == "" {
		return p.errf(n, join(path, "ref"), "missing: name the condition")
	}
	if wu.mutex == "" {
		return p.errf(n, join(path, "mutex"), "missing: name the mutex held around the wait")
	}
	e.res = p.cfg.condID(wu.ref)
	e.mutex = p.cfg.mutexID(wu.mutex)
	return nil
}
