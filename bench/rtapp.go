package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// rt-app (github.com/scheduler-tools/rt-app): a user's own load described
// in JSON (doc/tutorial.txt), a subset of rt-app's grammar with its names:
//
//	{
//	  "global": { "duration": 2, "default_policy": "SCHED_OTHER" },
//	  "tasks": {
//	    "thread0": {
//	      "instance": 4, "cpus": [0, 1], "priority": 0, "taskgroup": "/app/db",
//	      "util_min": 256, "util_max": 1024, "loop": -1,
//	      "phases": {
//	        "p1": { "loop": 10, "run": 1000, "sleep": 2000 },
//	        "p2": { "lock": "mtx", "run": 200, "unlock": "mtx" },
//	        "p3": { "runtime": 500, "timer": { "ref": "tick", "period": 10000 } }
//	      }
//	    }
//	  }
//	}
//
// Objects are ordered, as rt-app (json-c) reads them: phases run in file
// order and events in a phase run in file order. A key may repeat (two
// "run" in a phase run twice, as workgen's renaming to run0, run1 would
// make them), and an event key may carry a numeric suffix (run0, timer1),
// as rt-app matches event names by prefix (parse_task_event_data()).
// Decoding is strict: an unknown key, a wrong type or a value out of
// range is an error naming its JSON path, e.g.
// "tasks.worker.phases.p1.foo: unknown field".
//
// What is modeled, mirroring src/rt-app.c:
//   - thread_body(): instance threads per task object, an initial delay,
//     phases run "loop" times each, the whole phase list "loop" times
//     (-1 forever); one rt-app log row per phase iteration ("loops").
//   - run_event(): run and runtime compute (emu.Run), sleep is nanosleep()
//     (a timed sleep after the syscall entry), timer is clock_nanosleep()
//     TIMER_ABSTIME on the timer's next period boundary: t_next starts at
//     the use case's start (t_first, plus the task's delay) and advances
//     by period on each use; if it is already past, the activation missed
//     (negative slack) and a relative timer restarts from now, an absolute
//     one keeps its grid (a timer is absolute if any use says "mode":
//     "absolute", as rt-app's timer resource). wu_lat is the delay from
//     t_next to the task running again, as rt-app measures it after
//     clock_nanosleep().
//   - lock/unlock of a named mutex (pthread_mutex), signal/broad/wait/sync
//     of a named condition (pthread_cond), yield (sched_yield()).
//   - set_thread_affinity() per phase ("cpus" at task and phase level),
//     nice (rt-app's "priority" of a SCHED_OTHER thread; "nice" is
//     accepted as a synonym), util_min/util_max (sched_setattr() uclamp),
//     taskgroup (rt-app_taskgroups.c: a cgroup path, each distinct path
//     created once, under -cgroup when it is given).
//
// The mutex and condition model. An emu.Sem has one waiter, its owner, so
// a mutex that several threads wait for cannot be one semaphore, and
// threads may share nothing but semaphores. Each mutex used by more than
// one thread gets a lock-manager task that owns the mutex's state (owner
// and FIFO queue of waiters) and a request semaphore; every thread owns
// one grant semaphore. lock = signal the manager (stamp: op, mutex,
// thread; WF_SYNC as the locker sleeps next) and wait for the grant;
// unlock = signal the manager, which hands the mutex to the first waiter
// (a plain wakeup, as FUTEX_WAKE). A condition likewise has a manager
// holding its FIFO of waiters: wait registers with it, releases the mutex
// and blocks; signal (broad) makes the manager re-queue the first (every)
// waiter on the mutex's manager, which grants it the mutex when free, as
// pthread_cond_wait() returns with the mutex held. A signal with no
// waiter is lost, as with pthread_cond_signal(). This costs extra wakeup
// hops that a real futex does not: an uncontended lock is a userspace
// cmpxchg on Linux but here a round trip to the manager (two wakeups,
// usually on the locker's CPU), and every unlock wakes the manager where
// Linux enters the kernel only if there are waiters; a contended handoff
// goes unlocker -> manager -> waiter instead of unlocker -> waiter. The
// manager tasks appear in schedstat and traces as rtapp-mtx:NAME and
// rtapp-cond:NAME. A mutex used by a single thread never blocks and has
// no manager: its lock and unlock are free, as an uncontended futex.
//
// Simplified: only SCHED_OTHER (the emulator models the fair class);
// timers are per thread (rt-app shares a timer whose ref is not "unique"
// between threads, which needs shared state; here every ref behaves as a
// "unique" one); run and runtime are the same (emu.Run is wall time on
// the CPU, there is no frequency or capacity scaling, so "calibration" is
// accepted and ignored); policy, priority, uclamp and taskgroup are set
// once per thread, not per phase; logging keys (logdir, log_basename,
// log_size, ftrace, gnuplot), lock_pages, pi_enabled (PI does not boost
// SCHED_OTHER) and cumulative_slack are accepted and ignored; the events
// mem, iorun, barrier, suspend, resume and fork and SCHED_DEADLINE keys
// are rejected. Lock and condition operations charge no syscall cost
// (the manager hops already cost wakeups); sleep, timer and yield charge
// one. The run ends at global.duration (or -d), or when every thread has
// finished its loops.
//
// Output: rt-app writes one log per thread with a row per phase iteration
// (idx perf run period start end rel_st slack c_duration c_period wu_lat,
// reference/hardware.md D9); this prints one summary line per thread:
// rows (loops), run and sleep time, timer wakeup latency (max, mean),
// timer misses (rows with negative slack), time blocked on mutexes and
// conditions, schedstat run_delay and migrations.
type rtApp struct {
	Common
	file  string
	durS  float64
	m     *hwmodel.Machine
	cfg   *rtConfig
	label string

	threads []*rtThread
	nMgr    int
	mutexes []*rtManager // the mutex managers
}

