package bench

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// hopper is the migration stress test of the 2022 starvation report
// ("[PATCH 0/2] sched/fair: Fix starvation caused by task migration", Tim
// Chen, on v5.15; Walter Mack's test on a 2-socket SPR): about 50 threads
// per CPU, each computing a short burst and then moving itself to another
// CPU with sched_setaffinity(0, {cpu}), over and over. Some tasks were
// starved for more than 70 s; PeterZ traced it to "the vruntime setting
// of a migrated task being too out of sync with the tasks on the target
// run queue" (the cover letter), and his patch blames a task not receiving
// equal service on each runqueue: under the CFS migration protocol a task
// carries its vruntime relative to the source queue's min_vruntime. The
// RFC's PLACE_MIGRATE placed a migrated task at the front or back of the
// destination, and EEVDF carries a clamped lag instead
// (kernel-mechanisms.md section 9). What the thread does not say is which
// path built an offset worth seconds. A queued hop (what this test does)
// carries v - min_vruntime as put_prev_entity()'s update_curr() leaves
// it, no more than the run before it, so the hoppers circulate in a band
// one run wide above each queue's min_vruntime. What makes an offset
// expensive is how slowly min_vruntime then moves: it advances only by
// the fair tasks' own runs, a run's worth per queue length per departure
// at best, and not with the stopper's share of the CPU (emu's
// affinity.go: the stopper's two switches and the move are charged to
// no fair task). A task X right of the band waits about X x the queue
// length x (hop cycle / run), so the time grows without bound as the
// hop path's uncharged work outweighs the runs: a tight hop loop. With
// fixed bursts the long waits are the first ones (below): every burst is
// exactly -b, so after its first run no task falls behind the band. With
// -bdist exp one that ran longer does, and the queues drift apart: each
// hopper's mask is its one CPU, so load balancing cannot move it
// (can_migrate_task()), and nothing evens the queues out but the hops
// themselves. On a real v6.1 kernel (same CFS protocol; 2 vCPUs under qemu, 50 threads
// per CPU) runs vary (interrupt time is charged to the running task
// without CONFIG_IRQ_TIME_ACCOUNTING, and more so in an emulated guest)
// and the waits after a hop reach hundreds of ms; v6.12's EEVDF cuts
// them about 3x and the first waits 5 to 30x (the stop's note has the
// figures).
//
// The test itself was not published; this is its description: -n threads
// per CPU (default 50), each running -b usec bursts (-bdist fixed, or
// exp: exponentially distributed with that mean, for code whose run
// between hops varies) and hopping, -mode
// random (a uniformly drawn other CPU, from the task's seeded generator)
// or next (CPU + 1), for -d ms.
//
// What it measures is each task's runnable waits (enqueue to running,
// what sched_info's run_delay sums, from Sim.OnRunDelay) in a per-task
// histogram. The report is `perf sched latency -s max` (perf-sched(1),
// builtin-sched.c output_lat_thread()) for the -top tasks with the
// longest wait, then a summary: the worst task's max wait, the median
// task's max, the p99.9 of all waits, the waits still open when the run
// ends (perf cannot list those: the task has not run since), and per
// runqueue the spread of the queued tasks' vruntimes and of their offsets
// from the queue's min_vruntime (below zero: placed left of it).
//
// The first waits of each task, before its first hop, are from its fork
// to its first run (the tasks are forked a few µs apart, in a seeded
// order: StartJitter). The summary gives them apart (the max and p99.9
// over the tasks of each task's longest), and the waits after a hop apart
// (from the enqueue on the new CPU to the run there: max and p99.9 over
// the hops); the overall figures cover every wait, preemptions included.
// Under v5.15 CFS a first wait is long: wake_up_new_task() places each
// new task a sched_vslice() right of the last (task_fork_fair(),
// START_DEBIT), up to sysctl_sched_latency/2 right of min_vruntime; the
// hoppers arrive from a queued hop within one burst of their new queue's
// min_vruntime (the CFS protocol carries v - min_vruntime), so
// min_vruntime advances about a burst per queue length at each hop and a
// task forked X right of it waits about X x the queue length (emu's
// TestHopperForkDebitStarvation has the mechanism alone). With
// +PLACE_MIGRATE or EEVDF the same first waits are a few ms.
//
// The move is the kernel's (emu's affinity.go): the stopper preempts the
// task and moves it with move_queued_task(), a dequeue and an enqueue
// without SLEEP/WAKEUP flags, so the CFS relative-vruntime protocol and
// PLACE_MIGRATE act on it as on a load balancing migration; the old
// CPU pays the stopper's switches and the new CPU's rq lock. Simplified:
// it still counts as a wakeup in the counters; the syscall is one
// OpSyscall. perf's TOTAL line covers the tasks listed;
// here it covers every task, listed or not.
type hopper struct {
	Common
	m        *hwmodel.Machine
	perCPU   int
	burstUS  int
	durMS    int
	mode     string
	bdist    string
	top      int
	tasks    []*emu.Task
	st       []*hopStat // per task, mutated only on the task's CPU
	slot     map[*emu.Task]int
	burstNS  int64
	duration int64
	sim      *emu.Sim // for the time the run ended (summary)
}

