package bench

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
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
// The mutex and condition model is futex.go's: each mutex used by more
// than one thread is a fifoLock server task and each condition a
// fifoCond, every thread owning one grant semaphore. lock = a request to
// the server (WF_SYNC, as the locker sleeps next) and a wait for the
// grant; unlock = a request, on which the server hands the mutex to the
// first waiter; wait = register with the condition's server, release the
// mutex and block until a signal has re-queued it on the mutex. The
// extra wakeup hops this costs against a real futex are futex.go's. The
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
	mutexes []*fifoLock // the mutex managers
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
				if math.IsNaN(w.durS) || w.durS < 0 || w.durS > MaxSeconds || (w.durS > 0 && w.durS < MinSeconds) {
					return nil, flagErr("-d", "duration %g s is out of range (allowed: %g to %d seconds, or 0 to keep global.duration)", w.durS, MinSeconds, MaxSeconds)
				}
				src, label, err := readRtFile(w.file)
				w.label = label
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
	addMgr := func(req *emu.Sem, prog emu.ProgramFunc) error {
		_, err := s.NewTask(emu.TaskSpec{
			Comm: req.Name, CPU: Spread(s, len(w.threads)+w.nMgr), Group: base,
			Prog: prog, Sems: []*emu.Sem{req},
		})
		w.nMgr++
		return err
	}
	w.mutexes = nil
	for i, req := range sh.mutexReq {
		if req != nil {
			mg := newFIFOLock(cfg.mutexes[i], i, req, sh.grants, 0)
			w.mutexes = append(w.mutexes, mg)
			if err := addMgr(req, mg.next); err != nil {
				return err
			}
		}
	}
	for i, req := range sh.condReq {
		if err := addMgr(req, newFIFOCond(cfg.conds[i], req, sh.mutexReq, sh.grants).next); err != nil {
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
