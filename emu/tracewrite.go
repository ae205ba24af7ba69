package emu

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// The trace's text writers: ftrace's trace file (WriteFtrace) and the
// sampled counters as Chrome JSON (WriteChromeCounters); trace.dat is
// tracedat.go.

// traceRef is a record in CPU cpu's buffer.
type traceRef struct {
	cpu int
	rec *traceRec
}

// WriteFtrace writes the trace as ftrace text (the trace file of
// tracefs, with the nop tracer's header; trace_print_context() and
// trace_print_lat_fmt() layout). Timestamps are virtual seconds.
func (s *Sim) WriteFtrace(w io.Writer) error {
	var all []traceRef
	for cpu := range s.cpus {
		for _, r := range s.traceRecords(cpu) {
			all = append(all, traceRef{cpu, r})
		}
	}
	slices.SortStableFunc(all, func(a, b traceRef) int {
		if c := cmp.Compare(a.rec.t, b.rec.t); c != 0 {
			return c
		}
		return cmp.Compare(a.cpu, b.cpu)
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
	for _, ref := range all {
		r := ref.rec
		comm, pid, _ := r.ctx.who(ref.cpu)
		if pid == 0 {
			comm = "<idle>" // trace_find_cmdline() for pid 0
		}
		us := (r.t + 500) / 1000 // ns2usecs() rounds
		fmt.Fprintf(bw, "%16s-%-7d [%03d] %s %5d.%06d: %s: %s\n", comm, pid, ref.cpu, latFlags(r.flags, r.pc),
			us/1e6, us%1e6, r.kind.traceName(), r.ftraceFields(ref.cpu))
	}
	return bw.Flush()
}

// latFlags is trace_print_lat_fmt(): irqs-off, need-resched,
// hardirq/softirq, preempt depth, migrate-disable depth.
func latFlags(flags, pc uint8) string {
	b := []byte(".....")
	if flags&tfIrqsOff != 0 {
		b[0] = 'd'
	}
	switch nr, pr := flags&tfNeedResched != 0, flags&tfPreemptResched != 0; {
	case nr && pr:
		b[1] = 'N'
	case nr:
		b[1] = 'n'
	case pr:
		b[1] = 'p'
	}
	switch hi, si := flags&tfHardirq != 0, flags&tfSoftirq != 0; {
	case hi && si:
		b[2] = 'H'
	case hi:
		b[2] = 'h'
	case si:
		b[2] = 's'
	}
	if pc&0xf != 0 {
		b[3] = fmt.Sprintf("%x", pc&0xf)[0]
	}
	if pc>>4 != 0 {
		b[4] = fmt.Sprintf("%x", pc>>4)[0]
	}
	return string(b)
}

// prevStateText prints prev_state as sched_switch's print fmt does.
func prevStateText(v int64) string {
	switch v {
	case 0:
		return "R"
	case reportSleeping:
		return "S"
	case reportExitDead:
		return "X"
	case reportExitZombie:
		return "Z"
	}
	return "R+"
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