// hopStat is one task's waits and hops.
type hopStat struct {
	h      *Hist // runnable waits, ns
	sum    int64
	max    int64
	maxEnd int64 // when the longest wait ended
	hops   int64
	// first is the longest wait before the first hop: from fork to the
	// first run (a new task's placement); started: one has been seen. hopH holds the waits that
	// follow a hop (the enqueue on the new CPU to the first run there),
	// maxHop the longest; hopped: the task has hopped and not yet run
	// since (set by its program, read by the run-delay callback on the
	// new CPU after the barrier that moved it).
	started bool
	first   int64
	hopped  bool
	hopH    *Hist
	maxHop  int64
}

const hopMaxPerCPU = 1000

// vruntimeBefore orders two vruntimes as the kernel does, by the sign of
// their difference (fair.c: entity_before(), (s64)(a - b) < 0): a
// vruntime placed left of a queue's zero wraps around the u64.
func vruntimeBefore(a, b uint64) bool { return int64(a-b) < 0 }

func init() {
	Register(Spec{
		Name: "hopper",
		Doc:  "migration stress: threads run short bursts and move themselves to another CPU with sched_setaffinity; per-task runnable wait",
		Examples: []string{
			"emu run -topo xeon-e5-2x10 -workload hopper -n 50 -d 2000",
			"emu run -topo spr-2s -workload hopper -n 50 -b 100 -d 5000 -mode random",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &hopper{}
			AddCommon(fs, &w.Common)
			fs.IntVar(&w.perCPU, "n", 50, "threads per CPU")
			fs.IntVar(&w.burstUS, "b", 100, "usec of compute between hops")
			fs.IntVar(&w.durMS, "d", 1000, "duration (ms)")
			fs.StringVar(&w.mode, "mode", "random", "where a thread hops: random (another CPU, drawn uniformly) or next (CPU + 1)")
			fs.StringVar(&w.bdist, "bdist", "fixed", "burst lengths: fixed (every burst -b) or exp (exponential with mean -b, from each thread's seeded generator)")
			fs.IntVar(&w.top, "top", 10, "tasks listed in the latency table (longest max wait first)")
			return func(m *hwmodel.Machine) (Workload, error) {
				switch {
				case w.perCPU < 1 || w.perCPU > hopMaxPerCPU:
					return nil, flagErr("-n", "threads per CPU must be in 1..%d, got %d", hopMaxPerCPU, w.perCPU)
				case w.burstUS < 1:
					return nil, flagErr("-b", "burst must be >= 1 usec, got %d", w.burstUS)
				case w.durMS < 1:
					return nil, flagErr("-d", "duration must be >= 1 ms, got %d", w.durMS)
				case w.mode != "random" && w.mode != "next":
					return nil, flagErr("-mode", "unknown mode %q (allowed: random, next)", w.mode)
				case w.bdist != "fixed" && w.bdist != "exp":
					return nil, flagErr("-bdist", "unknown burst distribution %q (allowed: fixed, exp)", w.bdist)
				case w.top < 0:
					return nil, flagErr("-top", "must be >= 0, got %d", w.top)
				case len(m.CPUs) < 2:
					return nil, flagErr("-topo", "a thread needs another CPU to hop to: machine has %d", len(m.CPUs))
				}
				var err error
				if w.burstNS, err = unitNS("-b", w.burstUS, 1, 1000, "usec"); err != nil {
					return nil, err
				}
				if w.duration, err = unitNS("-d", w.durMS, 1, 1_000_000, "ms"); err != nil {
					return nil, err
				}
				w.m = m
				return w, nil
			}
		},
	})
}

