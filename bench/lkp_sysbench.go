package bench

import (
	"math"
	"regexp"
	"strconv"
)

// lkpOLTPRules are programs/oltp/parse's patterns in its order (the
// first that matches a line wins) and the keys each prints.
var lkpOLTPRules = []struct {
	re   *regexp.Regexp
	keys []string
}{
	{regexp.MustCompile(`read:\s+(\d+)`), []string{"read"}},
	{regexp.MustCompile(`write:\s+(\d+)`), []string{"write"}},
	{regexp.MustCompile(`other:\s+(\d+)`), []string{"other"}},
	{regexp.MustCompile(`transactions:\s+(\d+)\s+\(([\d.]+) per sec.\)`), []string{"transactions", "transactions/s"}},
	{regexp.MustCompile(`queries:\s+(\d+)\s+\(([\d.]+) per sec.\)`), []string{"queries", "queries/s"}},
	{regexp.MustCompile(`max:\s+([\d.]+)`), []string{"latency_max_ms"}},
	{regexp.MustCompile(`min:\s+([\d.]+)`), []string{"latency_min_ms"}},
	{regexp.MustCompile(`avg:\s+([\d.]+)`), []string{"latency_avg_ms"}},
	{regexp.MustCompile(`95th percentile:\s+([\d.]+)`), []string{"latency_95th_ms"}},
	{regexp.MustCompile(`sum:\s+([\d.]+)`), []string{"latency_sum_ms"}},
	{regexp.MustCompile(`events \(avg/stddev\):\s+([\d.]+)/([\d.]+)`), []string{"thread_events_stddev%"}},
	{regexp.MustCompile(`execution time \(avg/stddev\):\s+([\d.]+)/([\d.]+)`), []string{"thread_time_stddev%"}},
}

// lkpOLTP is lkp-tests' programs/oltp/parse, the parser of lkp's oltp
// test (sysbench's OLTP Lua scripts): the SQL statistics' read, write,
// other, transactions and queries (and their per-second rates), the
// latency summary in ms, and the threads' fairness as a stddev in
// percent of the mean (stddev * 100 / avg).
func lkpOLTP(out string) map[string]float64 {
	st := map[string]float64{}
	for _, line := range rubyLines(out) {
		line = resolveInvalidBytes(line)
		for _, r := range lkpOLTPRules {
			m := r.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if len(r.keys) == 1 && len(m) == 3 {
				// "A/B": B * 100 / A (Ruby's to_f: a malformed number is 0).
				st[r.keys[0]] = rubyToF(m[2]) * 100 / rubyToF(m[1])
			} else {
				for i, k := range r.keys {
					if v, err := strconv.ParseFloat(m[i+1], 64); err == nil {
						st[k] = v
					}
				}
			}
			break
		}
	}
	return st
}

// lkpSysbenchRules are programs/sysbench/parse's patterns in its order
// (the parser of sysbench-threads, -cpu, -memory and -mutex) and how
// each value is kept: summed, averaged, or the minimum or maximum.
var lkpSysbenchRules = []struct {
	re   *regexp.Regexp
	keys []string
	agg  byte // 't'otal, 'a'vg, 'n' min, 'x' max
}{
	{regexp.MustCompile(`Total operations:\s+\d+\s+\(([0-9.]+)\s+.+\)`), []string{"throughput_ops/s"}, 't'},
	{regexp.MustCompile(`.+\s+transferred\s+\(([0-9.]+)\s+.+\)`), []string{"throughput_MB/s"}, 't'},
	{regexp.MustCompile(`total number of events:\s+(\d+)`), []string{"workload"}, 't'},
	{regexp.MustCompile(`events/s \(eps\):\s+([0-9.]+)`), []string{"throughput_events/s"}, 'a'},
	{regexp.MustCompile(`time elapsed:\s+([0-9.]+)`), []string{"throughput_time"}, 'a'},
	{regexp.MustCompile(`min:\s+([0-9.]+)`), []string{"latency_ms.min"}, 'n'},
	{regexp.MustCompile(`avg:\s+([0-9.]+)`), []string{"latency_ms.avg"}, 'a'},
	{regexp.MustCompile(`max:\s+([0-9.]+)`), []string{"latency_ms.max"}, 'x'},
	{regexp.MustCompile(`95th percentile:\s+([0-9.]+)`), []string{"latency_ms.95th"}, 'a'},
	{regexp.MustCompile(`events\s+\(avg/stddev\):\s+([0-9.]+)/([0-9.]+)`), []string{"events/thread.avg", "events/thread.stddev"}, 'a'},
	{regexp.MustCompile(`execution time.+:\s+([0-9.]+)/([0-9.]+)`), []string{"runtime/thread.avg", "runtime/thread.stddev"}, 'a'},
}

// lkpSysbench is lkp-tests' programs/sysbench/parse, which lkp's
// sysbench-threads and sysbench-cpu tests link to: every matching line
// adds a value to its key, and the key prints as the values' sum
// (throughputs, workload), mean (latency avg and 95th, the threads'
// fairness), minimum or maximum. rqemu's sysbench models oltp_read_write
// only, which lkp reads with programs/oltp/parse (LKPProgram); this port
// is for sysbench's other tests' output.
func lkpSysbench(out string) map[string]float64 {
	vals := map[string][]float64{}
	agg := map[string]byte{}
	for _, line := range rubyLines(out) {
		for _, r := range lkpSysbenchRules {
			m := r.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			for i, k := range r.keys {
				vals[k] = append(vals[k], rubyToF(m[i+1]))
				agg[k] = r.agg
			}
			break
		}
	}
	st := map[string]float64{}
	for k, v := range vals {
		switch agg[k] {
		case 't':
			st[k] = rubyFloatSum(v)
		case 'a':
			st[k] = rubyFloatSum(v) / float64(len(v))
		case 'n':
			st[k] = math.Inf(1)
			for _, x := range v {
				st[k] = min(st[k], x)
			}
		case 'x':
			st[k] = math.Inf(-1)
			for _, x := range v {
				st[k] = max(st[k], x)
			}
		}
	}
	return st
}