func init() {
	Register(Spec{
		Name: "rtapp",
		Doc:  "rt-app: a JSON description of periodic and lock-sharing threads (rt-app's grammar, SCHED_OTHER)",
		Examples: []string{
			"emu run -topo hikey-8 -workload rtapp -f bench/testdata/rtapp/example.json",
			"emu run -topo hikey-8 -workload rtapp -f my.json -d 0.5",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &rtApp{}
			AddCommon(fs, &w.Common)
			fs.StringVar(&w.file, "f", "", "rt-app JSON file (- for stdin)")
			fs.Float64Var(&w.durS, "d", 0, "duration in seconds, overriding global.duration (0: keep the file's)")
			return func(m *hwmodel.Machine) (Workload, error) {
				if w.file == "" {
					return nil, flagErr("-f", "an rt-app JSON file is required (e.g. -f bench/testdata/rtapp/example.json, or - for stdin)")
				}
				if math.IsNaN(w.durS) || w.durS < 0 || w.durS > MaxSeconds {
					return nil, flagErr("-d", "duration must be positive seconds (at most %d), or 0 to keep global.duration; got %g", MaxSeconds, w.durS)
				}
				var src []byte
				var err error
				if w.file == "-" {
					src, err = readAtMost(os.Stdin, rtMaxFile)
					w.label = "<stdin>"
				} else {
					var f *os.File
					if f, err = os.Open(w.file); err == nil {
						src, err = readAtMost(f, rtMaxFile)
						f.Close()
					}
					w.label = filepath.Base(w.file)
				}
				if err != nil {
					return nil, flagErr("-f", "%v", err)
				}
				cfg, err := parseRtApp(w.label, src, len(m.CPUs))
				if err != nil {
					return nil, err
				}
				if w.durS > 0 {
					cfg.duration = max(int64(w.durS*1e9), 1)
				}
				if err := cfg.checkEnds(w.label); err != nil {
					return nil, err
				}
				w.cfg = cfg
				w.m = m
				return w, nil
			}
		},
	})
}

// ---- Ordered JSON ----------------------------------------------------

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNum
	jStr
	jArr
	jObj
)

func (k jkind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}[k]
}

// jnode is a JSON value that keeps its object keys in file order, with
// duplicates (encoding/json's maps would lose both).
type jnode struct {
	kind jkind
	off  int64 // where the value starts in the input
	b    bool
	num  json.Number
	str  string
	arr  []*jnode
	obj  []jfield
}

type jfield struct {
	key string
	val *jnode
}

type jparser struct {
	dec   *json.Decoder
	src   []byte
	file  string
	depth int
}