func (w *hopper) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	w.sim = s
	n := len(w.m.CPUs)
	total := w.perCPU * n
	w.tasks = make([]*emu.Task, 0, total)
	w.st = make([]*hopStat, total)
	w.slot = make(map[*emu.Task]int, total)
	for i := range total {
		cpu := i % n
		st := &hopStat{h: NewHist(), hopH: NewHist()}
		w.st[i] = st
		ran := false
		prog := emu.ProgramFunc(func(t *emu.Task) emu.Action {
			if !ran {
				ran = true
				if w.bdist == "exp" {
					// At least 1 ns: a burst of 0 would hop without
					// computing.
					return emu.Run(max(1, int64(float64(w.burstNS)*t.Rand().ExpFloat64())))
				}
				return emu.Run(w.burstNS)
			}
			ran = false
			cur := t.CPU()
			next := (cur + 1) % n
			if w.mode == "random" {
				next = t.Rand().IntN(n - 1)
				if next >= cur {
					next++
				}
			}
			st.hops++
			st.hopped = true
			return emu.SetAffinity(next).With(hwmodel.OpSyscall)
		})
		t, err := s.NewTask(emu.TaskSpec{Comm: "hopper", CPU: cpu, CPUs: []int{cpu}, Group: g, Prog: prog})
		if err != nil {
			return err
		}
		w.tasks = append(w.tasks, t)
		w.slot[t] = i
	}
	// The map is complete before the run and only read during it.
	s.OnRunDelay(func(t *emu.Task, d int64) {
		i, ok := w.slot[t]
		if !ok {
			return
		}
		st := w.st[i]
		st.h.Add(uint64(d))
		st.sum += d
		if d > st.max {
			st.max = d
			st.maxEnd = t.Now()
		}
		switch {
		case st.hops == 0:
			// Before the first hop: fork to the first run (the
			// fork is delayed by Config.StartJitter).
			st.started, st.first = true, max(st.first, d)
		case st.hopped:
			st.hopped = false
			st.hopH.Add(uint64(d))
			st.maxHop = max(st.maxHop, d)
		}
	})
	return nil
}

func (w *hopper) Limit() int64          { return w.duration }
func (w *hopper) Done(*emu.Sim) bool    { return false }
func (w *hopper) DurationBound() bool   { return true }
func (w *hopper) taskName(i int) string { return fmt.Sprintf("%s:%d", w.tasks[i].Comm, w.tasks[i].PID) }

