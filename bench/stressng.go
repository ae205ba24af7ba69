package bench

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// stress-ng (ColinIanKing/stress-ng) with three of its scheduler-class
// stressors, read from V0.15.04, the version lkp-tests' PKGBUILD pinned
// until December 2023 (the lkp-base and tgload-stressng runs of October
// 2023 ran it; later versions changed nanosleep's sleeps):
//
//   - nanosleep (stress-nanosleep.c): each worker process starts
//     --nanosleep-threads pthreads (default 8); a thread's bogo op is one
//     pass of `for (i = 1 << 18; i > 0; i >>= 1)` over 19 nanosleep()s of
//     stress_mwc32modn(i) + 8 ns (uniform in [8, i+7]), each between two
//     clock_gettime(CLOCK_MONOTONIC) calls; the worker's own thread
//     sleeps 10 ms at a time (shim_usleep_interruptible(10000)) and sums
//     the threads' counters.
//   - sem (stress-sem.c): each worker starts --sem-procs pthreads
//     (default 2) on one POSIX semaphore of value 1; a thread loops
//     sem_getvalue(), then sem_trywait() (odd i) or sem_timedwait() with
//     an expired time (even i), and on success counts a bogo op,
//     sem_post()s and, on a coin flip (stress_mwc1()), sched_yield()s or
//     usleep(0)s. The worker's own thread pause()s.
//   - switch (stress-switch.c), default method pipe: the worker forks a
//     child; the parent counts a bogo op and write()s one byte into a
//     pipe2(O_DIRECT) whose size is set to one page (F_SETPIPE_SZ: one
//     buffer slot, so the pipe is full after one packet), the child
//     read()s it. Each write after the first finds the pipe full and
//     sleeps until the child's read wakes it (sync), and each write wakes
//     the sleeping child (sync): two switches per op on one CPU.
//
// A nanosleep() arms an hrtimer with the task's timer slack, 50 µs for
// SCHED_OTHER (emu.SleepRange, hrtimer_nanosleep()): usleep(0) sleeps until
// its CPU's next timer interrupt, at most the slack.
//
// Simplified: sem's semaphore is never found taken (it is held only
// between the acquire and the post, a few instructions of user code with
// no syscall between), so sem_trywait() and sem_timedwait() always
// succeed and sem_post() never makes the futex wake syscall; the
// semaphore's cache line moving between the two threads' cores is not
// priced (it is user memory, not a modeled kernel line). The switch
// pipe's single slot is the emu.Pipe's first of 16 (the ring's lines are
// the same ones). The workers' main threads that only pause() or wait,
// and the stress-ng parent, are not tasks. The user code between
// syscalls is compute at the sngUser* cycle counts [E].
type stressNG struct {
	Common
	nanosleep, sem, sw instFlag
	nanosleepThreads   int
	semProcs           int
	switchMethod       string
	timeout            timeoutFlag
	metricsBrief       bool
	metrics            bool
	times              bool
	verify, noRandSeed bool
	m                  *hwmodel.Machine
	stressors          []*sngStressor
}

// sngStressor is one stressor's instances: their tasks and what each
// counted. ops[k] and user[k] belong to tasks[k] and are written only by
// its program (on its CPU), read after the run and, ops, at chunk
// boundaries (Units), where every CPU is stopped.
type sngStressor struct {
	name      string
	instances int
	tasks     []*emu.Task
	ops       []int64 // bogo ops
	user      []int64 // user compute issued, ns
}

// The user code between a stressor's syscalls, in cycles [E]: a
// nanosleep thread's stress_mwc32modn() and two vDSO clock_gettime()s
// (rdtsc, ~25 cycles each on x86) with the overrun arithmetic; a sem
// thread's sem_getvalue(), the acquire's cmpxchg, the counter and
// sem_post()'s atomic add, and stress_mwc1(); a switch parent's loop
// (inc_counter(), keep_stressing()); a nanosleep worker's sum of its
// threads' counters.
const (
	sngUserNanosleep = 150
	sngUserSem       = 200
	sngUserSwitch    = 50
	sngUserWorker    = 50
)

