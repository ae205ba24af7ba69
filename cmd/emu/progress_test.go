package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type fakeLoops float64

func (f fakeLoops) LoopsDone() float64 { return float64(f) }

// TestProgressETA: a loop workload's ETA comes from the share of its
// loops done, not from its safety bound (pipe -l 400000 said "ETA
// 14m12s" for a 5 s run); a long run notes once how to shorten it.
func TestProgressETA(t *testing.T) {
	var b bytes.Buffer
	p := &progress{line: newStatusLine(&b), start: time.Now().Add(-10 * time.Second), loops: fakeLoops(0.5), length: "pipe -l 400000"}
	// 1 s of a 401 s safety bound, half the loops: 10 s more, not ~66 min.
	p.update(1e9, 401e9)
	if out := b.String(); !strings.Contains(out, "50.0% of the loops") || !strings.Contains(out, "ETA 10s") || strings.Contains(out, "this run needs") {
		t.Errorf("loop workload: %q", out)
	}
	b.Reset()
	p = &progress{line: newStatusLine(&b), start: time.Now().Add(-10 * time.Second), length: "netperf's default -l 10"}
	p.update(1e8, 10e9) // 1% in 10 s: 990 s more
	p.last = time.Time{}
	p.line.last = time.Time{}
	p.update(2e8, 10e9)
	out := b.String()
	if strings.Count(out, "this run needs about") != 1 || !strings.Contains(out, "netperf's default -l 10") || !strings.Contains(out, "ETA 16m30s") {
		t.Errorf("long duration-bound run: want one note naming netperf's default -l 10 and ETA 16m30s:\n%s", out)
	}
	if strings.Contains(out, "at most") {
		t.Errorf("a duration-bound run's ETA is not an upper bound: %q", out)
	}
}
