package bench

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	lkpHackbenchInstance = regexp.MustCompile(`^Instance: (\d+)`)
	lkpHackbenchRun      = regexp.MustCompile(`^Running in .* mode with (\d+) groups using (\d+) file descriptors each \(== (\d+) tasks\)`)
	lkpHackbenchPass     = regexp.MustCompile(`^Each sender will pass (\d+) messages of (\d+) bytes`)
	lkpHackbenchPassed   = regexp.MustCompile(`^Each sender passed (\d+) messages of (\d+) bytes in average`)
)

// lkpHackbenchInst is one instance's numbers (the parser's per_instance
// entry); nil fields are Ruby's nil.
type lkpHackbenchInst struct {
	tasks, messages, bytes *int64
	time                   []float64
}

// lkpHackbench is lkp-tests' programs/hackbench/parse: the KiB one run
// passes (tasks x messages x bytes >> 10, from the last header read)
// over the best, mean and worst of the Time: lines (throughput is the
// best, as lkp has always reported it; throughput_avg rounded to 2
// decimals), and the same per instance when the output has several
// ("Instance: N" lines, lkp's nr_instances). Where the parser fails
// (no header before the end, or no Time: line: Ruby's NoMethodError or
// TypeError on nil) this returns nil.
func lkpHackbench(out string) map[string]float64 {
	var times []float64
	var tasks, messages, bytes *int64
	instance := int64(1)
	per := map[int64]*lkpHackbenchInst{}
	inst := func() *lkpHackbenchInst {
		if per[instance] == nil {
			per[instance] = &lkpHackbenchInst{}
		}
		return per[instance]
	}
	atoi := func(s string) *int64 { v, _ := strconv.ParseInt(s, 10, 64); return &v }
	for _, line := range rubyLines(out) {
		if m := lkpHackbenchInstance.FindStringSubmatch(line); m != nil {
			instance = *atoi(m[1])
		} else if m := lkpHackbenchRun.FindStringSubmatch(line); m != nil {
			tasks = atoi(m[3])
			inst().tasks = tasks
		} else if m := cmp2(lkpHackbenchPass, lkpHackbenchPassed, line); m != nil {
			messages, bytes = atoi(m[1]), atoi(m[2])
			inst().messages, inst().bytes = messages, bytes
		} else if strings.HasPrefix(line, "Time:") {
			secs := rubyToF(field(strings.Fields(line), 1))
			times = append(times, secs)
			inst().time = append(inst().time, secs)
		}
	}
	if tasks == nil || messages == nil || bytes == nil || len(times) == 0 {
		return nil
	}
	kb := float64(*tasks * *messages * *bytes >> 10)
	best, worst := slices.Min(times), slices.Max(times)
	avg := rubyFloatSum(times) / float64(len(times))
	st := map[string]float64{"throughput": kb / best, "throughput_best": kb / best,
		"throughput_avg": rubyRound2(kb / avg), "throughput_worst": kb / worst}
	if len(per) > 1 {
		for _, id := range slices.Sorted(maps.Keys(per)) {
			s := per[id]
			if len(s.time) == 0 {
				continue
			}
			if s.tasks == nil || s.messages == nil || s.bytes == nil {
				return nil // nil * ...: the parser fails
			}
			ikb := float64(*s.tasks * *s.messages * *s.bytes >> 10)
			sfx := ".instance" + strconv.FormatInt(id, 10)
			st["throughput"+sfx] = ikb / slices.Min(s.time)
			st["throughput_avg"+sfx] = rubyRound2(ikb / (rubyFloatSum(s.time) / float64(len(s.time))))
			st["throughput_worst"+sfx] = ikb / slices.Max(s.time)
		}
	}
	return st
}

// cmp2 is the submatches of the first of two patterns that matches
// (a Ruby `when A, B`).
func cmp2(a, b *regexp.Regexp, line string) []string {
	if m := a.FindStringSubmatch(line); m != nil {
		return m
	}
	return b.FindStringSubmatch(line)
}