// Limits: stress-ng's own (MAX_NANOSLEEP_THREADS 1024, MIN/MAX_SEM_POSIX_PROCS
// 2..64, STRESS_PROCS_MAX 8192 instances), and maxTasks over all.
const (
	sngMaxInstances = 8192
	sngMaxThreads   = 1024
	sngMinSemProcs  = 2
	sngMaxSemProcs  = 64
	// timerSlackNS is a SCHED_OTHER task's timer_slack_ns (init/init_task.c:
	// .timer_slack_ns = 50000).
	timerSlackNS = 50_000
	// sngWorkerPollNS is the nanosleep worker's shim_usleep_interruptible(10000).
	sngWorkerPollNS = 10_000_000
	// sngPID is the pid printed in the lines (the run has no process).
	sngPID = 4372
)

// instFlag is a stressor's instance count: N workers, 0 for one per
// online CPU; set records that it was given.
type instFlag struct {
	n   int
	set bool
}

func (f *instFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *instFlag) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number of workers", s)
	}
	f.n, f.set = v, true
	return nil
}

// timeoutFlag is -t/--timeout: N[s|m|h|d|y] as stress_get_uint64_time()
// reads it; fractions are accepted here so that a run can be scaled
// below a second.
type timeoutFlag struct {
	ns  int64
	raw string
}

func (f *timeoutFlag) String() string {
	if f == nil {
		return ""
	}
	return f.raw
}

func (f *timeoutFlag) Set(s string) error {
	f.raw = s
	num, unit := s, 1.0
	if n := len(s); n > 0 {
		if u, ok := map[byte]float64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'y': 31556952}[s[n-1]]; ok {
			num, unit = s[:n-1], u
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not a time (allowed: N[s|m|h|d|y], e.g. 60s or 0.05)", s)
	}
	sec := v * unit
	if !(sec > 0) || sec > MaxSeconds {
		return fmt.Errorf("%s is out of range (allowed: more than 0, at most %d s of virtual time)", s, MaxSeconds)
	}
	f.ns = max(1, int64(math.Round(sec*1e9)))
	return nil
}

func init() {
	Register(Spec{
		Name: "stress-ng",
		Doc:  "stress-ng's scheduler stressors nanosleep, sem and switch (V0.15.04, as lkp ran them)",
		Examples: []string{
			"emu run -topo hikey-8 -workload stress-ng --nanosleep 8 -t 0.05 --metrics-brief",
			"emu run -topo spr-2s -workload stress-ng --switch 224 -t 0.01 --metrics-brief -cgroup system.slice/lkp-bootstrap.service",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &stressNG{}
			AddCommon(fs, &w.Common)
			fs.Var(&w.nanosleep, "nanosleep", "start N workers performing short sleeps (0: one per CPU)")
			fs.Var(&w.sem, "sem", "start N workers doing POSIX semaphore operations (0: one per CPU)")
			for _, n := range []string{"switch", "s"} {
				fs.Var(&w.sw, n, "start N workers doing rapid context switches (0: one per CPU)")
			}
			fs.IntVar(&w.nanosleepThreads, "nanosleep-threads", 8, "threads per nanosleep worker (1..1024)")
			fs.IntVar(&w.semProcs, "sem-procs", 2, "threads per sem worker (2..64)")
			fs.StringVar(&w.switchMethod, "switch-method", "pipe", "switch's method (pipe; mq and sem-sysv are not modeled)")
			for _, n := range []string{"t", "timeout"} {
				fs.Var(&w.timeout, n, "run time N[s|m|h|d|y] of virtual time (required here; fractions allowed)")
			}
			fs.BoolVar(&w.metricsBrief, "metrics-brief", false, "print the bogo ops table")
			fs.BoolVar(&w.metrics, "metrics", false, "print the bogo ops table with the CPU used per instance")
			fs.BoolVar(&w.times, "times", false, "print the run's user and system time")
			fs.BoolVar(&w.verify, "verify", false, "accepted (no effect: nothing to verify)")
			fs.BoolVar(&w.noRandSeed, "no-rand-seed", false, "accepted (the seed is emu's -seed)")
			return func(m *hwmodel.Machine) (Workload, error) { return w.validate(m) }
		},
	})
}

