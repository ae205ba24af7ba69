package bench

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// schbench (masoncl/schbench schbench.c, the current tool: v1.0 of 2023
// and its later commits, default -m 1, -t num_cpus/m, -s 100). Message
// threads and their workers trade a futex each: a worker puts itself on
// its message thread's list (xlist_add) and posts it (fpost), then waits
// on its own futex (fwait); the message thread splices the list, stamps
// one gettimeofday into every waiter's wake_time and posts each
// (xlist_wake_all). The worker's wakeup latency is now - wake_time, in
// usec, recorded only when > 0 (msg_and_wait). Its request is then
// worker_thread()'s loop body: gettimeofday(work_start), usleep(-s),
// do_work() (-n rounds of a naive matrix product of a -F KB footprint),
// and the request latency is now - work_start (--calibrate, -C, takes
// work_start after the usleep). sleep_for_runtime() wakes once a second:
// each pass adds the requests per second since the last pass to the RPS
// histogram, every -i seconds it prints the three histograms, and at -r
// seconds it stops; main() then prints the totals (show_latencies() and
// calc_percentiles(), below) and "average rps" = requests / runtime.
//
// -c selects the loop of schbench before the 2023 rewrite (the 2016-2022
// tool with --cputime, as in the v5.10 LB_SPREAD_LLC thread: "schbench -m
// 2 -t 4 -s 10000 -c 1000000"): a worker spins -c usec (usec_spin) and
// then posts its message thread and waits; the message thread, once
// posted, sleeps -s usec plus a jitter below -s/4 (run_msg_thread: usleep(
// sleeptime + rand_r() % (sleeptime / 4))) before it wakes every worker
// on its list. -s then defaults to that tool's 10000 usec. The report is
// the current tool's in both modes (the old one printed only the wakeup
// percentiles); a request there is the -c spin.
//
// Simplified: a futex post or wait is one syscall (OpSyscall) and a
// posted futex that is already RUNNING is charged like one that was
// BLOCKED; the per-CPU spinlock do_work() takes around the math (the
// tool's penalty for preemption) is not modeled, as with -L; the matrix
// math is compute of n * size^3 multiply-adds at matrixCyclesPerMAC
// cycles each, size = sqrt(F*1024/3/8) as the tool computes it; the main
// thread's once-a-second passes fall exactly on whole seconds (the real
// one drifts by the time a pass takes; the warmup reset, which needs
// runtime > warmup, is taken at the pass of second -w as that drift makes
// it happen). Each worker keeps its histograms per second of the run
// (what the interval prints need); the sched delay lines read the tasks'
// run_delay/pcount (/proc/<tid>/schedstat) at the first barrier after the
// pass, and at the end (the tool reads them after joining the threads, so
// its last line normally shows 0). Not supported: -R (requests-per-
// second mode), -A, -p (pipe mode) and -z are a FlagError naming the
// flag; pinning (-M, -W, -P) and -j are not defined. -m is capped at one
// message thread per CPU and m*(t+1) at schMaxTasksPerCPU tasks per CPU.
type schbench struct {
	Common
	m          *hwmodel.Machine
	msgThreads int
	workers    int // per message thread
	autoT      bool
	runtime    int // s
	sleepUS    int
	cputimeUS  int
	classic    bool
	footprint  int // KB
	ops        int
	calibrate  bool
	noLock     bool
	warmup     int // s, effective (0 when runtime < 30)
	interval   int // s
	workNS     int64
	jsonFile   string
	jobname    string

	wk    []*schWorker // per worker; each mutated only by its task
	msg   []*emu.Task
	tasks []*emu.Task // workers
	// snaps are the sched delay read at the first barrier at or after
	// each pass that prints interval stats; nextPrint is the next such
	// pass (-1: none left), printIt the passes after it.
	snaps     []schedDelay
	nextPrint int
	printIt   *schPasses
	replay    *schReplay
}

