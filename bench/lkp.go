package bench

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The ports in lkp_*.go follow lkp-tests at this commit (2026-07-22),
// where each test's parser is programs/TESTCASE/parse (lkp moved
// stats/TESTCASE there in 2023); bench/testdata/lkp/ holds the fixtures
// of spec/fixtures/stats/ at the same commit that the ports are tested
// against.
const LKPCommit = "bbbc29c495d9617f28dbc8b799cf0dac9a1ca54e"

// LKPProgram is the lkp-tests program whose parser reads a workload's
// output, which is also lkp's testcase name and so the prefix of its
// metrics (programs/PROGRAM/parse; "" when lkp has none): perf bench's
// sched pipe and sched messaging are lkp's perf-bench-sched-pipe and
// perf-bench-sched-messaging, and sysbench's oltp_read_write (the only
// sysbench test modeled) is read by lkp's oltp parser.
func LKPProgram(workload string) string {
	switch workload {
	case "netperf", "hackbench", "schbench", "stress-ng":
		return workload
	case "pipe":
		return "perf-bench-sched-pipe"
	case "messaging":
		return "perf-bench-sched-messaging"
	case "sysbench":
		return "oltp"
	}
	return "" // hopper, rtapp: no lkp program
}

// LKPOutput is a workload's output as lkp's run script leaves it in
// $RESULT_ROOT/TESTCASE for one run: programs/schbench/run prints
// "Instance: N" and "Iteration : N" before each schbench, and the
// parser counts iterations by them (without one it fails: Ruby's
// IndexError on index -1). The run scripts' other lines (log_cmd's
// dated command) are read by no parser and are left out.
func LKPOutput(workload, report string) string {
	if workload == "schbench" {
		return "Instance: 1\nIteration : 1\n" + report
	}
	return report
}

// LKPStats reads a workload's report as lkp-tests' parser of its
// program does (the ports in lkp_*.go) and returns lkp's metrics
// (PROGRAM.KEY: netperf.Throughput_total_tps, hackbench.throughput), or
// nil when lkp has no parser for the workload or its parser prints
// nothing (or fails) on this output.
func LKPStats(workload, report string) map[string]float64 {
	prog := LKPProgram(workload)
	if prog == "" {
		return nil
	}
	return LKPPrefixed(prog, LKPParse(prog, LKPOutput(workload, report)))
}

// LKPParse runs the port of programs/PROGRAM/parse on out (the text
// the parser reads on its stdin) and returns the KEY: VALUE pairs it
// prints, or nil if it prints none or fails where lkp's parser exits
// with an error. Values that are not finite (Ruby's NaN, Infinity:
// schbench's stddev% of a zero mean) are left out, as JSON has none.
func LKPParse(program, out string) map[string]float64 {
	var st map[string]float64
	switch program {
	case "netperf":
		st = lkpNetperf(out)
	case "hackbench":
		st = lkpHackbench(out)
	case "schbench":
		st = lkpSchbench(out)
	case "stress-ng":
		st = lkpStressNG(out)
	case "perf-bench-sched-pipe":
		st = lkpPerfBenchSchedPipe(out)
	case "perf-bench-sched-messaging":
		st = lkpPerfBenchSchedMessaging(out)
	case "oltp":
		st = lkpOLTP(out)
	case "sysbench":
		st = lkpSysbench(out)
	}
	for k, v := range st {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(st, k)
		}
	}
	if len(st) == 0 {
		return nil
	}
	return st
}

// LKPPrefixed names each of a parser's keys PROGRAM.KEY, as lkp's
// stats files do.
func LKPPrefixed(program string, st map[string]float64) map[string]float64 {
	if st == nil {
		return nil
	}
	out := make(map[string]float64, len(st))
	for k, v := range st {
		out[program+"."+k] = v
	}
	return out
}

// ParseLKPStatsText reads a parser's output, "KEY: VALUE" a line (what
// programs/X/parse prints), into a map, the later of a repeated key
// winning; lines whose value is not a number (a parser's warning) are
// skipped, and so are NaN and infinite values (see LKPParse).
func ParseLKPStatsText(text string) map[string]float64 {
	st := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		st[strings.TrimSpace(k)] = f
	}
	if len(st) == 0 {
		return nil
	}
	return st
}

// rubyLines splits text as Ruby's gets and each_line do: each line
// keeps its "\n", and a last line without one is a line too.
func rubyLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// rubyToF is Ruby's String#to_f: the longest leading decimal number
// (after leading whitespace), 0 when there is none; "" (Ruby's nil.to_f)
// is 0 as well.
func rubyToF(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end, digits := 0, false
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end, digits = end+1, true
	}
	if end+1 < len(s) && s[end] == '.' && s[end+1] >= '0' && s[end+1] <= '9' {
		end++
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
	}
	if !digits {
		return 0
	}
	if end < len(s) && (s[end] == 'e' || s[end] == 'E') {
		e := end + 1
		if e < len(s) && (s[e] == '+' || s[e] == '-') {
			e++
		}
		if e < len(s) && s[e] >= '0' && s[e] <= '9' {
			for e < len(s) && s[e] >= '0' && s[e] <= '9' {
				e++
			}
			end = e
		}
	}
	v, _ := strconv.ParseFloat(s[:end], 64) // out of range: ±Inf, as Ruby
	return v
}

// rubyToI is Ruby's String#to_i: the leading integer, 0 when none.
func rubyToI(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	start := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == start {
		return 0
	}
	v, _ := strconv.ParseInt(s[:end], 10, 64)
	return v
}

// field is words[i], or "" past the end (Ruby's nil, whose to_f and
// to_i are 0).
func field(words []string, i int) string {
	if i < 0 {
		i += len(words)
	}
	if i < 0 || i >= len(words) {
		return ""
	}
	return words[i]
}

// rubyRound2 is Ruby's Float#round(2) (float.c: rb_float_round() with
// round_half_up()): 2.675.round(2) is 2.68 although 2.675 is stored as
// 2.67499..., and numbers too large or too small to have two decimals
// come back as they are or as 0.
func rubyRound2(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	_, binexp := math.Frexp(x)
	// float_round_overflow(): ndigits >= float_dig - binexp/4 (or /3 - 1).
	const ndigits, floatDig = 2, 17
	if binexp > 0 && ndigits >= floatDig-binexp/4 || binexp <= 0 && ndigits >= floatDig-(binexp/3-1) {
		return x
	}
	// float_round_underflow(): ndigits < -(binexp/3 + 1) (or binexp/4).
	if x > 0 && (binexp > 0 && ndigits < -(binexp/3+1) || binexp <= 0 && ndigits < -(binexp/4)) {
		return 0
	}
	const s = 100.0
	f := math.Round(x * s)
	if x > 0 {
		if (f+0.5)/s <= x {
			f++
		}
	} else if (f-0.5)/s >= x {
		f--
	}
	return f / s
}

// rubyFloatSum is Ruby's Array#sum of Floats (array.c: ary_sum()), the
// Kahan-Babuska compensated sum starting from 0.0.
func rubyFloatSum(xs []float64) float64 {
	var f, c float64
	for _, x := range xs {
		t := f + x
		if math.Abs(f) >= math.Abs(x) {
			c += (f - t) + x
		} else {
			c += (x - t) + f
		}
		f = t
	}
	return f + c
}

// resolveInvalidBytes is lkp's String#resolve_invalid_bytes (lib/string.rb):
// each invalid UTF-8 byte becomes "_".
func resolveInvalidBytes(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteByte('_')
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}