func (w *stressNG) validate(m *hwmodel.Machine) (Workload, error) {
	if len(m.CPUs) < 1 {
		return nil, flagErr("-topo", "machine has no CPUs")
	}
	w.m = m
	w.stressors = w.stressors[:0]
	tasks := 0
	// stress-ng's stressor table order: nanosleep, sem, switch.
	for _, st := range []struct {
		name, flag string
		f          *instFlag
		per        int // tasks per instance
	}{
		{"nanosleep", "--nanosleep", &w.nanosleep, w.nanosleepThreads + 1},
		{"sem", "--sem", &w.sem, w.semProcs},
		{"switch", "--switch", &w.sw, 2},
	} {
		if !st.f.set {
			continue
		}
		n := st.f.n
		if n < 0 || n > sngMaxInstances {
			return nil, flagErr(st.flag, "%d workers is out of range (allowed: 0, one per CPU, to %d)", n, sngMaxInstances)
		}
		if n == 0 {
			n = len(m.CPUs)
		}
		if st.per > 0 && n > (maxTasks-tasks)/st.per {
			return nil, flagErr(st.flag, "%d workers of %d tasks each is too many (allowed: at most %d tasks in all)", n, st.per, maxTasks)
		}
		tasks += n * st.per
		w.stressors = append(w.stressors, &sngStressor{name: st.name, instances: n})
	}
	switch {
	case len(w.stressors) == 0:
		return nil, flagErr("--nanosleep", "no stressor given (allowed: one or more of --nanosleep N, --sem N, --switch N)")
	case w.nanosleepThreads < 1 || w.nanosleepThreads > sngMaxThreads:
		return nil, flagErr("--nanosleep-threads", "%d is out of range (allowed: 1..%d)", w.nanosleepThreads, sngMaxThreads)
	case w.semProcs < sngMinSemProcs || w.semProcs > sngMaxSemProcs:
		return nil, flagErr("--sem-procs", "%d is out of range (allowed: %d..%d)", w.semProcs, sngMinSemProcs, sngMaxSemProcs)
	case w.switchMethod != "pipe":
		return nil, flagErr("--switch-method", "method %q is not modeled (allowed: pipe)", w.switchMethod)
	case w.timeout.ns == 0:
		return nil, flagErr("-t", "no run time given (allowed: -t/--timeout N[s|m|h|d|y], e.g. -t 0.05; stress-ng's default of a day is beyond what a host can emulate)")
	}
	return w, nil
}

// cyclesNS is n cycles at m's clock, at least 1 ns.
func cyclesNS(m *hwmodel.Machine, n int) int64 {
	return max(1, int64(math.Round(float64(n)*1000/m.FreqMHz)))
}

func (w *stressNG) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	main := Spread(s, 0) // the stress-ng parent, which forks the workers
	mm := 2              // the next process's address space
	for _, st := range w.stressors {
		st.tasks, st.ops, st.user = st.tasks[:0], st.ops[:0], st.user[:0]
		for inst := 0; inst < st.instances; inst++ {
			worker := s.ForkCPU(main, nil)
			var err error
			switch st.name {
			case "nanosleep":
				err = w.setupNanosleep(s, g, st, worker, mm)
			case "sem":
				err = w.setupSem(s, g, st, worker, mm)
			default:
				err = w.setupSwitch(s, g, st, worker, mm)
				mm++ // the child's
			}
			if err != nil {
				return err
			}
			mm++
		}
	}
	return nil
}

// addTask creates one of a stressor's tasks with prog made for its slot.
func (w *stressNG) addTask(s *emu.Sim, g *emu.TaskGroup, st *sngStressor, comm string, cpu, mm int, sems []*emu.Sem, prog func(k int) emu.Program) error {
	k := len(st.tasks)
	st.ops = append(st.ops, 0)
	st.user = append(st.user, 0)
	t, err := s.NewTask(emu.TaskSpec{Comm: comm, CPU: cpu, Group: g, Prog: prog(k), Sems: sems, MM: mm})
	if err != nil {
		return err
	}
	st.tasks = append(st.tasks, t)
	return nil
}