// matrixCyclesPerMAC is the cost of one multiply-add of do_some_math()'s
// naive product: the schbench README's calibration run (-F 256 -n 5, a
// 104x104 product five times, 5.6 M multiply-adds) takes 16.9 ms, 3.0 ns
// each, on a 52-CPU host whose clock it does not give; at an assumed
// 2.5 GHz that is 7.5 cycles [E]. It is scaled by the preset's clock.
const matrixCyclesPerMAC = 7.5

// schMaxTasksPerCPU caps m*(t+1), to keep a run's size sane.
const schMaxTasksPerCPU = 128

// schMaxFootprint caps -F (1 TiB, in KB): the matrix size stays exact.
const schMaxFootprint = 1 << 30

// schWorker is one worker's stats, per second bucket of the run: a
// sample at time T (ns) goes to bucket ceil(T/1s), the pass that first
// sees it. Only the buckets not yet folded into the run's totals are
// held (base is the first): Done folds the finished ones at each
// barrier (schReplay), so the memory does not grow with the time run.
type schWorker struct {
	base  int
	wake  []*Hist
	req   []*Hist
	loops []int64
}

// grow makes bucket b exist and returns its index in the slices. A
// sample for a bucket already folded (none is expected: at a barrier at
// time B every CPU's clock has reached B) goes to the first one held.
func (st *schWorker) grow(b int) int {
	i := max(b-st.base, 0)
	for len(st.loops) <= i {
		st.wake = append(st.wake, nil)
		st.req = append(st.req, nil)
		st.loops = append(st.loops, 0)
	}
	return i
}

type schedDelay struct{ msg, worker int64 } // ns