// rtMaxFile bounds the size of an rt-app file (its grammar makes a
// thousand-task description a few hundred KiB).
const rtMaxFile = 64 << 20

// readAtMost reads r to its end, failing beyond max bytes.
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && int64(len(b)) > max {
		return nil, fmt.Errorf("longer than %d MiB", max>>20)
	}
	return b, err
}

// rtMaxThreads caps the threads of a description (instances summed), as
// hackbench's tasks are capped.
const rtMaxThreads = 1 << 16

// jMaxDepth bounds the nesting of arrays and objects (rt-app's grammar
// needs five levels; the parser is recursive).
const jMaxDepth = 64

// parseOrdered decodes one JSON value with the Decoder's Token API.
func parseOrdered(file string, src []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	p := &jparser{dec: dec, src: src, file: file}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	off := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.syntax(err)
		}
		return nil, p.malformed(off, "unexpected data after the top-level object")
	}
	return v, nil
}

func (p *jparser) value() (*jnode, error) {
	off := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	n := &jnode{off: off}
	switch t := tok.(type) {
	case json.Delim:
		if p.depth++; p.depth > jMaxDepth {
			return nil, p.malformed(off, "nested deeper than %d arrays and objects", jMaxDepth)
		}
		defer func() { p.depth-- }()
		switch t {
		case '{':
			n.kind = jObj
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntax(err)
				}
				key, _ := kt.(string) // the decoder only returns string keys
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, jfield{key, v})
			}
		case '[':
			n.kind = jArr
			for p.dec.More() {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
		default:
			return nil, p.malformed(off, "unexpected %q", t)
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, p.syntax(err)
		}
	case string:
		n.kind, n.str = jStr, t
	case json.Number:
		n.kind, n.num = jNum, t
	case bool:
		n.kind, n.b = jBool, t
	case nil:
		n.kind = jNull
	}
	return n, nil
}

// lineCol is the position of the first non-blank byte at or after off
// (InputOffset points before the separators and blanks that precede a
// value).
func lineCol(src []byte, off int64) (int, int) {
	for off < int64(len(src)) && strings.IndexByte(" \t\r\n,:", src[off]) >= 0 {
		off++
	}
	off = min(off, int64(len(src)))
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(src[:off], '\n')
	return line, col
}

func (p *jparser) malformed(off int64, format string, args ...any) error {
	line, col := lineCol(p.src, off)
	return flagErr("-f", "%s:%d:%d (offset %d): malformed JSON: %s", p.file, line, col, off, fmt.Sprintf(format, args...))
}

func (p *jparser) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := max(se.Offset-1, 0)
		line := 1 + bytes.Count(p.src[:min(off, int64(len(p.src)))], []byte("\n"))
		col := int(off) - bytes.LastIndexByte(p.src[:min(off, int64(len(p.src)))], '\n')
		return flagErr("-f", "%s:%d:%d (offset %d): malformed JSON: %v", p.file, line, col, se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return p.malformed(int64(len(p.src)), "unexpected end of input (unclosed object or array?)")
	}
	return p.malformed(p.dec.InputOffset(), "%v", err)
}

// ---- The description ---------------------------------------------------

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

// ---- Running it ----------------------------------------------------------

// Manager request ops, in a stamp: op<<56 | mutex<<32 | thread.
const (
	rtOpLock = iota + 1
	rtOpUnlock
	rtOpWait
	rtOpSignal
	rtOpBroad
)

func rtStamp(op, mutex, thread int) int64 {
	return int64(op)<<56 | int64(mutex)<<32 | int64(thread)
}

func rtUnstamp(v int64) (op, mutex, thread int) {
	return int(v >> 56), int(v>>32) & 0xffffff, int(v & 0xffffffff)
}

// rtShared are the semaphores of the run, built in Setup before any task
// runs and only read afterwards.
type rtShared struct {
	cfg      *rtConfig
	grants   []*emu.Sem // per thread
	mutexReq []*emu.Sem // per mutex; nil: not managed
	condReq  []*emu.Sem // per condition
	syscall  int64
	all      []int // every CPU
}

// What a thread waits for when its program is next called.
const (
	rtNone = iota
	rtPendRun
	rtPendSleep
	rtPendTimer
	rtPendBlock
)

