package bench

import (
	"math"
	"regexp"
	"strconv"
	"testing"
)

// lkp's hackbench parser reads the report: KiB passed by all tasks over
// the printed time, which is rqemu's throughput up to the time's rounding.
func TestLKPHackbench(t *testing.T) {
	res, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "hackbench", "-g", "2", "-f", "4", "-l", "200")
	st := LKPStats("hackbench", out)
	m := regexp.MustCompile(`(?m)^Time: (\S+)$`).FindStringSubmatch(out)
	if st == nil || m == nil {
		t.Fatalf("no lkp stats from:\n%s", out)
	}
	printed, _ := strconv.ParseFloat(m[1], 64)
	v := res.Workload.Metrics(res.Sim).Values
	want := v["throughput"] * v["time_sec"] / printed
	if got := st["hackbench.throughput"]; math.Abs(got-want) > 1e-9*want {
		t.Errorf("hackbench.throughput = %v, want %v", got, want)
	}
	if LKPStats("schbench", out) != nil {
		t.Error("stats for a workload without an lkp parser here")
	}
}