func init() {
	Register(Spec{
		Name: "schbench",
		Doc:  "schbench: message threads wake worker threads; wakeup and request latency percentiles and RPS",
		Examples: []string{
			"emu run -topo hikey-8 -workload schbench -m 2 -t 4 -r 10",
			"emu run -topo hikey-8 -workload schbench -m 2 -t 4 -s 10000 -c 1000000 -r 10",
			"emu run -topo spr-2s -workload schbench -m 2 -F 256 -n 5 -r 30 -cgroup docker",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &schbench{}
			AddCommon(fs, &w.Common)
			var rps, autoRPS, pipe, zero int
			var footprintIgnored int
			// Each flag under schbench's short name and its long_options[]
			// name (getopt_long: --threads 4, --threads=4).
			intFlag := func(p *int, short, long string, def int, usage string) {
				for _, n := range []string{short, long} {
					fs.IntVar(p, n, def, usage+" (schbench -"+short+"/--"+long+")")
				}
			}
			boolFlag := func(p *bool, short, long string, usage string) {
				for _, n := range []string{short, long} {
					fs.BoolVar(p, n, false, usage+" (schbench -"+short+"/--"+long+")")
				}
			}
			intFlag(&w.msgThreads, "m", "message-threads", 1, "number of message threads")
			intFlag(&w.workers, "t", "threads", 0, "worker threads per message thread (0: num_cpus / message threads, rounded up)")
			intFlag(&w.runtime, "r", "runtime", 30, "how long to run (seconds)")
			intFlag(&w.sleepUS, "s", "sleep_usec", 100, "usec a worker sleeps per request (with -c: usec the message thread sleeps before replying, default 10000)")
			fs.IntVar(&w.cputimeUS, "c", 0, "pre-2023 schbench: usec a worker spins per request (selects that tool's loop)")
			fs.IntVar(&w.footprint, "F", 256, "cache footprint of the matrix math (KB) (schbench -F)")
			// long_options[] maps --cache_footprint to 'f', which no case
			// of parse_options() handles: the real tool ignores it.
			fs.IntVar(&footprintIgnored, "cache_footprint", 0, "accepted and ignored, as schbench ignores it (its getopt table maps it to 'f', which it does not handle): use -F")
			intFlag(&w.ops, "n", "operations", 5, "matrix multiplications per request")
			boolFlag(&w.calibrate, "C", "calibrate", "calibration mode: request latency excludes the usleep")
			boolFlag(&w.noLock, "L", "no-locking", "no per-CPU lock during the math (the lock is not modeled either way)")
			intFlag(&w.warmup, "w", "warmuptime", 0, "seconds before the stats are zeroed (ignored when -r < 30)")
			intFlag(&w.interval, "i", "intervaltime", 10, "seconds between interval reports")
			intFlag(&rps, "R", "rps", 0, "requests per second mode (not supported)")
			intFlag(&autoRPS, "A", "auto-rps", 0, "auto RPS mode (not supported)")
			intFlag(&pipe, "p", "pipe", 0, "pipe mode transfer size (not supported)")
			intFlag(&zero, "z", "zerotime", 0, "seconds between stats zeroing (not supported)")
			// --json is emu run's own -json (one object for the whole
			// run), so schbench's JSON is -j only.
			fs.StringVar(&w.jsonFile, "j", "", "also write schbench's JSON to FILE (\"-\": stdout, and the text goes to stderr, where schbench prints it); its time is the run's wall clock, its hostname the emulated machine, its version the kernel profile (schbench -j; --json is emu's own -json)")
			for _, n := range []string{"J", "jobname"} {
				fs.StringVar(&w.jobname, n, "", "a jobname for the JSON output (schbench -J/--jobname)")
			}
			return func(m *hwmodel.Machine) (Workload, error) {
				n := len(m.CPUs)
				set := map[string]bool{}
				fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
				switch {
				case rps != 0:
					return nil, flagErr("-R", "requests-per-second mode is not supported (allowed: 0)")
				case autoRPS != 0:
					return nil, flagErr("-A", "auto-RPS mode is not supported (allowed: 0)")
				case pipe != 0:
					return nil, flagErr("-p", "pipe mode is not supported (allowed: 0)")
				case zero != 0:
					return nil, flagErr("-z", "periodic zeroing is not supported (allowed: 0)")
				case n < 1:
					return nil, flagErr("-topo", "machine has no CPUs")
				case w.msgThreads < 1 || w.msgThreads > n:
					return nil, flagErr("-m", "%d message threads: at most one per CPU on this %d-CPU machine (allowed: 1..%d)", w.msgThreads, n, n)
				case w.workers < 0:
					return nil, flagErr("-t", "worker threads must be >= 0 (0: num_cpus / message threads), got %d", w.workers)
				case w.runtime < 1:
					return nil, flagErr("-r", "runtime must be >= 1 second (schbench's 0, run forever, is not supported), got %d", w.runtime)
				case w.runtime > MaxSeconds:
					return nil, flagErr("-r", "runtime %d s is out of range (allowed: 1..%d seconds of virtual time)", w.runtime, MaxSeconds)
				case w.sleepUS < 0:
					return nil, flagErr("-s", "sleep time must be >= 0 usec, got %d", w.sleepUS)
				case w.cputimeUS < 0:
					return nil, flagErr("-c", "cputime must be >= 0 usec, got %d", w.cputimeUS)
				case w.footprint < 0 || w.footprint > schMaxFootprint:
					return nil, flagErr("-F", "cache footprint %d KB is out of range (allowed: 0..%d KB)", w.footprint, schMaxFootprint)
				case w.ops < 0:
					return nil, flagErr("-n", "operations must be >= 0, got %d", w.ops)
				case w.warmup < 0 || w.warmup > MaxSeconds:
					return nil, flagErr("-w", "warmup %d s is out of range (allowed: 0..%d seconds)", w.warmup, MaxSeconds)
				case w.interval < 0 || w.interval > MaxSeconds:
					return nil, flagErr("-i", "interval %d s is out of range (allowed: 0..%d seconds)", w.interval, MaxSeconds)
				}
				if _, err := unitNS("-s", w.sleepUS, 0, 1000, "usec"); err != nil {
					return nil, err
				}
				if _, err := unitNS("-c", w.cputimeUS, 0, 1000, "usec"); err != nil {
					return nil, err
				}
				if w.workers == 0 {
					// main(): worker_threads = (num_cpus + m - 1) / m.
					w.workers = (n + w.msgThreads - 1) / w.msgThreads
					w.autoT = true
				}
				if w.workers >= schMaxTasksPerCPU*n || w.msgThreads*(w.workers+1) > schMaxTasksPerCPU*n {
					// The product in float: -t near MaxInt64 overflows it.
					return nil, flagErr("-t", "%d message threads x (%d workers + 1) = %.4g tasks, more than %d per CPU on %d CPUs (allowed: -t up to %d with -m %d)",
						w.msgThreads, w.workers, float64(w.msgThreads)*(float64(w.workers)+1), schMaxTasksPerCPU, n, schMaxTasksPerCPU*n/w.msgThreads-1, w.msgThreads)
				}
				w.classic = set["c"]
				if w.classic {
					if !set["s"] {
						w.sleepUS = 10000
					}
					w.workNS = int64(w.cputimeUS) * 1000
				} else {
					// matrix_size = sqrt(cache_footprint_kb * 1024 / 3 / sizeof(unsigned long))
					size := int64(math.Sqrt(float64(w.footprint * 1024 / 3 / 8)))
					if ns := m.CyclesToNS(float64(w.ops) * float64(size) * float64(size) * float64(size) * matrixCyclesPerMAC); ns > float64(maxVirtualNS) {
						return nil, flagErr("-n", "%d matrix multiplications of a %d KB footprint take %.3g s per request (allowed: at most %d s; lower -n or -F)", w.ops, w.footprint, ns/1e9, MaxSeconds)
					}
					w.workNS = int64(m.CyclesToNS(float64(int64(w.ops)*size*size*size) * matrixCyclesPerMAC))
				}
				// A request without a sleep or any work: the threads would
				// post and wake each other without using time (rt-app's
				// check of a phase without a run or sleep, rtapp_config.go).
				// The real tool spins at full speed there; the model
				// cannot step a loop that takes no time.
				if w.sleepUS == 0 && w.workNS == 0 {
					if w.classic {
						return nil, flagErr("-s", "-s 0 with -c 0: the message thread does not sleep and the workers do not spin, so the threads would post and wake each other without using time (allowed: -s or -c above 0)")
					}
					return nil, flagErr("-s", "-s 0 with %d matrix multiplications of a %d KB footprint (no work): the workers would post and wake without using time (allowed: -s above 0, or -n and -F large enough for some work)", w.ops, w.footprint)
				}
				if w.runtime < 30 {
					// parse_options(): if (runtime < 30) warmuptime = 0;
					w.warmup = 0
				}
				w.m = m
				return w, nil
			}
		},
	})
}