// rtThread is one thread (instance) of a task: its program state and
// results, owned by the CPU it runs on; read at barriers and after the
// run.
type rtThread struct {
	task   *rtTask
	idx    int
	comm   string
	sh     *rtShared
	t      *emu.Task
	tFirst int64

	started    bool
	iterBegun  bool
	phase      int
	phaseLoop  int
	threadLoop int
	ev         int
	step       int
	pending    int
	mark       int64
	wakeAt     int64
	curCPUs    []int
	timerNext  []int64
	timerInit  []bool

	loops, runNS, sleepNS, blockNS int64
	wuMax, wuSum, wuN, misses      int64
	exited                         bool
}

func (th *rtThread) next(t *emu.Task) emu.Action {
	now := t.Now()
	switch th.pending {
	case rtPendRun:
		th.runNS += now - th.mark
	case rtPendSleep:
		th.sleepNS += now - th.mark
	case rtPendTimer:
		th.sleepNS += now - th.mark
		lat := max(now-th.wakeAt, 0)
		th.wuMax = max(th.wuMax, lat)
		th.wuSum += lat
		th.wuN++
	case rtPendBlock:
		th.blockNS += now - th.mark
	}
	th.pending = rtNone
	if !th.started {
		th.started = true
		if th.task.delay > 0 {
			// clock_nanosleep(TIMER_ABSTIME, t_first).
			th.pending, th.mark = rtPendSleep, now
			return emu.Sleep(max(th.tFirst-now, 1))
		}
	}
	for {
		ph := &th.task.phases[th.phase]
		if !th.iterBegun {
			th.iterBegun = true
			// set_thread_affinity(): the phase's CPUs, else the task's,
			// else every CPU; only when they change.
			want := ph.cpus
			if want == nil {
				want = th.task.cpus
			}
			if want == nil {
				want = th.sh.all
			}
			if !slices.Equal(want, th.curCPUs) {
				th.curCPUs = want
				return emu.SetAffinity(want...).With(hwmodel.OpSyscall)
			}
		}
		if th.ev == len(ph.events) {
			th.loops++
			th.iterBegun = false
			th.ev, th.step = 0, 0
			th.phaseLoop++
			if ph.loop > 0 && th.phaseLoop == ph.loop {
				th.phaseLoop = 0
				th.phase++
				if th.phase == len(th.task.phases) {
					th.phase = 0
					th.threadLoop++
					if th.task.loop > 0 && th.threadLoop == th.task.loop {
						th.exited = true
						return emu.Exit()
					}
				}
			}
			continue
		}
		if a, ok := th.event(&ph.events[th.ev], now); ok {
			return a
		}
		th.ev++
		th.step = 0
	}
}

func allCPUs(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = i
	}
	return c
}

// done finishes the current event: the next call starts the next one.
func (th *rtThread) done(a emu.Action) (emu.Action, bool) {
	th.ev++
	th.step = 0
	return a, true
}

