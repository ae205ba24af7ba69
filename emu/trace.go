package emu

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Tracing. With EnableTrace, every CPU records the sched_switch,
// sched_wakeup and sched_wakeup_new events of a virtual-time window into
// its own buffer (no sharing), and the barrier samples counters (per-CPU
// nr_running, each task group's tg->load_avg, the weave's stall per CPU).
// WriteFtrace merges the buffers in (time, CPU, order) order into the
// ftrace text format that perf script, trace-cmd and Perfetto read as CPU
// tracks; WriteChromeCounters writes the counters as Chrome-JSON "C"
// events, which Perfetto shows as counter tracks. Both are deterministic:
// the records are virtual-time stamped and the merge is canonical.

type traceKind uint8

const (
	trSwitch traceKind = iota
	trWakeup
	trWakeupNew
)

// traceRec is one tracepoint hit, owned by the recording CPU.
type traceRec struct {
	t          int64
	kind       traceKind
	seq        uint32 // order within the CPU at equal t
	prev, next *Task  // switch: prev and next (nil: idle); wakeup: next
	prevState  TaskState
	targetCPU  int
}

type counterSample struct {
	t        int64
	nr       []int32 // per CPU
	stall    []int64 // per CPU, ns in the sample period
	loadAvgs []int64 // per group
}

// tracer holds the trace settings and the barrier's counter samples
// (owned by the engine goroutine).
type tracer struct {
	window  int64 // trace events with t < window
	period  int64 // counter sample period
	next    int64 // next counter sample time
	stall   []int64
	samples []counterSample
	prev    counterSample // the state at the last barrier
}

// EnableTrace turns on tracing of the first window ns of virtual time,
// with counters sampled every period ns (0: 1 ms). Call it before Run.
func (s *Sim) EnableTrace(window, period int64) {
	if period <= 0 {
		period = nsecPerMsec
	}
	s.tracer = &tracer{window: window, period: period, stall: make([]int64, len(s.cpus))}
}

func (rq *RQ) traceOn() bool { return rq.sim.tracer != nil && rq.now < rq.sim.tracer.window }

func (rq *RQ) traceAppend(r traceRec) {
	if n := len(rq.trace); n > 0 && rq.trace[n-1].t == r.t {
		r.seq = rq.trace[n-1].seq + 1
	}
	rq.trace = append(rq.trace, r)
}

// traceSwitch is the sched_switch tracepoint of __schedule().
func (rq *RQ) traceSwitch(prev, next *Task) {
	if !rq.traceOn() {
		return
	}
	r := traceRec{t: rq.now, kind: trSwitch, prev: prev, next: next, targetCPU: rq.cpu}
	if prev != nil {
		r.prevState = prev.state
	}
	rq.traceAppend(r)
}

// traceWakeup is the sched_wakeup (ttwu_do_activate()) and
// sched_wakeup_new (wake_up_new_task()) tracepoint, on the wakee's CPU.
func (rq *RQ) traceWakeup(p *Task, kind traceKind) {
	if !rq.traceOn() {
		return
	}
	rq.traceAppend(traceRec{t: rq.now, kind: kind, next: p, targetCPU: rq.cpu})
}

// sample records the counters at each multiple of the period. The state
// changes only at events, so a period boundary in the gap before this
// epoch (no CPU had an event there) sees the state of the last barrier,
// and one inside this epoch sees the state at its end (at most one epoch
// late).
func (tr *tracer) sample(s *Sim, stall []int64) {
	for i, st := range stall {
		tr.stall[i] += st
	}
	cur := counterSample{nr: make([]int32, len(s.cpus))}
	for i, rq := range s.cpus {
		cur.nr[i] = int32(rq.nrRunning)
	}
	for _, g := range s.groups {
		cur.loadAvgs = append(cur.loadAvgs, g.published)
	}
	for ; tr.next <= s.epochEnd && tr.next < tr.window; tr.next += tr.period {
		cs := cur
		if tr.next < s.epochStart && tr.prev.nr != nil {
			cs = tr.prev
		}
		cs.t = tr.next
		cs.stall = tr.stall
		tr.stall = make([]int64, len(s.cpus))
		tr.samples = append(tr.samples, cs)
	}
	tr.prev = cur
}

func taskPrio(p *Task) int { return 120 + p.Nice }

func commPID(p *Task, cpu int) (string, int) {
	if p == nil {
		return fmt.Sprintf("swapper/%d", cpu), 0
	}
	return p.Comm, p.PID
}

