package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rqemu/rqemu/bench"
)

// longRun is the host time past which a run's progress line notes, once,
// how to shorten it.
const longRun = 10 * time.Minute

// progress reports virtual time done, host time and an ETA on stderr
// (statusLine), once the run has taken more than two seconds. A loop
// workload's ETA comes from the share of its loops done (its limit is
// only a safety bound); the others' from the virtual time run.
type progress struct {
	line        *statusLine
	start, last time.Time
	loops       bench.LoopProgress // nil: not a loop workload
	// atMost: the limit is a safety bound the run may end well before
	// (sysbench's 2 x --time + 1 s, rt-app without a duration).
	atMost bool
	// length names the run's length flag and value ("netperf -l 10"),
	// for the note on a long run; "" for none.
	length string
	noted  bool
}

// lengthFlags are the workloads' flags that set a run's length.
var lengthFlags = map[string][]string{
	"hackbench": {"l", "loops"}, "messaging": {"l", "nr_loops", "loop"}, "pipe": {"l", "loop"},
	"netperf": {"l"}, "sysbench": {"time"}, "schbench": {"r", "runtime"}, "stress-ng": {"t", "timeout"},
	"hopper": {"d"}, "rtapp": {"d"},
}

// lengthDefaults are the lengths a workload runs when its flag is not
// given, for the long-run note.
var lengthDefaults = map[string]string{"netperf": "-l 10", "pipe": "-l 1000000", "hackbench": "-l 100", "messaging": "-l 100", "sysbench": "--time=10", "schbench": "-r 30"}

func newProgress(line *statusLine, start time.Time, w bench.Workload, st *setup) *progress {
	p := &progress{line: line, start: start}
	p.loops, _ = w.(bench.LoopProgress)
	name := st.spec.Name
	d, ok := w.(bench.DurationBound)
	// schbench's -r and stress-ng's -t are their limits exactly.
	p.atMost = p.loops == nil && !(ok && d.DurationBound()) && name != "schbench" && name != "stress-ng"
	for _, a := range st.wargs {
		flag, val, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if slices.Contains(lengthFlags[name], flag) {
			p.length = fmt.Sprintf("%s -%s %s", name, flag, val)
		}
	}
	if p.length == "" && lengthDefaults[name] != "" {
		p.length = name + "'s default " + lengthDefaults[name]
	}
	return p
}

func (p *progress) update(now, limit int64) {
	t := time.Now()
	el := t.Sub(p.start)
	if el < 2*time.Second || t.Sub(p.last) < 500*time.Millisecond {
		return
	}
	p.last = t
	done := float64(now) / float64(limit)
	what := fmt.Sprintf("%.3f/%.3f s virtual", float64(now)/1e9, float64(limit)/1e9)
	if p.loops != nil {
		done = p.loops.LoopsDone()
		what = fmt.Sprintf("%.1f%% of the loops, %.3f s virtual", 100*done, float64(now)/1e9)
	}
	eta, left := "?", time.Duration(0)
	if done > 0 {
		left = time.Duration(float64(el) * (1 - done) / done)
		eta = left.Round(time.Second).String()
		if p.atMost {
			eta += " (at most: the safety bound)"
		}
	}
	if left > longRun && !p.noted && p.length != "" {
		p.noted = true
		p.line.note(fmt.Sprintf("emu: this run needs about %s more host time at its pace so far (%s); "+
			"runs scale by their length, not the machine: a shorter one gives the same rates sooner "+
			"(the README's examples run milliseconds of virtual time), and Ctrl-C prints the result so far",
			shortDuration(left), p.length))
	}
	p.line.show(fmt.Sprintf("emu: %s, %s host, ETA %s", what, el.Round(100*time.Millisecond), eta), false)
}

// shortDuration is d to the minute, without a trailing "0s" ("15h6m").
func shortDuration(d time.Duration) string {
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// clear erases the progress line, if one was printed.
func (p *progress) clear() {
	if p != nil {
		p.line.clear()
	}
}
