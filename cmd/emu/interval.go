package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
)

// intervalPrinter prints perf stat -I's lines for each interval of a
// run (-interval): the software events perf stat counts for the command
// (task-clock, context-switches, cpu-migrations, with perf's shadow
// metrics: CPUs utilized, and each count per second of task-clock), then
// an emu line with what perf stat cannot count: nr_running per CPU
// (rq->nr_running's mean over the interval, delayed sleepers included, as
// sched_debug shows it), the context switches whose task is the idle task
// (nr_switches less the tasks' voluntary and involuntary switches),
// migrations per wakeup, and the workload's lkp metrics at the
// interval's rate. task-clock is the CPUs' time out of the idle loop,
// from the profile, which is charged up to the interval's end (the
// runqueues' rq_cpu_time is added at switches, so a slice still running
// at the end would count in the next interval); it is the lkp-base rows'
// "CPUs utilized" over the interval.
func intervalPrinter(w io.Writer, wl bench.Workload, workload string, cpus int, clear func()) func(prev, cur *bench.Snapshot) {
	first := true
	return func(prev, cur *bench.Snapshot) {
		clear()
		if first {
			fmt.Fprintln(w, "#           time             counts unit events")
			first = false
		}
		d := func(k string) float64 { return cur.Counters[k] - prev.Counters[k] }
		sec := float64(cur.At-prev.At) / 1e9
		at := fmt.Sprintf("%6d.%09d", cur.At/1e9, cur.At%1e9)
		taskMS := float64(busyNS(cur)-busyNS(prev)) / 1e6
		cs, mig := d("sched.NrSwitches"), float64(cur.Migrations-prev.Migrations)
		fmt.Fprintf(w, "%s %18s msec %-32s #  %7.3f CPUs utilized\n", at, commas(taskMS, 2), "task-clock", taskMS/1e3/sec)
		fmt.Fprintf(w, "%s %18s      %-32s #  %s\n", at, commas(cs, 0), "context-switches", perTaskSec(cs, taskMS))
		fmt.Fprintf(w, "%s %18s      %-32s #  %s\n", at, commas(mig, 0), "cpu-migrations", perTaskSec(mig, taskMS))
		nr := d("sched.NrRunningNS") / (sec * 1e9 * float64(max(cpus, 1)))
		idle := cs - d("sched.nr_voluntary_switches") - d("sched.nr_involuntary_switches")
		line := fmt.Sprintf("emu: interval %.3f-%.3f s: %.2f nr_running per CPU, %.0f context switches/s (%.0f the idle task's), %.0f migrations/s, %.3f migrations per wakeup",
			float64(prev.At)/1e9, float64(cur.At)/1e9, nr, cs/sec, idle/sec, mig/sec, mig/max(float64(cur.Wakeups-prev.Wakeups), 1))
		if lkp := (&bench.WindowResult{Start: prev, End: cur}).LKP(wl); lkp != nil {
			for _, k := range slices.Sorted(maps.Keys(lkp)) {
				line += fmt.Sprintf(", %s.%s %.0f", bench.LKPProgram(workload), k, lkp[k])
			}
		}
		fmt.Fprintln(w, line)
	}
}

// busyNS is the CPUs' time out of the idle loop up to sn.
func busyNS(sn *bench.Snapshot) int64 {
	idle := emu.IdleLoopSymbols()
	var ns int64
	for _, p := range sn.Profile {
		if !slices.Contains(idle, p.Symbol) {
			ns += p.NS
		}
	}
	return ns
}

// perTaskSec is perf's shadow metric of a software event: the count per
// second of task-clock, scaled as perf scales it.
func perTaskSec(n, taskMS float64) string {
	if taskMS == 0 {
		return fmt.Sprintf("%8.3f /sec", 0.0)
	}
	r := n / (taskMS / 1e3)
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%8.3f M/sec", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%8.3f K/sec", r/1e3)
	}
	return fmt.Sprintf("%8.3f /sec", r)
}

// commas is v with prec decimals and its integer part grouped by
// thousands, as perf stat prints counts (its big_num).
func commas(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	intPart, frac := s, ""
	if i := len(s) - prec - 1; prec > 0 && i > 0 {
		intPart, frac = s[:i], s[i:]
	}
	neg := len(intPart) > 0 && intPart[0] == '-'
	if neg {
		intPart = intPart[1:]
	}
	var out []byte
	for i, c := range []byte(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	if neg {
		return "-" + string(out) + frac
	}
	return string(out) + frac
}