// setupNanosleep: the worker's threads, each a pass of 19 sleeps per bogo
// op (sngNanosleepThread), and the worker's own 10 ms polling loop.
func (w *stressNG) setupNanosleep(s *emu.Sim, g *emu.TaskGroup, st *sngStressor, worker, mm int) error {
	user := cyclesNS(w.m, sngUserNanosleep)
	for range w.nanosleepThreads {
		err := w.addTask(s, g, st, "stress-ng-nanosleep", s.ForkCPU(worker, nil), mm, nil, func(k int) emu.Program {
			th := &sngNanosleepThread{st: st, k: k, userNS: user, shift: 18}
			return emu.ProgramFunc(func(t *emu.Task) emu.Action { return th.next(t.Rand().IntN) })
		})
		if err != nil {
			return err
		}
	}
	poll := cyclesNS(w.m, sngUserWorker)
	return w.addTask(s, g, st, "stress-ng-nanosleep", worker, mm, nil, func(k int) emu.Program {
		sleep := false
		return emu.ProgramFunc(func(*emu.Task) emu.Action {
			if sleep = !sleep; sleep {
				return emu.SleepRange(sngWorkerPollNS, timerSlackNS).With(hwmodel.OpSyscall)
			}
			st.user[k] += poll
			return emu.Run(poll)
		})
	})
}

// sngNanosleepThread is a nanosleep thread's stress_pthread_func(): each
// pass of `for (i = 1 << 18; i > 0; i >>= 1)` runs the user code around a
// nanosleep() of stress_mwc32modn(i) + 8 ns, and ctxt->counter++ follows
// the loop, once the pass's last nanosleep() has returned: a pass whose
// last sleep is still pending when the run ends is not counted.
type sngNanosleepThread struct {
	st       *sngStressor
	k        int   // the thread's slot in st
	userNS   int64 // the user code per sleep
	shift    int   // the pass's next i = 1 << shift
	sleep    bool  // a nanosleep() is next
	lastDone bool  // the pass's last nanosleep() was asked
}

// next is the thread's next action; intn(n) draws uniformly from [0, n)
// (stress_mwc32modn()).
func (th *sngNanosleepThread) next(intn func(int) int) emu.Action {
	if th.lastDone {
		// The pass's last nanosleep() returned: ctxt->counter++.
		th.lastDone = false
		th.st.ops[th.k]++
	}
	if !th.sleep {
		th.sleep = true
		th.st.user[th.k] += th.userNS
		return emu.Run(th.userNS) // clock_gettime(), stress_mwc32modn()
	}
	th.sleep = false
	nsec := int64(intn(1<<th.shift)) + 8
	if th.shift--; th.shift < 0 {
		th.shift = 18
		th.lastDone = true
	}
	return emu.SleepRange(nsec, timerSlackNS).With(hwmodel.OpSyscall)
}

