package bench

import (
	"regexp"
	"strings"
)

var (
	lkpNetperfData   = regexp.MustCompile(`\d+\s+\d+\s+\d+\s+\d.*$`)
	lkpNetperfRecv   = regexp.MustCompile(`^\d+\s+\d+\.\d+\s+\d+\s+`)
	lkpNetperfMbps   = regexp.MustCompile(`^bytes.*secs.*10\^6bits`)
	lkpNetperfTps    = regexp.MustCompile(`^bytes.*secs.\s+per sec`)
	lkpNetperfSocket = regexp.MustCompile(`^Socket.*Elapsed.*`)
	lkpNetperfRate   = regexp.MustCompile(`^Send\s+Recv\s+`)
	lkpNetperfSize   = regexp.MustCompile(`^Size\s+Size\s+`)
)

// lkpNetperf is lkp-tests' programs/netperf/parse: it finds the
// throughput, time and message-size columns from the table headers
// (the receive side's throughput two columns left of the send side's),
// sums every send-side data line of the concatenated output of the N
// netperf processes (Throughput_total_*) and every receive-side line (a
// STREAM test's second line: ThroughputRecv_total_*), averages them
// (Throughput_*, ThroughputRecv_*, ThroughputBoth_*), and turns the
// total of both into a count of transactions or packets (workload). As
// the parser's `case line.chomp!`, a last line without "\n" is not read.
func lkpNetperf(out string) map[string]float64 {
	var throughput, recvThroughput, tm, pktSize float64
	var thpIndex, recvThpIndex, timeIndex, pktIndex, iterations, num, recvNum int
	unit := ""
	for _, line := range rubyLines(out) {
		line, ok := strings.CutSuffix(line, "\n")
		if !ok {
			continue // chomp! returned nil
		}
		words := strings.Fields(line)
		index := func(w string, cur int) int {
			for i, x := range words {
				if x == w {
					cur = i
				}
			}
			return cur
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
			recvThpIndex = thpIndex - 2
		case lkpNetperfSize.MatchString(line):
			thpIndex = index("Throughput", thpIndex)
			recvThpIndex = thpIndex - 2
		case lkpNetperfData.MatchString(line):
			throughput += rubyToF(field(words, thpIndex))
			tm = rubyToF(field(words, timeIndex))
			if unit == "Mbps" {
				pktSize = rubyToF(field(words, pktIndex))
			}
			num++
		case lkpNetperfRecv.MatchString(line):
			recvThroughput += rubyToF(field(words, recvThpIndex))
			recvNum++
		}
	}
	if num == 0 {
		return nil
	}
	avg := throughput / float64(num)
	avgRecv := 0.0
	if recvNum > 0 {
		avgRecv = recvThroughput / float64(recvNum)
	}
	if iterations > 0 {
		throughput /= float64(iterations)
		recvThroughput /= float64(iterations)
	}
	both := throughput + recvThroughput
	workload := both * tm
	if unit == "Mbps" {
		workload = workload * 1e6 / 8 / pktSize
	}
	return map[string]float64{
		"Throughput_" + unit: avg, "ThroughputRecv_" + unit: avgRecv, "ThroughputBoth_" + unit: avg + avgRecv,
		"Throughput_total_" + unit: throughput, "ThroughputRecv_total_" + unit: recvThroughput,
		"ThroughputBoth_total_" + unit: both, "workload": workload,
	}
}