// prevStateLetter is __trace_sched_switch_state() as printed: S for a
// sleep, X for an exit, R+ for a preemption.
func prevStateLetter(st TaskState) string {
	switch st {
	case TaskSleeping:
		return "S"
	case TaskDead:
		return "X"
	}
	return "R+"
}

// WriteFtrace writes the trace as ftrace text (the trace file of
// tracefs, with the nop tracer's header). Timestamps are virtual seconds.
func (s *Sim) WriteFtrace(w io.Writer) error {
	type ref struct {
		cpu int
		rec *traceRec
	}
	var all []ref
	for _, rq := range s.cpus {
		for i := range rq.trace {
			all = append(all, ref{rq.cpu, &rq.trace[i]})
		}
	}
	slices.SortStableFunc(all, func(a, b ref) int {
		if c := cmp.Compare(a.rec.t, b.rec.t); c != 0 {
			return c
		}
		if c := cmp.Compare(a.cpu, b.cpu); c != 0 {
			return c
		}
		return cmp.Compare(a.rec.seq, b.rec.seq)
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n", len(all), len(all), len(s.cpus))
	fmt.Fprintf(bw, "#                                _-----=> irqs-off/BH-disabled\n")
	fmt.Fprintf(bw, "#                               / _----=> need-resched\n")
	fmt.Fprintf(bw, "#                              | / _---=> hardirq/softirq\n")
	fmt.Fprintf(bw, "#                              || / _--=> preempt-depth\n")
	fmt.Fprintf(bw, "#                              ||| / _-=> migrate-disable\n")
	fmt.Fprintf(bw, "#                              |||| /     delay\n")
	fmt.Fprintf(bw, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n")
	fmt.Fprintf(bw, "#              | |         |   |||||     |         |\n")
	for _, r := range all {
		rec := r.rec
		ts := fmt.Sprintf("%6d.%06d", rec.t/1e9, rec.t%1e9/1e3)
		switch rec.kind {
		case trSwitch:
			pc, pp := commPID(rec.prev, r.cpu)
			nc, np := commPID(rec.next, r.cpu)
			pprio, nprio := 120, 120
			state := "R"
			if rec.prev != nil {
				pprio = taskPrio(rec.prev)
				state = prevStateLetter(rec.prevState)
			}
			if rec.next != nil {
				nprio = taskPrio(rec.next)
			}
			fmt.Fprintf(bw, "%16s-%-7d [%03d] d..2. %s: sched_switch: prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d\n",
				pc, pp, r.cpu, ts, pc, pp, pprio, state, nc, np, nprio)
		default:
			name := "sched_wakeup"
			if rec.kind == trWakeupNew {
				name = "sched_wakeup_new"
			}
			// The record is made on the wakee's CPU at enqueue; the
			// context shown is that CPU's (the kernel shows the waker's
			// when it wakes directly, the target's from the wake list).
			cc, cp := commPID(nil, r.cpu)
			fmt.Fprintf(bw, "%16s-%-7d [%03d] dN.3. %s: %s: comm=%s pid=%d prio=%d target_cpu=%03d\n",
				cc, cp, r.cpu, ts, name, rec.next.Comm, rec.next.PID, taskPrio(rec.next), rec.targetCPU)
		}
	}
	return bw.Flush()
}

// WriteChromeCounters writes the sampled counters as a Chrome-JSON trace
// ({"traceEvents": [...]}, ts in µs): per-CPU nr_running and weave stall
// (ns per sample period) under process "runqueues", and each task group's
// tg->load_avg under process "task groups".
func (s *Sim) WriteChromeCounters(w io.Writer) error {
	type ev struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		PID  int            `json:"pid"`
		TID  int            `json:"tid"`
		TS   float64        `json:"ts"`
		Args map[string]any `json:"args"`
	}
	evs := []ev{
		{Name: "process_name", Ph: "M", PID: 1, Args: map[string]any{"name": "runqueues"}},
		{Name: "process_name", Ph: "M", PID: 2, Args: map[string]any{"name": "task groups"}},
	}
	if s.tracer != nil {
		for _, cs := range s.tracer.samples {
			ts := float64(cs.t) / 1e3
			for cpu, nr := range cs.nr {
				evs = append(evs, ev{Name: fmt.Sprintf("cpu%d", cpu), Ph: "C", PID: 1, TS: ts,
					Args: map[string]any{"nr_running": nr, "stall_ns": cs.stall[cpu]}})
			}
			for i, la := range cs.loadAvgs {
				evs = append(evs, ev{Name: "tg->load_avg " + s.groups[i].Path(), Ph: "C", PID: 2, TS: ts,
					Args: map[string]any{"load_avg": la}})
			}
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns"})
}