// schPass is one pass of sleep_for_runtime()'s loop, at second tick: it
// either zeroes the stats (the warmup pass) or samples the RPS, and may
// print the interval stats.
type schPass struct {
	tick  int
	reset bool
	print bool
}

// schPasses iterates over sleep_for_runtime()'s passes, second 0 to -r
// (one at a time: -r may be a million seconds).
type schPasses struct {
	w        *schbench
	k        int
	lastCalc int
	warmDone bool
}

func (w *schbench) passes() *schPasses { return &schPasses{w: w} }

// next is the next pass, or false after the pass of second -r.
func (it *schPasses) next() (schPass, bool) {
	w := it.w
	k := it.k
	if k > w.runtime {
		return schPass{}, false
	}
	it.k++
	p := schPass{tick: k}
	if w.warmup > 0 && !it.warmDone && k >= w.warmup {
		it.warmDone = true
		p.reset = true
	} else if k-it.lastCalc >= w.interval {
		p.print = true
		it.lastCalc = k
	}
	return p, true
}

// nextPrintTick advances the iterator to the next pass that prints.
func (it *schPasses) nextPrintTick() int {
	for {
		p, ok := it.next()
		if !ok {
			return -1
		}
		if p.print {
			return p.tick
		}
	}
}

func (w *schbench) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	nt := w.workers
	msgSems := make([]*emu.Sem, w.msgThreads)
	wkSems := make([]*emu.Sem, w.msgThreads*nt)
	for i := range msgSems {
		msgSems[i] = emu.NewSem(fmt.Sprintf("schbench-msg%d.futex", i), 0)
	}
	for j := range wkSems {
		wkSems[j] = emu.NewSem(fmt.Sprintf("schbench-worker%d.futex", j), 0)
	}
	w.wk = make([]*schWorker, len(wkSems))
	w.msg = nil
	w.tasks = nil
	w.snaps = nil
	w.printIt = w.passes()
	w.nextPrint = w.printIt.nextPrintTick()
	w.replay = newSchReplay(w)
	for i := range w.msgThreads {
		// thread_data layout: message thread i, then its workers.
		base := i * (nt + 1)
		mine := wkSems[i*nt : (i+1)*nt]
		t, err := s.NewTask(emu.TaskSpec{
			Comm: "schbench", UserSym: "message_thread", CPU: Spread(s, base), Group: g,
			Prog: w.msgProg(msgSems[i], mine), Sems: []*emu.Sem{msgSems[i]},
		})
		if err != nil {
			return err
		}
		w.msg = append(w.msg, t)
		for j := range nt {
			k := i*nt + j
			w.wk[k] = &schWorker{}
			t, err := s.NewTask(emu.TaskSpec{
				Comm: "schbench", UserSym: "worker_thread", CPU: Spread(s, base+1+j), Group: g,
				Prog: w.workerProg(w.wk[k], j, msgSems[i], wkSems[k]), Sems: []*emu.Sem{wkSems[k]},
			})
			if err != nil {
				return err
			}
			w.tasks = append(w.tasks, t)
		}
	}
	return nil
}