// byMax orders the tasks as `perf sched latency -s max`: longest max
// wait first (ties: lower pid first).
func (w *hopper) byMax() []int {
	idx := make([]int, len(w.tasks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if w.st[a].max != w.st[b].max {
			return cmp64(w.st[b].max, w.st[a].max)
		}
		return w.tasks[a].PID - w.tasks[b].PID
	})
	return idx
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hopSummary is what the summary block and Metrics report.
type hopSummary struct {
	waits, hops      int64
	worst            int // task index with the longest wait
	maxWait          int64
	worstHop         int // task index with the longest wait after a hop
	maxHopWait       int64
	hopP999          float64 // ns, over the waits after a hop
	hopWaits         int64
	worstFirst       int // task index with the longest first wait
	maxFirstWait     int64
	firstP999        float64 // ns, over the tasks' first waits
	medianTaskMax    int64
	p999, p99, avg   float64 // ns
	spreadMax        uint64  // vruntime spread, ns of virtual time
	spreadCPU        int
	spreadMean       float64
	runnableAtTheEnd int
	// offMin, offMax: the lowest and highest v - min_vruntime of a
	// queued (or running) task at the end, and on which CPUs.
	offMin, offMax       int64
	offMinCPU, offMaxCPU int
	// The waits still open at the end: how many, the longest and whose,
	// and how many of them are of tasks that have not hopped yet.
	open, openFirst int
	maxOpen         int64
	worstOpen       int
}

func (w *hopper) summary() hopSummary {
	var r hopSummary
	all, hop, first := NewHist(), NewHist(), NewHist()
	var sum int64
	maxes := make([]int64, len(w.st))
	for i, st := range w.st {
		all.Merge(st.h)
		hop.Merge(st.hopH)
		if st.started {
			first.Add(uint64(st.first))
			if st.first > r.maxFirstWait {
				r.worstFirst, r.maxFirstWait = i, st.first
			}
		}
		sum += st.sum
		r.hops += st.hops
		maxes[i] = st.max
	}
	order := w.byMax()
	r.worst = order[0]
	r.maxWait = w.st[r.worst].max
	r.waits = int64(all.Count())
	for i, st := range w.st {
		if st.maxHop > r.maxHopWait {
			r.worstHop, r.maxHopWait = i, st.maxHop
		}
	}
	slices.Sort(maxes)
	r.medianTaskMax = maxes[(len(maxes)-1)/2]
	if r.hopWaits = int64(hop.Count()); r.hopWaits > 0 {
		v, _ := hop.Percentile(99.9)
		r.hopP999 = float64(min(int64(v), r.maxHopWait)) // the bucket's bound, not past the max
	}
	if first.Count() > 0 {
		v, _ := first.Percentile(99.9)
		r.firstP999 = float64(min(int64(v), r.maxFirstWait))
	}
	if r.waits > 0 {
		v, _ := all.Percentile(99.9)
		r.p999 = float64(v)
		v, _ = all.Percentile(99)
		r.p99 = float64(v)
		r.avg = float64(sum) / float64(r.waits)
	}
	// The vruntime spread of the tasks on each runqueue at the end, their
	// offsets from their queue's min_vruntime, and the waits still open.
	n := len(w.m.CPUs)
	lo := make([]uint64, n)
	hi := make([]uint64, n)
	cnt := make([]int, n)
	end := w.sim.Now()
	for i, t := range w.tasks {
		st := t.State()
		if st != emu.TaskRunnable && st != emu.TaskRunning {
			continue
		}
		c := t.CPU()
		v := t.Vruntime()
		if cnt[c] == 0 || vruntimeBefore(v, lo[c]) {
			lo[c] = v
		}
		if cnt[c] == 0 || vruntimeBefore(hi[c], v) {
			hi[c] = v
		}
		off := t.MinVruntimeOffset()
		if r.runnableAtTheEnd == 0 || off < r.offMin {
			r.offMin, r.offMinCPU = off, c
		}
		if r.runnableAtTheEnd == 0 || off > r.offMax {
			r.offMax, r.offMaxCPU = off, c
		}
		cnt[c]++
		r.runnableAtTheEnd++
		if st == emu.TaskRunnable {
			r.open++
			if w.st[i].hops == 0 {
				r.openFirst++
			}
			if d := end - t.WaitStart(); d > r.maxOpen {
				r.maxOpen, r.worstOpen = d, i
			}
		}
	}
	var tot float64
	nq := 0
	for c := range n {
		if cnt[c] == 0 {
			continue
		}
		sp := hi[c] - lo[c]
		tot += float64(sp)
		nq++
		if sp > r.spreadMax || nq == 1 {
			r.spreadMax, r.spreadCPU = sp, c
		}
	}
	if nq > 0 {
		r.spreadMean = tot / float64(nq)
	}
	return r
}

const (
	perfLatDashes  = " -------------------------------------------------------------------------------------------------------------------------------------------"
	perfLatFooter  = " -----------------------------------------------------------------------------------------------------------------"
	perfLatFooter2 = " ---------------------------------------------------"
)

// usecStamp is timestamp__scnprintf_usec(): seconds.microseconds.
func usecStamp(ns int64) string { return fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3) }