// event returns the current event's next action, or false when the event
// is over without one.
func (th *rtThread) event(e *rtEvent, now int64) (emu.Action, bool) {
	sh := th.sh
	switch e.kind {
	case rtRun, rtRuntime:
		// loadwait(): compute; runtime's wall-clock loop is the same
		// here (no frequency scaling).
		if e.ns == 0 {
			return emu.Action{}, false
		}
		th.pending, th.mark = rtPendRun, now
		return th.done(emu.Run(e.ns))
	case rtSleep:
		if e.ns == 0 {
			return emu.Action{}, false
		}
		th.pending, th.mark = rtPendSleep, now
		return th.done(emu.Sleep(e.ns).With(hwmodel.OpSyscall))
	case rtTimer:
		if !th.timerInit[e.res] {
			th.timerInit[e.res] = true
			th.timerNext[e.res] = th.tFirst
		}
		th.timerNext[e.res] += e.ns
		next := th.timerNext[e.res]
		if now < next {
			// clock_nanosleep(TIMER_ABSTIME): the hrtimer is armed
			// after the syscall entry, for next.
			th.pending, th.mark, th.wakeAt = rtPendTimer, now, next
			return th.done(emu.Sleep(max(next-now-sh.syscall, 1)).With(hwmodel.OpSyscall))
		}
		// The period is already over: a miss (negative slack); a
		// relative timer restarts from now.
		th.misses++
		if !th.task.timerAbs[e.res] {
			th.timerNext[e.res] = now
		}
		return emu.Action{}, false
	case rtLock:
		req := sh.mutexReq[e.res]
		if req == nil {
			return emu.Action{}, false // only this thread uses it
		}
		if th.step == 0 {
			th.step = 1
			th.mark = now
			return emu.SignalStamp(req, rtStamp(rtOpLock, e.res, th.idx)).WithSync(), true
		}
		th.pending = rtPendBlock
		return th.done(emu.Wait(sh.grants[th.idx]))
	case rtUnlock:
		req := sh.mutexReq[e.res]
		if req == nil {
			return emu.Action{}, false
		}
		return th.done(emu.SignalStamp(req, rtStamp(rtOpUnlock, e.res, th.idx)))
	case rtSignal:
		return th.done(emu.SignalStamp(sh.condReq[e.res], rtStamp(rtOpSignal, 0, th.idx)))
	case rtBroad:
		return th.done(emu.SignalStamp(sh.condReq[e.res], rtStamp(rtOpBroad, 0, th.idx)))
	case rtWait, rtSync:
		// pthread_cond_wait(): join the condition's waiters, release
		// the mutex, sleep until signalled and the mutex is ours again.
		// sync signals the condition first.
		for {
			switch th.step {
			case 0:
				th.step = 1
				th.mark = now
				if e.kind == rtSync {
					return emu.SignalStamp(sh.condReq[e.res], rtStamp(rtOpSignal, 0, th.idx)), true
				}
			case 1:
				th.step = 2
				a := emu.SignalStamp(sh.condReq[e.res], rtStamp(rtOpWait, e.mutex, th.idx))
				if sh.mutexReq[e.mutex] == nil {
					a = a.WithSync()
				}
				return a, true
			case 2:
				th.step = 3
				if req := sh.mutexReq[e.mutex]; req != nil {
					return emu.SignalStamp(req, rtStamp(rtOpUnlock, e.mutex, th.idx)).WithSync(), true
				}
			default:
				th.pending = rtPendBlock
				return th.done(emu.Wait(sh.grants[th.idx]))
			}
		}
	case rtYield:
		return th.done(emu.Yield().With(hwmodel.OpSyscall))
	}
	panic(fmt.Sprintf("rtapp: unknown event %d", e.kind))
}

// rtManager owns a mutex's or a condition's state: the lock owner and
// the FIFO of lockers, or the FIFO of condition waiters.
type rtManager struct {
	sh    *rtShared
	cond  bool
	id    int
	req   *emu.Sem
	owner int
	queue []int        // mutex: threads waiting for it
	waitq [][2]int     // condition: {thread, mutex} waiting
	out   []emu.Action // signals still to send
	got   bool
}

func (mg *rtManager) next(t *emu.Task) emu.Action {
	if mg.got {
		mg.got = false
		op, mutex, thread := rtUnstamp(t.Stamp())
		if mg.cond {
			mg.condOp(op, mutex, thread)
		} else {
			mg.mutexOp(op, thread)
		}
	}
	if len(mg.out) > 0 {
		a := mg.out[0]
		mg.out = mg.out[1:]
		return a
	}
	mg.got = true
	return emu.Wait(mg.req)
}

// grant hands the mutex to a thread (FUTEX_WAKE of the waiter).
func (mg *rtManager) grant(thread int) {
	mg.owner = thread
	mg.out = append(mg.out, emu.Signal(mg.sh.grants[thread]))
}

func (mg *rtManager) mutexOp(op, thread int) {
	switch op {
	case rtOpLock:
		if mg.owner < 0 {
			mg.grant(thread)
		} else {
			mg.queue = append(mg.queue, thread)
		}
	case rtOpUnlock:
		if mg.owner != thread {
			panic(fmt.Sprintf("rtapp: thread %d unlocks mutex %q held by %d", thread, mg.sh.cfg.mutexes[mg.id], mg.owner))
		}
		mg.owner = -1
		if len(mg.queue) > 0 {
			next := mg.queue[0]
			mg.queue = mg.queue[1:]
			mg.grant(next)
		}
	default:
		panic(fmt.Sprintf("rtapp: mutex manager got op %d", op))
	}
}