// msgProg is message_thread() -> run_msg_thread(): wait to be posted
// (fwait), in the pre-2023 loop sleep -s usec + jitter, then
// xlist_wake_all(): splice the list of waiting workers, take one
// gettimeofday for all of them and post each. A posting worker's signal
// carries its index, so the pending signals are the list (the futex
// itself coalesces posts; the list does not); xlist_add prepends, so the
// newest poster is woken first.
func (w *schbench) msgProg(sem *emu.Sem, workers []*emu.Sem) emu.Program {
	const (
		phWait = iota
		phSplice
		phWake
	)
	var list []int
	var stamp int64
	phase := phWait
	afterWait := false
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		if afterWait {
			list = append(list, int(t.Stamp()))
			afterWait = false
		}
		for {
			switch phase {
			case phWait:
				if len(list) == 0 {
					afterWait = true
					if sem.Pending() > 0 {
						return emu.Wait(sem) // the futex is already RUNNING: no syscall
					}
					return emu.Wait(sem).With(hwmodel.OpSyscall) // FUTEX_WAIT
				}
				phase = phSplice
				if w.classic && w.sleepUS > 0 {
					// usleep(sleeptime + jitter), jitter = rand_r() % (sleeptime / 4)
					d := int64(w.sleepUS)
					if j := w.sleepUS / 4; j > 0 {
						d += int64(t.Rand().IntN(j))
					}
					return emu.Sleep(d * 1000).With(hwmodel.OpSyscall)
				}
			case phSplice:
				// xlist_splice(): every worker that has posted.
				if sem.Pending() > 0 {
					afterWait = true
					return emu.Wait(sem)
				}
				stamp = t.Now()
				phase = phWake
			case phWake:
				if len(list) == 0 {
					phase = phWait
					continue
				}
				i := list[len(list)-1]
				list = list[:len(list)-1]
				// fpost() of a BLOCKED futex: FUTEX_WAKE, wake_time = stamp.
				return emu.SignalStamp(workers[i], stamp).With(hwmodel.OpSyscall)
			}
		}
	})
}

