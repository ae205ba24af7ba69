package bench

import (
	"bytes"
	"fmt"
)

// schReplay replays sleep_for_runtime()'s passes as the run goes: the
// workers' per-second buckets are folded, in second order, into the
// totals since the last zeroing (the warmup pass's), and each pass is
// played once the buckets it reads are final, its printed stats kept as
// text. Folding at barriers keeps a worker's buckets to the few seconds
// not yet final (hikey-8 -r 100000 grew 19 -> 42 MB in 30 s when every
// second's histograms were kept for the report).
type schReplay struct {
	w      *schbench
	passes *schPasses
	next   schPass // the next pass to play (ok: there is one)
	ok     bool
	folded int // buckets 0..folded-1 are folded
	// finished: finish ran (Report, Metrics and -j all read the result).
	finished bool

	wake, req *Hist // samples since the zeroing, folded buckets
	loops     int64 // requests done, every folded bucket
	rps       schStats
	lastLoops int64
	lastRPS   int
	nprint    int
	text      bytes.Buffer
}

func newSchReplay(w *schbench) *schReplay {
	r := &schReplay{w: w, passes: w.passes(), wake: NewHist(), req: NewHist(), rps: schStats{h: NewHist()}}
	r.next, r.ok = r.passes.next()
	return r
}

// foldTo folds the buckets up to b (at most -r) and plays the passes
// whose buckets are folded. Called by the engine's goroutine at a
// barrier, with the CPUs stopped.
func (r *schReplay) foldTo(b, runtime int) {
	for ; r.folded <= min(b, runtime); r.folded++ {
		k := r.folded
		for _, st := range r.w.wk {
			// Every worker's base is k: they are folded together.
			if len(st.loops) > 0 {
				if st.wake[0] != nil {
					r.wake.Merge(st.wake[0])
				}
				if st.req[0] != nil {
					r.req.Merge(st.req[0])
				}
				r.loops += st.loops[0]
				st.wake, st.req, st.loops = st.wake[1:], st.req[1:], st.loops[1:]
			}
			st.base++
		}
		if r.ok && r.next.tick == k {
			r.play(r.next)
			r.next, r.ok = r.passes.next()
		}
	}
}

// finish folds every bucket left and plays the passes up to endTick,
// once.
func (r *schReplay) finish(endTick int) {
	if r.finished {
		return
	}
	r.finished = true
	for r.ok && r.next.tick <= endTick {
		r.foldTo(r.next.tick, r.w.runtime)
	}
	// The samples after the last pass played count in the totals.
	r.ok = false
	r.foldTo(r.w.runtime, r.w.runtime)
}

// play is one pass of sleep_for_runtime(): zero the stats, or take the
// second's RPS and, every -i seconds, print the stats so far.
func (r *schReplay) play(p schPass) {
	w, k := r.w, p.tick
	b := &r.text
	if p.reset {
		fmt.Fprintf(b, "warmup done, zeroing stats\n")
		r.wake, r.req = NewHist(), NewHist()
		r.rps = schStats{h: NewHist()}
		return
	}
	// rps = (loop_count - last_loop_count) * USEC_PER_SEC / delta;
	// the pass at second 0 divides 0 by 0 and records 0.
	rate := 0.0
	if k > r.lastRPS {
		rate = float64((r.loops-r.lastLoops)*1e6) / float64(int64(k-r.lastRPS)*1e6)
	}
	r.lastLoops, r.lastRPS = r.loops, k
	r.rps.addRPS(uint64(rate))
	if !p.print {
		return
	}
	showLatencies(b, histStats(r.wake), "Wakeup Latencies", "usec", k, plistForLat, plist99)
	showLatencies(b, histStats(r.req), "Request Latencies", "usec", k, plistForLat, plist99)
	showLatencies(b, r.rps, "RPS", "requests", k, plistForRPS, plist50)
	sd := w.schedDelay()
	if r.nprint < len(w.snaps) {
		sd = w.snaps[r.nprint]
	}
	r.nprint++
	fmt.Fprintf(b, "sched delay: message %d (usec) worker %d (usec)\n", sd.msg/1000, sd.worker/1000)
	fmt.Fprintf(b, "current rps: %.2f\n", rate)
}