func (mg *rtManager) condOp(op, mutex, thread int) {
	wake := func(w [2]int) {
		// The waiter returns holding the mutex: queue it on the mutex.
		if req := mg.sh.mutexReq[w[1]]; req != nil {
			mg.out = append(mg.out, emu.SignalStamp(req, rtStamp(rtOpLock, w[1], w[0])))
		} else {
			mg.out = append(mg.out, emu.Signal(mg.sh.grants[w[0]]))
		}
	}
	switch op {
	case rtOpWait:
		mg.waitq = append(mg.waitq, [2]int{thread, mutex})
	case rtOpSignal:
		if len(mg.waitq) > 0 {
			wake(mg.waitq[0])
			mg.waitq = mg.waitq[1:]
		}
	case rtOpBroad:
		for _, w := range mg.waitq {
			wake(w)
		}
		mg.waitq = nil
	default:
		panic(fmt.Sprintf("rtapp: condition manager got op %d", op))
	}
}

func (w *rtApp) Setup(s *emu.Sim) error {
	base, err := w.Group(s)
	if err != nil {
		return err
	}
	cfg := w.cfg
	groups := map[string]*emu.TaskGroup{"": base}
	// groupFor creates each distinct taskgroup path once, parents first,
	// under the -cgroup group.
	var groupFor func(path string) (*emu.TaskGroup, error)
	groupFor = func(path string) (*emu.TaskGroup, error) {
		if g, ok := groups[path]; ok {
			return g, nil
		}
		i := strings.LastIndexByte(path, '/')
		parent, err := groupFor(path[:i])
		if err != nil {
			return nil, err
		}
		g, err := s.NewGroup(path[i+1:], parent, 100)
		if err != nil {
			return nil, flagErr("-f", "taskgroup %s: %v", path, err)
		}
		groups[path] = g
		return g, nil
	}
	sh := &rtShared{cfg: cfg, syscall: w.m.Cost(hwmodel.OpSyscall), all: allCPUs(len(w.m.CPUs))}
	w.threads = nil
	for _, t := range cfg.tasks {
		for range t.instances {
			idx := len(w.threads)
			th := &rtThread{
				task: t, idx: idx, comm: fmt.Sprintf("%s-%d", t.name, idx), sh: sh,
				tFirst:    s.Now() + t.delay,
				timerNext: make([]int64, len(t.timers)), timerInit: make([]bool, len(t.timers)),
			}
			sh.grants = append(sh.grants, emu.NewSem(th.comm+".grant", 0))
			w.threads = append(w.threads, th)
		}
	}
	sh.mutexReq = make([]*emu.Sem, len(cfg.mutexes))
	for i, name := range cfg.mutexes {
		if cfg.managed(i) {
			sh.mutexReq[i] = emu.NewSem("rtapp-mtx:"+name, 0)
		}
	}
	sh.condReq = make([]*emu.Sem, len(cfg.conds))
	for i, name := range cfg.conds {
		sh.condReq[i] = emu.NewSem("rtapp-cond:"+name, 0)
	}
	order := spreadOrder(s)
	for _, th := range w.threads {
		g, err := groupFor(th.task.taskgroup)
		if err != nil {
			return err
		}
		// The start CPU: the i-th in spread order among the first
		// phase's allowed CPUs (where fork balancing would put it).
		allowed := th.task.phases[0].cpus
		if allowed == nil {
			allowed = th.task.cpus
		}
		if allowed == nil {
			allowed = sh.all
		}
		var cands []int
		for _, c := range order {
			if slices.Contains(allowed, c) {
				cands = append(cands, c)
			}
		}
		th.curCPUs = allowed
		task, err := s.NewTask(emu.TaskSpec{
			Comm: th.comm, Nice: th.task.nice, CPU: cands[th.idx%len(cands)], Group: g,
			Prog: emu.ProgramFunc(th.next), CPUs: allowed, Sems: []*emu.Sem{sh.grants[th.idx]},
			Clamp: th.task.clamp,
		})
		if err != nil {
			return err
		}
		th.t = task
	}
	w.nMgr = 0
	addMgr := func(comm string, mg *rtManager) error {
		_, err := s.NewTask(emu.TaskSpec{
			Comm: comm, CPU: Spread(s, len(w.threads)+w.nMgr), Group: base,
			Prog: emu.ProgramFunc(mg.next), Sems: []*emu.Sem{mg.req},
		})
		w.nMgr++
		return err
	}
	w.mutexes = nil
	for i, req := range sh.mutexReq {
		if req != nil {
			mg := &rtManager{sh: sh, id: i, req: req, owner: -1}
			w.mutexes = append(w.mutexes, mg)
			if err := addMgr(req.Name, mg); err != nil {
				return err
			}
		}
	}
	for i, req := range sh.condReq {
		if err := addMgr(req.Name, &rtManager{sh: sh, cond: true, id: i, req: req, owner: -1}); err != nil {
			return err
		}
	}
	return nil
}