func (w *hopper) Report(out io.Writer, s *emu.Sim) error {
	var b bytes.Buffer
	// perf_sched__lat(): header, one line per task, TOTAL.
	fmt.Fprintf(&b, "\n%s\n", perfLatDashes)
	fmt.Fprintf(&b, "  Task                  |   Runtime ms  |  Count   | Avg delay ms    | Max delay ms    | Max delay start           | Max delay end          |\n")
	fmt.Fprintf(&b, "%s\n", perfLatDashes)
	var allRun, allCount int64
	for _, t := range w.tasks {
		allRun += t.SumExecRuntime()
	}
	for _, st := range w.st {
		allCount += int64(st.h.Count())
	}
	for k, i := range w.byMax() {
		if k >= w.top {
			break
		}
		st := w.st[i]
		if st.h.Count() == 0 {
			continue // output_lat_thread(): no atoms, no line
		}
		name := fmt.Sprintf("  %s ", w.taskName(i))
		if pad := 24 - len(name); pad > 0 {
			name += strings.Repeat(" ", pad)
		}
		avg := st.sum / int64(st.h.Count())
		fmt.Fprintf(&b, "%s|%11.3f ms |%9d | avg:%8.3f ms | max:%8.3f ms | max start: %12s s | max end: %12s s\n",
			name, float64(w.tasks[i].SumExecRuntime())/1e6, st.h.Count(), float64(avg)/1e6, float64(st.max)/1e6,
			usecStamp(st.maxEnd-st.max), usecStamp(st.maxEnd))
	}
	fmt.Fprintf(&b, "%s\n", perfLatFooter)
	fmt.Fprintf(&b, "  TOTAL:                |%11.3f ms |%9d |\n", float64(allRun)/1e6, allCount)
	fmt.Fprintf(&b, "%s\n\n", perfLatFooter2)

	r := w.summary()
	n := len(w.m.CPUs)
	dist := ""
	if w.bdist == "exp" {
		dist = " (exponential mean)"
	}
	fmt.Fprintf(&b, "hopper: %d threads (%d per CPU x %d CPUs), %d usec bursts%s, %s hops, %d ms\n",
		len(w.tasks), w.perCPU, n, w.burstUS, dist, w.mode, w.durMS)
	ran := w.ran(s)
	if ran < w.duration {
		fmt.Fprintf(&b, "  stopped early:             %.3f ms of the %d ms ran; the figures cover that\n", float64(ran)/1e6, w.durMS)
	}
	fmt.Fprintf(&b, "  hops:                      %d (%.0f /s)\n", r.hops, float64(r.hops)/(float64(ran)/1e9))
	fmt.Fprintf(&b, "  runnable waits:            %d\n", r.waits)
	fmt.Fprintf(&b, "  max wait, worst task:      %10.3f ms (%s)\n", float64(r.maxWait)/1e6, w.taskName(r.worst))
	fmt.Fprintf(&b, "  first wait (before a hop): max %10.3f ms (%s), p99.9 %.3f ms\n", float64(r.maxFirstWait)/1e6, w.taskName(r.worstFirst), r.firstP999/1e6)
	fmt.Fprintf(&b, "  wait after a hop:          max %10.3f ms (%s), p99.9 %.3f ms, over %d hops\n", float64(r.maxHopWait)/1e6, w.taskName(r.worstHop), r.hopP999/1e6, r.hopWaits)
	fmt.Fprintf(&b, "  max wait, median task:     %10.3f ms\n", float64(r.medianTaskMax)/1e6)
	fmt.Fprintf(&b, "  p99.9 wait:                %10.3f ms\n", r.p999/1e6)
	fmt.Fprintf(&b, "  p99 wait:                  %10.3f ms\n", r.p99/1e6)
	fmt.Fprintf(&b, "  avg wait:                  %10.3f ms\n", r.avg/1e6)
	fmt.Fprintf(&b, "  vruntime spread per rq:    max %.3f ms (cpu%d), mean %.3f ms, over %d queued tasks at the end\n",
		float64(r.spreadMax)/1e6, r.spreadCPU, r.spreadMean/1e6, r.runnableAtTheEnd)
	if r.runnableAtTheEnd > 0 {
		fmt.Fprintf(&b, "  v - min_vruntime per rq:   min %.3f ms (cpu%d), max %.3f ms (cpu%d)\n",
			float64(r.offMin)/1e6, r.offMinCPU, float64(r.offMax)/1e6, r.offMaxCPU)
	}
	if r.open > 0 {
		fmt.Fprintf(&b, "  still waiting at the end:  %d tasks (%d before their first hop), longest %.3f ms (%s)\n",
			r.open, r.openFirst, float64(r.maxOpen)/1e6, w.taskName(r.worstOpen))
	}
	_, err := out.Write(b.Bytes())
	return err
}

// ran is the virtual time run: the duration, or less when the run was
// stopped early (Ctrl-C).
func (w *hopper) ran(s *emu.Sim) int64 { return max(min(s.Now(), w.duration), 1) }

func (w *hopper) Metrics(s *emu.Sim) Metrics {
	r := w.summary()
	return Metrics{Primary: "max_wait_ms", HigherIsBetter: false, Values: map[string]float64{
		"max_wait_ms":                float64(r.maxWait) / 1e6,
		"median_task_max_wait_ms":    float64(r.medianTaskMax) / 1e6,
		"max_wait_after_hop_ms":      float64(r.maxHopWait) / 1e6,
		"p999_wait_after_hop_ms":     r.hopP999 / 1e6,
		"max_first_wait_ms":          float64(r.maxFirstWait) / 1e6,
		"p999_first_wait_ms":         r.firstP999 / 1e6,
		"p999_wait_ms":               r.p999 / 1e6,
		"p99_wait_ms":                r.p99 / 1e6,
		"avg_wait_ms":                r.avg / 1e6,
		"hops_per_sec":               float64(r.hops) / (float64(w.ran(s)) / 1e9),
		"vruntime_spread_max_ms":     float64(r.spreadMax) / 1e6,
		"vruntime_spread_mean_ms":    r.spreadMean / 1e6,
		"min_vruntime_offset_min_ms": float64(r.offMin) / 1e6,
		"min_vruntime_offset_max_ms": float64(r.offMax) / 1e6,
		"max_open_wait_ms":           float64(r.maxOpen) / 1e6,
		"open_waits":                 float64(r.open),
	}}
}
