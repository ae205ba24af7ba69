package main

import (
	"strings"
	"testing"
)

// Bad fit input: exit status 2, one line naming the flag and what it
// allows, before any run.
func TestFitFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, `-family: "" is not a family (allowed: spr, icl, epyc)`},
		{[]string{"-family", "skl"}, `-family: "skl" is not a family (allowed: spr, icl, epyc)`},
		{[]string{"-family", "spr", "-scale", "fast"}, `-scale: "fast" is not a scale (allowed: quick, default)`},
		{[]string{"-family", "spr", "-j", "0"}, "-j: runs at once must be in [1, 256]"},
		{[]string{"-family", "spr", "-rounds", "0"}, "-rounds: must be in [1, 100]"},
		{[]string{"-family", "spr", "-driver", "fast"}, "-driver"},
		{[]string{"-family", "spr", "extra"}, "fit: takes no arguments"},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield"}, "-vary: \"latency_ns.smt_yield\": want NAME=lo:hi:step or NAME=v1,v2,..."},
		{[]string{"-family", "spr", "-vary", "latency_ns.nope=0.3:0.5:0.1"}, `unknown constant "latency_ns.nope" (allowed: latency_ns.smt, `},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.5:0.3:0.1"}, "lo 0.5 > hi 0.3"},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.3:0.5"}, "a range is lo:hi:step"},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.3:x:0.1"}, `"x" is not a positive number`},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.3:0.5:0"}, `"0" is not a positive number`},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.5,0.4"}, "a list must increase"},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.5:1.5:0.5"}, "1.5 does not build spr-2s: latency_ns.smt_yield.value: must be a fraction in (0, 1]"},
		{[]string{"-family", "spr", "-vary", "latency_ns.smt_yield=0.001:1:0.0001"}, "more than 64 values"},
		{[]string{"-family", "spr", "-vary", "latency_ns.socket=10:20:5"}, "spr-2s does not give latency_ns.socket"},
		{[]string{"-family", "spr", "-vary", "costs_cycles.pipe_write+costs_cycles.pipe_write=1,2"}, "costs_cycles.pipe_write is named twice"},
		{[]string{"-family", "spr", "-vary", "costs_cycles.pipe_write=100,200", "-vary", "costs_cycles.pipe_read+costs_cycles.pipe_write=100,200"}, "-vary: costs_cycles.pipe_write is varied twice"},
	} {
		code, _, stderr := runEmu(append([]string{"fit"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("emu fit %q: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
		noStack(t, strings.Join(c.args, " "), stderr)
	}
}