// workerProg is worker_thread(): msg_and_wait() (post the message
// thread, wait, record the wakeup latency), then the request: current
// tool, usleep(-s) and do_work() timed from work_start; pre-2023 (-c),
// usec_spin(-c) before posting.
func (w *schbench) workerProg(st *schWorker, idx int, msgSem, mine *emu.Sem) emu.Program {
	const (
		phPost = iota
		phWait
		phWoken
		phSlept
		phWorked
		phSpin // classic: inside usec_spin()
	)
	phase := phPost
	if w.classic {
		phase = phSlept
	}
	var workStart int64
	bucket := func(now int64) int { return min(int((now+1e9-1)/1e9), w.runtime) }
	add := func(hs func() []*Hist, now, from int64) {
		// tvdelta() of two gettimeofday()s, recorded when > 0.
		if d := now/1000 - from/1000; d > 0 {
			i := st.grow(bucket(now))
			h := hs()
			if h[i] == nil {
				h[i] = NewHist()
			}
			h[i].Add(uint64(d))
		}
	}
	wakeHists := func() []*Hist { return st.wake }
	reqHists := func() []*Hist { return st.req }
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch phase {
			case phPost:
				// xlist_add(msg_thread, td); fpost(&msg_thread->futex)
				phase = phWait
				return emu.SignalStamp(msgSem, int64(idx)).With(hwmodel.OpSyscall)
			case phWait:
				// fwait(&td->futex)
				phase = phWoken
				if mine.Pending() > 0 {
					return emu.Wait(mine)
				}
				return emu.Wait(mine).With(hwmodel.OpSyscall)
			case phWoken:
				now := t.Now()
				add(wakeHists, now, t.Stamp())
				phase = phSlept
				if w.classic {
					continue
				}
				if !w.calibrate {
					workStart = now
				}
				if w.sleepUS > 0 {
					return emu.Sleep(int64(w.sleepUS) * 1000).With(hwmodel.OpSyscall)
				}
			case phSlept:
				if w.classic || w.calibrate {
					workStart = t.Now()
				}
				phase = phWorked
				if w.classic {
					phase = phSpin
					continue
				}
				if w.workNS > 0 {
					return emu.Run(w.workNS)
				}
			case phSpin:
				// usec_spin(): gettimeofday() until -c usec of wall
				// time have passed since the spin began, however much
				// of it the worker ran: a worker sharing its CPU
				// spins as long as one alone, not twice as long.
				// Simplified: the clock is read every spinCheckNS of
				// the worker's CPU time, so a spin ends up to that much
				// CPU time late.
				if left := workStart + w.workNS - t.Now(); left > 0 {
					return emu.Run(min(left, spinCheckNS))
				}
				phase = phWorked
			case phWorked:
				now := t.Now()
				st.loops[st.grow(bucket(now))]++
				add(reqHists, now, workStart)
				phase = phPost
			}
		}
	})
}

// spinCheckNS is how much CPU time the classic worker's usec_spin() runs
// between two looks at the clock in the model (the real loop reads
// gettimeofday() every few tens of ns).
const spinCheckNS = 100_000

// Limit is the runtime: sleep_for_runtime() stops the run at -r seconds.
func (w *schbench) Limit() int64 { return int64(w.runtime) * 1e9 }

// Done takes the sched delay snapshots of the interval prints; the run
// ends at its time limit.
func (w *schbench) Done(s *emu.Sim) bool {
	for w.nextPrint >= 0 && s.Now() >= int64(w.nextPrint)*1e9 {
		w.snaps = append(w.snaps, w.schedDelay())
		w.nextPrint = w.printIt.nextPrintTick()
	}
	// The buckets up to two seconds behind the barrier are final.
	w.replay.foldTo(int(s.Now()/1e9)-2, w.runtime)
	return false
}

func (w *schbench) DurationBound() bool { return true }

// schedDelay is collect_sched_delay(): the average over the message
// threads and over the workers of run_delay / pcount.
func (w *schbench) schedDelay() schedDelay {
	avg := func(ts []*emu.Task) int64 {
		var sum int64
		for _, t := range ts {
			if t.Stats.Pcount > 0 {
				sum += t.Stats.RunDelay / t.Stats.Pcount
			}
		}
		return sum / int64(max(len(ts), 1))
	}
	return schedDelay{msg: avg(w.msg), worker: avg(w.tasks)}
}

// schStats is struct stats as show_latencies() reads it.
type schStats struct {
	h        *Hist
	min, max uint64
}

func histStats(h *Hist) schStats { return schStats{h: h, min: h.Min(), max: h.Max()} }

// addRPS is add_lat(&rps_stats, rps): min is replaced whenever it is 0,
// so the pass at second 0 (rps 0) does not stick.
func (s *schStats) addRPS(v uint64) {
	s.max = max(s.max, v)
	if s.min == 0 || v < s.min {
		s.min = v
	}
	s.h.Add(v)
}