// Limit is the duration, or for a description that ends by itself a
// safety bound: twice every thread's configured time run one after the
// other, plus a second.
func (w *rtApp) Limit() int64 {
	if w.cfg.duration > 0 {
		return w.cfg.duration
	}
	var total float64 // float: a million loops of a million phases must not wrap
	for _, t := range w.cfg.tasks {
		var pass float64
		for _, ph := range t.phases {
			var it float64
			for _, e := range ph.events {
				if e.kind <= rtTimer {
					it += float64(e.ns)
				}
			}
			pass += it * float64(ph.loop)
		}
		total += float64(t.instances) * (float64(t.delay) + pass*float64(t.loop))
	}
	return capNS(2*total + 1_000_000_000)
}

func (w *rtApp) LimitNote() string {
	return fmt.Sprintf("the safety bound of %s without global.duration: twice every thread's configured time, one after the other, plus 1 s (at most %d s)", w.label, MaxSeconds)
}

// DurationBound: global.duration or -d set the run's length.
func (w *rtApp) DurationBound() bool { return w.cfg.duration > 0 }

// Done: every thread has finished its loops (rt-app then exits even
// before its duration).
func (w *rtApp) Done(*emu.Sim) bool {
	for _, th := range w.threads {
		if !th.exited {
			return false
		}
	}
	return true
}

func us(ns int64) int64 { return ns / 1000 }

type rtTotals struct {
	loops, wuMax, wuSum, wuN, misses, runDelay, block, migr int64
}

// deadlock finds a cycle of threads each waiting for a mutex the next
// holds (read between runs or at a barrier): the description of each
// wait, or nil.
func (w *rtApp) deadlock() []string {
	type wait struct {
		mutex, owner int
	}
	waits := map[int]wait{} // thread -> the mutex it is queued on and its owner
	for _, mg := range w.mutexes {
		if mg.owner < 0 {
			continue
		}
		for _, q := range mg.queue {
			waits[q] = wait{mg.id, mg.owner}
		}
	}
	for start := range w.threads {
		seen := map[int]bool{}
		for th := start; ; {
			wt, ok := waits[th]
			if !ok || seen[th] {
				break
			}
			seen[th] = true
			if wt.owner == start {
				// The cycle through start: describe it from start.
				var d []string
				for th := start; ; {
					wt := waits[th]
					d = append(d, fmt.Sprintf("%s waits for mutex %q held by %s", w.threads[th].comm, w.cfg.mutexes[wt.mutex], w.threads[wt.owner].comm))
					if th = wt.owner; th == start {
						return d
					}
				}
			}
			th = wt.owner
		}
	}
	return nil
}

// Failure is a deadlock: the run cannot finish, whatever its length.
func (w *rtApp) Failure() error {
	if d := w.deadlock(); d != nil {
		return fmt.Errorf("rt-app %s deadlocked: %s", w.label, strings.Join(d, "; "))
	}
	return nil
}

// finished: every thread done, or the duration run in full. A run that
// stopped short (interrupted, or at its safety bound) also counts what was
// in progress at its end (a compute, a sleep, a wait for a mutex).
func (w *rtApp) finished(s *emu.Sim) bool {
	return w.Done(s) || (w.cfg.duration > 0 && s.Now() >= w.cfg.duration)
}

