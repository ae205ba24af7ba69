package bench

import (
	"regexp"
	"strconv"
)

var (
	lkpPerfBenchOps       = regexp.MustCompile(`(\d+) ops/sec`)
	lkpPerfBenchTotalTime = regexp.MustCompile(`Total time:\s*([\d.]+)\s*\[sec\]`)
)

// lkpPerfBenchSchedPipe is lkp-tests' programs/perf-bench-sched-pipe/parse:
// ops_per_sec from perf bench sched pipe's "N ops/sec" line (the last
// one, if several).
func lkpPerfBenchSchedPipe(out string) map[string]float64 {
	return lkpPerfBenchLast(out, lkpPerfBenchOps, "ops_per_sec")
}

// lkpPerfBenchSchedMessaging is lkp-tests'
// programs/perf-bench-sched-messaging/parse: total_time_sec from perf
// bench sched messaging's "Total time: T [sec]".
func lkpPerfBenchSchedMessaging(out string) map[string]float64 {
	return lkpPerfBenchLast(out, lkpPerfBenchTotalTime, "total_time_sec")
}

// lkpPerfBenchLast is KEY: the first submatch of re on each line that
// has it, the last line winning as it does when lkp reads the stats.
func lkpPerfBenchLast(out string, re *regexp.Regexp, key string) map[string]float64 {
	st := map[string]float64{}
	for _, line := range rubyLines(out) {
		if m := re.FindStringSubmatch(line); m != nil {
			if v, err := strconv.ParseFloat(m[1], 64); err == nil {
				st[key] = v
			}
		}
	}
	return st
}