var schPlist = []float64{20, 50, 90, 99, 99.9}

const (
	plist20  = 1 << 0
	plist50  = 1 << 1
	plist90  = 1 << 2
	plist99  = 1 << 3
	plist999 = 1 << 4

	plistForLat = plist50 | plist90 | plist99 | plist999
	plistForRPS = plist20 | plist50 | plist90
)

// schPercentiles is calc_percentiles(): the value of each percentile of
// the list, and the samples between it and the one before.
func schPercentiles(h *Hist, plist []float64) (vals, counts []uint64) {
	vals = make([]uint64, len(plist))
	counts = make([]uint64, len(plist))
	nr := float64(h.Count())
	keys := make([]int, 0, len(h.buckets))
	for k := range h.buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sum uint64
	j := 0
	if len(keys) == 0 {
		// Every threshold is 0: the first bucket (value 0) meets them all.
		return vals, counts
	}
	for _, k := range keys {
		sum += h.buckets[k]
		for j < len(plist) && float64(sum) >= plist[j]/100.0*nr {
			vals[j] = platIdxToVal(k)
			counts[j] = sum
			j++
		}
		if j == len(plist) {
			break
		}
	}
	var last uint64
	for i := 1; i < len(plist); i++ {
		last += counts[i-1]
		counts[i] -= last
	}
	return vals, counts
}

// showLatencies is show_latencies().
func showLatencies(out io.Writer, s schStats, label, units string, runtime int, mask, star uint) {
	vals, counts := schPercentiles(s.h, schPlist)
	fmt.Fprintf(out, "%s percentiles (%s) runtime %d (s) (%d total samples)\n", label, units, runtime, s.h.Count())
	for i, p := range schPlist {
		bit := uint(1) << i
		if mask&bit == 0 {
			continue
		}
		mark := "  "
		if bit == star {
			mark = "* "
		}
		fmt.Fprintf(out, "\t%s%2.1fth: %-10d (%d samples)\n", mark, p, vals[i], counts[i])
	}
	fmt.Fprintf(out, "\t  min=%d, max=%d\n", s.min, s.max)
}

// Report replays sleep_for_runtime()'s passes and main()'s final print.
func (w *schbench) Report(out io.Writer, s *emu.Sim) error {
	text, _ := w.report(s)
	_, err := out.Write(text)
	return err
}

// schFinal are the stats main() prints at the end (and writes to -j).
type schFinal struct{ wake, req, rps schStats }

// report is Report's text and the final stats: the passes replayed so
// far (schReplay), the rest up to the last second run, and main()'s
// final print.
func (w *schbench) report(s *emu.Sim) ([]byte, schFinal) {
	endTick, secs := w.ran(s)
	r := w.replay
	r.finish(endTick)
	var b bytes.Buffer
	if w.autoT {
		fmt.Fprintf(&b, "setting worker threads to %d\n", w.workers)
	}
	b.Write(r.text.Bytes())
	if endTick < w.runtime {
		fmt.Fprintf(&b, "stopped early: %.3f s of the %d s runtime ran; the totals below cover that\n", secs, w.runtime)
	}
	fin := schFinal{histStats(r.wake), histStats(r.req), r.rps}
	showLatencies(&b, fin.wake, "Wakeup Latencies", "usec", endTick, plistForLat, plist99)
	showLatencies(&b, fin.req, "Request Latencies", "usec", endTick, plistForLat, plist99)
	showLatencies(&b, fin.rps, "RPS", "requests", endTick, plistForRPS, plist50)
	fmt.Fprintf(&b, "average rps: %.2f\n", float64(r.loops)/secs)
	sd := w.schedDelay()
	fmt.Fprintf(&b, "sched delay: message %d (usec) worker %d (usec)\n", sd.msg/1000, sd.worker/1000)
	return b.Bytes(), fin
}

// Files is -j's file, when given.
func (w *schbench) Files() []OutputFile {
	if w.jsonFile == "" {
		return nil
	}
	return []OutputFile{{Flag: "-j", Path: w.jsonFile}}
}

