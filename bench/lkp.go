package bench

import (
	"regexp"
	"strconv"
	"strings"
)

// LKPStats reads a workload's report the way lkp-tests' stats/<testcase>
// script reads the real tool's output, and returns the metrics lkp
// names testcase.key (netperf.Throughput_total_tps, hackbench.throughput),
// or nil for a workload lkp has no parser for here.
func LKPStats(workload, report string) map[string]float64 {
	var st map[string]float64
	switch workload {
	case "netperf":
		st, _ = lkpNetperf(report)
	case "hackbench":
		st = lkpHackbench(report)
	case "stress-ng":
		st = lkpStressNG(report)
	}
	if st == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range st {
		out[workload+"."+k] = v
	}
	return out
}

var (
	lkpNetperfData    = regexp.MustCompile(`\d+\s+\d+\s+\d+\s+\d.*$`)
	lkpNetperfMbps    = regexp.MustCompile(`^bytes.*secs.*10\^6bits`)
	lkpNetperfTps     = regexp.MustCompile(`^bytes.*secs.\s+per sec`)
	lkpNetperfSocket  = regexp.MustCompile(`^Socket.*Elapsed.*`)
	lkpNetperfRate    = regexp.MustCompile(`^Send\s+Recv\s+`)
	lkpNetperfSize    = regexp.MustCompile(`^Size\s+Size\s+`)
	lkpHackbenchRun   = regexp.MustCompile(`^Running in .* mode with (\d+) groups using (\d+) file descriptors each \(== (\d+) tasks\)`)
	lkpHackbenchPass  = regexp.MustCompile(`^Each sender will pass (\d+) messages of (\d+) bytes`)
	lkpHackbenchPass2 = regexp.MustCompile(`^Each sender passed (\d+) messages of (\d+) bytes in average`)
	lkpStressNGHeader = regexp.MustCompile(`\(secs\)\s+\(secs\)\s+\(secs\)`)
)

// lkpNetperf is lkp-tests stats/netperf: it finds the throughput, time
// and message-size columns from the table headers and sums every data
// line of the concatenated output of the N netperf processes
// (Throughput_total_*), averages them (Throughput_*), and turns the total
// into a count of transactions or packets (workload).
func lkpNetperf(out string) (map[string]float64, int) {
	var throughput, tm, pktSize float64
	var thpIndex, timeIndex, pktIndex, iterations, num int
	unit := ""
	for _, line := range strings.Split(out, "\n") {
		words := strings.Fields(line)
		index := func(w string, cur int) int {
			for i, x := range words {
				if x == w {
					cur = i
				}
			}
			return cur
		}
		field := func(i int) float64 {
			if i >= len(words) {
				return 0 // Ruby's nil.to_f
			}
			v, _ := strconv.ParseFloat(words[i], 64)
			return v
		}
		switch {
		case strings.HasPrefix(line, "Iterations"):
			iterations++
		case lkpNetperfMbps.MatchString(line):
			unit = "Mbps"
		case lkpNetperfTps.MatchString(line):
			unit = "tps"
		case lkpNetperfSocket.MatchString(line):
			pktIndex, timeIndex = index("Message", pktIndex), index("Elapsed", timeIndex)
		case lkpNetperfRate.MatchString(line):
			thpIndex = index("Rate", thpIndex)
		case lkpNetperfSize.MatchString(line):
			thpIndex = index("Throughput", thpIndex)
		case lkpNetperfData.MatchString(line):
			throughput += field(thpIndex)
			tm = field(timeIndex)
			if unit == "Mbps" {
				pktSize = field(pktIndex)
			}
			num++
		}
	}
	if num == 0 {
		return nil, 0
	}
	avg := throughput / float64(num)
	if iterations > 0 {
		throughput /= float64(iterations)
	}
	workload := throughput * tm
	if unit == "Mbps" {
		workload = workload * 1e6 / 8 / pktSize
	}
	return map[string]float64{"Throughput_" + unit: avg, "Throughput_total_" + unit: throughput, "workload": workload}, num
}

// lkpHackbench is lkp-tests stats/hackbench: KiB passed (tasks x
// messages x bytes >> 10, per Time: line) over the summed times.
func lkpHackbench(out string) map[string]float64 {
	var tm float64
	var kb, tasks, messages, bytes int64
	seen := false
	for _, line := range strings.Split(out, "\n") {
		if m := lkpHackbenchRun.FindStringSubmatch(line); m != nil {
			tasks, _ = strconv.ParseInt(m[3], 10, 64)
		} else if m := lkpHackbenchPass.FindStringSubmatch(line); m != nil {
			messages, _ = strconv.ParseInt(m[1], 10, 64)
			bytes, _ = strconv.ParseInt(m[2], 10, 64)
		} else if m := lkpHackbenchPass2.FindStringSubmatch(line); m != nil {
			messages, _ = strconv.ParseInt(m[1], 10, 64)
			bytes, _ = strconv.ParseInt(m[2], 10, 64)
		} else if strings.HasPrefix(line, "Time:") {
			if f := strings.Fields(line); len(f) > 1 {
				v, _ := strconv.ParseFloat(f[1], 64)
				tm += v
			}
			kb += tasks * messages * bytes >> 10
			seen = true
		}
	}
	if !seen || tm == 0 {
		return nil
	}
	return map[string]float64{"throughput": float64(kb) / tm}
}

// lkpStressNG is lkp-tests programs/stress-ng/parse: after the metrics
// table's "(secs) (secs) (secs)" header line, a line of 10 or 12 fields
// (--metrics-brief's, or --metrics') gives a stressor's bogo ops (field 4)
// and its bogo ops/s over real time (field 8): STRESSOR.pass, .ops and
// .ops_per_sec, or STRESSOR.fail for 0 ops; the --times block ("run
// time:") ends the table.
func lkpStressNG(out string) map[string]float64 {
	var st map[string]float64
	for _, line := range strings.Split(out, "\n") {
		switch {
		case lkpStressNGHeader.MatchString(line):
			st = map[string]float64{}
		case strings.Contains(line, "run time:"):
			return st
		case st != nil:
			items := strings.Fields(line)
			if len(items) != 10 && len(items) != 12 {
				continue
			}
			name := items[3]
			if items[4] == "0" {
				st[name+".fail"] = 1
				continue
			}
			ops, err1 := strconv.ParseFloat(items[4], 64)
			rate, err2 := strconv.ParseFloat(items[8], 64)
			if err1 != nil || err2 != nil {
				continue
			}
			st[name+".pass"] = 1
			st[name+".ops"] = ops
			st[name+".ops_per_sec"] = rate
		}
	}
	return st
}