// setupSem: the worker's threads, each counting an op per acquire, then
// sched_yield() or usleep(0) on a coin flip.
func (w *stressNG) setupSem(s *emu.Sim, g *emu.TaskGroup, st *sngStressor, worker, mm int) error {
	user := cyclesNS(w.m, sngUserSem)
	for range w.semProcs {
		err := w.addTask(s, g, st, "stress-ng-sem", s.ForkCPU(worker, nil), mm, nil, func(k int) emu.Program {
			acquire := true
			return emu.ProgramFunc(func(t *emu.Task) emu.Action {
				if acquire {
					acquire = false
					st.ops[k]++
					st.user[k] += user
					return emu.Run(user)
				}
				acquire = true
				if t.Rand().IntN(2) == 1 {
					return emu.Yield().With(hwmodel.OpSyscall)
				}
				return emu.SleepRange(0, timerSlackNS).With(hwmodel.OpSyscall)
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// setupSwitch: the parent writes a byte per op into a one-slot pipe,
// the forked child reads it.
func (w *stressNG) setupSwitch(s *emu.Sim, g *emu.TaskGroup, st *sngStressor, worker, mm int) error {
	path := &chanPath{
		write: emu.Signal(nil).WithSync(),
		read:  emu.Wait(nil).With(hwmodel.OpSyscall),
		full:  emu.Wait(nil).With(hwmodel.OpSyscall),
		room:  emu.Signal(nil).WithSync(),
	}
	name := fmt.Sprintf("stress-ng-switch.%d", len(st.tasks)/2)
	ch := path.open(name, 1, name+".room")
	p, err := s.NewPipe(emu.PipeSpec{Name: name, Data: ch.data, Writers: 1, Size: 1, CPU: worker})
	if err != nil {
		return err
	}
	cp := copyNS(w.m, 1)
	user := cyclesNS(w.m, sngUserSwitch)
	wait := ch.waitRoom(0).OnPipe(p, emu.PipeWaitRoom, 0)
	send := ch.send().OnPipe(p, emu.PipeWrite, 0)
	err = w.addTask(s, g, st, "stress-ng-switch", worker, mm, []*emu.Sem{ch.space[0]}, func(k int) emu.Program {
		phase, avail := 0, 1
		return emu.ProgramFunc(func(*emu.Task) emu.Action {
			switch phase {
			case 0:
				st.ops[k]++ // inc_counter() before the write
				st.user[k] += user
				if avail == 0 {
					phase = 1
					return wait // pipe_write() finds the pipe full
				}
				avail--
				phase = 2
				return emu.Run(user + cp).With(hwmodel.OpSyscall)
			case 1:
				phase = 2
				return emu.Run(user + cp)
			default:
				phase = 0
				return send
			}
		})
	})
	if err != nil {
		return err
	}
	recv := ch.recv().OnPipe(p, emu.PipeReadWait, 0)
	copyOut := emu.Run(cp).OnPipe(p, emu.PipeCopyOut, 0)
	room := ch.giveRoom(0).OnPipe(p, emu.PipeGiveRoom, 0)
	return w.addTask(s, g, st, "stress-ng-switch", s.ForkCPU(worker, nil), mm+1, []*emu.Sem{ch.data}, func(int) emu.Program {
		phase := 0
		return emu.ProgramFunc(func(*emu.Task) emu.Action {
			phase = (phase + 1) % 3
			switch phase {
			case 1:
				return recv
			case 2:
				return copyOut
			}
			return room // pipe_read() of a full pipe wakes the writer, sync
		})
	})
}

// Limit is the run time (-t).
func (w *stressNG) Limit() int64 { return w.timeout.ns }

// Done: stress-ng runs until its timeout.
func (w *stressNG) Done(*emu.Sim) bool { return false }

// DurationBound: the run is -t long.
func (w *stressNG) DurationBound() bool { return true }

// sngTimes is a stressor's bogo ops and its instances' user and system
// time (getrusage() of each worker: user compute issued, the rest of the
// tasks' run time as system time), over the real time run.
type sngTimes struct {
	ops       int64
	usr, sys  float64 // s
	real      float64 // s
	instances int
}

func (w *stressNG) stats(s *emu.Sim, st *sngStressor) sngTimes {
	r := sngTimes{real: float64(max(s.Now(), 1)) / 1e9, instances: st.instances}
	var usr, all int64
	for k, t := range st.tasks {
		r.ops += st.ops[k]
		u := min(st.user[k], t.SumExecRuntime())
		usr += u
		all += t.SumExecRuntime()
	}
	r.usr, r.sys = float64(usr)/1e9, float64(all-usr)/1e9
	return r
}

func (w *stressNG) Report(out io.Writer, s *emu.Sim) error {
	var b strings.Builder
	inf := func(format string, args ...any) {
		fmt.Fprintf(&b, "stress-ng: info:  [%d] "+format+"\n", append([]any{sngPID}, args...)...)
	}
	sec := float64(w.timeout.ns) / 1e9
	inf("setting to a %s second%s run per stressor", strconv.FormatFloat(sec, 'g', -1, 64), sngDuration(sec))
	var hogs []string
	for _, st := range w.stressors {
		hogs = append(hogs, fmt.Sprintf(" %d %s", st.instances, st.name))
	}
	inf("dispatching hogs:%s", strings.Join(hogs, ","))
	if w.metrics || w.metricsBrief {
		// stress_metrics_dump(): --metrics-brief's table, or --metrics'
		// with the CPU used per instance (RSS Max is not modeled).
		brief := w.metricsBrief
		if brief {
			inf("%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s", "stressor", "bogo ops", "real time", "usr time", "sys time", "bogo ops/s", "bogo ops/s")
			inf("%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s", "", "", "(secs) ", "(secs) ", "(secs) ", "(real time)", "(usr+sys time)")
		} else {
			inf("%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s %12.12s %13.13s", "stressor", "bogo ops", "real time", "usr time", "sys time", "bogo ops/s", "bogo ops/s", "CPU used per", "RSS Max")
			inf("%-13s %9.9s %9.9s %9.9s %9.9s %12s %14s %12.12s %13.13s", "", "", "(secs) ", "(secs) ", "(secs) ", "(real time)", "(usr+sys time)", "instance (%)", "(KB)")
		}
		for _, st := range w.stressors {
			r := w.stats(s, st)
			rate, rateUS := float64(r.ops)/r.real, 0.0
			if r.usr+r.sys > 0 {
				rateUS = float64(r.ops) / (r.usr + r.sys)
			}
			if brief {
				inf("%-13s %9d %9.2f %9.2f %9.2f %12.2f %14.2f", st.name, r.ops, r.real, r.usr, r.sys, rate, rateUS)
			} else {
				cpu := 100 * (r.usr + r.sys) / r.real / float64(r.instances)
				inf("%-13s %9d %9.2f %9.2f %9.2f %12.2f %14.2f %12.2f %13s", st.name, r.ops, r.real, r.usr, r.sys, rate, rateUS, cpu, "n/a")
			}
		}
	}
	run := float64(max(s.Now(), 1)) / 1e9
	if w.times {
		// stress_times_dump(): the children's user and system time.
		var usr, sys float64
		for _, st := range w.stressors {
			r := w.stats(s, st)
			usr, sys = usr+r.usr, sys+r.sys
		}
		avail := float64(len(w.m.CPUs)) * run
		inf("for a %.2fs run time:", run)
		inf("  %8.2fs available CPU time", avail)
		inf("  %8.2fs user time   (%6.2f%%)", usr, 100*usr/avail)
		inf("  %8.2fs system time (%6.2f%%)", sys, 100*sys/avail)
		inf("  %8.2fs total time  (%6.2f%%)", usr+sys, 100*(usr+sys)/avail)
	}
	inf("successful run completed in %.2fs%s", run, sngDuration(run))
	_, err := io.WriteString(out, b.String())
	return err
}

// Units is each stressor's bogo ops so far, in the order of the
// metrics table (Windowed): ops count as stress-ng counts them, when a
// pass ends (a nanosleep thread's 19 sleeps, a sem acquire, a switch
// write), so a window reads the ops that ended in it.
func (w *stressNG) Units() []float64 {
	u := make([]float64, len(w.stressors))
	for i, st := range w.stressors {
		for _, n := range st.ops {
			u[i] += float64(n)
		}
	}
	return u
}

// WindowLKP is lkp's STRESSOR.ops_per_sec of a run whose stressors ended
// perSec[i] bogo ops a second throughout (Windowed): the --metrics-brief
// table's "bogo ops/s (real time)", as the table prints it (two
// decimals) and lkp parses it. Their ops and pass keys stay the whole
// run's (a count, not a rate).
func (w *stressNG) WindowLKP(perSec []float64) map[string]float64 {
	m := map[string]float64{}
	for i, st := range w.stressors {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(perSec[i], 'f', 2, 64), 64)
		m[st.name+".ops_per_sec"] = v
	}
	return m
}

// sngDuration is stress_duration_to_str(): " (1 min, 0.02 secs)" over a
// minute, else "".
func sngDuration(sec float64) string {
	if sec <= 60 {
		return ""
	}
	var parts []string
	for _, u := range []struct {
		name string
		sec  float64
	}{{"year", 31556952}, {"day", 86400}, {"hour", 3600}, {"min", 60}} {
		if v := math.Floor(sec / u.sec); v > 0 {
			plural := ""
			if v > 1 {
				plural = "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s%s", int64(v), u.name, plural))
			sec -= v * u.sec
		}
	}
	parts = append(parts, fmt.Sprintf("%.2f secs", sec))
	return " (" + strings.Join(parts, ", ") + ")"
}

// Metrics: ops_per_sec (primary, every stressor's bogo ops over the real
// time), and per stressor NAME.ops, NAME.ops_per_sec (the table's real
// time rate, lkp's stress-ng.NAME.ops_per_sec) and
// NAME.ops_per_sec_usr_sys.
func (w *stressNG) Metrics(s *emu.Sim) Metrics {
	v := map[string]float64{}
	var ops int64
	var real float64
	for _, st := range w.stressors {
		r := w.stats(s, st)
		ops, real = ops+r.ops, r.real
		v[st.name+".ops"] = float64(r.ops)
		v[st.name+".ops_per_sec"] = float64(r.ops) / r.real
		if r.usr+r.sys > 0 {
			v[st.name+".ops_per_sec_usr_sys"] = float64(r.ops) / (r.usr + r.sys)
		}
	}
	v["ops_per_sec"] = float64(ops) / real
	return Metrics{Primary: "ops_per_sec", HigherIsBetter: true, Values: v}
}