// WriteFiles writes -j: main()'s write_json_header(), write_json_stats()
// of the wakeup, request and RPS stats, the runtime and
// write_json_footer(), byte for byte: {"normal": {"version": ...,
// "jobname": ..., "hostname": ..., "sched_ext": ..., "cmdline": ...},
// "int": {"time": ..., "<label>_pct<p>": ..., "<label>_min": ...,
// "<label>_max": ..., ..., "runtime": ...}}, no newline at the end.
func (w *schbench) WriteFiles(stdout io.Writer, s *emu.Sim, info RunInfo) error {
	if w.jsonFile == "" {
		return nil
	}
	_, fin := w.report(s)
	var b bytes.Buffer
	b.WriteString("{")
	b.WriteString(`"normal": {`)
	fmt.Fprintf(&b, `"version": "%s",`, schEscape(info.Kernel))
	if w.jobname != "" {
		fmt.Fprintf(&b, `"jobname": "%s",`, schEscape(w.jobname))
	}
	fmt.Fprintf(&b, `"hostname": "%s",`, schEscape(w.m.Name))
	b.WriteString(`"sched_ext": "disabled",`)
	b.WriteString(`"cmdline": "`)
	for i, a := range append([]string{"schbench"}, info.Args...) {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(schEscape(a))
	}
	b.WriteString(`"},`)
	fmt.Fprintf(&b, `"int": {"time": %d, `, info.Unix)
	schJSONStats(&b, fin.wake, "wakeup_latency")
	b.WriteString(", ")
	schJSONStats(&b, fin.req, "request_latency")
	b.WriteString(", ")
	schJSONStats(&b, fin.rps, "rps")
	fmt.Fprintf(&b, `, "runtime": %d`, w.runtime)
	b.WriteString("}}")
	if w.jsonFile == "-" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	f, err := os.Create(w.jsonFile)
	if err != nil {
		return flagErr("-j", "%v", err)
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// schJSONStats is write_json_stats().
func schJSONStats(b *bytes.Buffer, s schStats, label string) {
	vals, _ := schPercentiles(s.h, schPlist)
	for i, p := range schPlist {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, `"%s_pct%2.1f": %d`, label, p, vals[i])
	}
	fmt.Fprintf(b, `, "%s_min": %d,`, label, s.min)
	fmt.Fprintf(b, `"%s_max": %d`, label, s.max)
}

// schEscape is escape_string(): a backslash before each double quote
// (the tool escapes nothing else). Here a backslash is escaped too, so
// that the file stays JSON whatever the argument.
func schEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// ran is the last pass that ran (second -r, or fewer when the run was
// stopped early) and the seconds run.
func (w *schbench) ran(s *emu.Sim) (tick int, secs float64) {
	now := s.Now()
	if now >= w.Limit() {
		return w.runtime, float64(w.runtime)
	}
	return int(now / 1e9), float64(max(now, 1)) / 1e9
}

func (w *schbench) Metrics(s *emu.Sim) Metrics {
	endTick, secs := w.ran(s)
	// Since the pass of second -w zeroed the stats, when it ran.
	w.replay.finish(endTick)
	wake, req := w.replay.wake, w.replay.req
	pct := func(h *Hist, p float64) float64 {
		v, _ := schPercentiles(h, []float64{p})
		return float64(v[0])
	}
	return Metrics{Primary: "wakeup_p99_usec", HigherIsBetter: false, Values: map[string]float64{
		"wakeup_p50_usec":  pct(wake, 50),
		"wakeup_p90_usec":  pct(wake, 90),
		"wakeup_p95_usec":  pct(wake, 95),
		"wakeup_p99_usec":  pct(wake, 99),
		"wakeup_p999_usec": pct(wake, 99.9),
		"wakeup_max_usec":  float64(wake.Max()),
		"wakeup_samples":   float64(wake.Count()),
		"request_p50_usec": pct(req, 50),
		"request_p99_usec": pct(req, 99),
		"average_rps":      float64(w.replay.loops) / secs,
	}}
}