// inProgress is a thread's run, sleep and blocked time not yet accounted
// at now.
func (th *rtThread) inProgress(now int64) (run, sleep, block int64) {
	if th.exited {
		return 0, 0, 0
	}
	d := max(now-th.mark, 0)
	switch th.pending {
	case rtPendRun:
		return d, 0, 0
	case rtPendSleep, rtPendTimer:
		return 0, d, 0
	case rtPendBlock:
		return 0, 0, d
	}
	return 0, 0, 0
}

func (w *rtApp) totals(s *emu.Sim) rtTotals {
	var r rtTotals
	partial := !w.finished(s)
	for _, th := range w.threads {
		if partial {
			_, _, b := th.inProgress(s.Now())
			r.block += b
		}
		r.loops += th.loops
		r.wuMax = max(r.wuMax, th.wuMax)
		r.wuSum += th.wuSum
		r.wuN += th.wuN
		r.misses += th.misses
		r.runDelay += th.t.Stats.RunDelay
		r.block += th.blockNS
		r.migr += th.t.Stats.NrMigrations
	}
	return r
}

func (w *rtApp) Report(out io.Writer, s *emu.Sim) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# rt-app %s: tasks %d, threads %d, mutexes %d, conditions %d, manager tasks %d, ran %.3f s\n",
		w.label, len(w.cfg.tasks), len(w.threads), len(w.cfg.mutexes), len(w.cfg.conds), w.nMgr, float64(s.Now())/1e9)
	fmt.Fprintf(&b, "# Policy : SCHED_OTHER; usec; loops: phase iterations (log rows); wu_lat: timer wakeup latency; miss: timer period already over; blocked: on mutexes and conditions\n")
	fmt.Fprintf(&b, "%-16s %8s %10s %10s %10s %10s %6s %10s %10s %6s\n",
		"#thread", "loops", "run", "sleep", "wu_lat_max", "wu_lat_avg", "miss", "blocked", "run_delay", "migr")
	partial := !w.finished(s)
	for _, th := range w.threads {
		avg := int64(0)
		if th.wuN > 0 {
			avg = th.wuSum / th.wuN
		}
		run, sleep, block := th.runNS, th.sleepNS, th.blockNS
		if partial {
			r, sl, b := th.inProgress(s.Now())
			run, sleep, block = run+r, sleep+sl, block+b
		}
		state := ""
		if !th.exited && w.cfg.duration == 0 {
			state = " (not finished)"
		}
		fmt.Fprintf(&b, "%-16s %8d %10d %10d %10d %10d %6d %10d %10d %6d%s\n",
			th.comm, th.loops, us(run), us(sleep), us(th.wuMax), us(avg), th.misses,
			us(block), us(th.t.Stats.RunDelay), th.t.Stats.NrMigrations, state)
	}
	if partial {
		fmt.Fprintf(&b, "# stopped early at %.6f s: the time in progress then (a compute, a sleep, a wait for a mutex) is counted\n", float64(s.Now())/1e9)
	}
	if d := w.deadlock(); d != nil {
		fmt.Fprintf(&b, "# deadlock: %s\n", strings.Join(d, "; "))
	}
	r := w.totals(s)
	mean := 0.0
	if r.wuN > 0 {
		mean = float64(r.wuSum) / float64(r.wuN) / 1e3
	}
	fmt.Fprintf(&b, "# total: %d loops, wu_lat max %d us mean %.1f us over %d timer wakeups, %d misses, blocked %d us, run_delay %d us, %d migrations\n",
		r.loops, us(r.wuMax), mean, r.wuN, r.misses, us(r.block), us(r.runDelay), r.migr)
	_, err := out.Write(b.Bytes())
	return err
}

func (w *rtApp) Metrics(s *emu.Sim) Metrics {
	r := w.totals(s)
	mean := 0.0
	if r.wuN > 0 {
		mean = float64(r.wuSum) / float64(r.wuN) / 1e3
	}
	return Metrics{Primary: "wu_lat_max_us", HigherIsBetter: false, Values: map[string]float64{
		"wu_lat_max_us":  float64(r.wuMax) / 1e3,
		"wu_lat_mean_us": mean,
		"loops":          float64(r.loops),
		"misses":         float64(r.misses),
		"blocked_us":     float64(r.block) / 1e3,
		"run_delay_us":   float64(r.runDelay) / 1e3,
		"migrations":     float64(r.migr),
	}}
}
