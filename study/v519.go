package study

import "fmt"

// The two v5.19 CFS studies (experiments.md, validation set): SIS_PROP vs
// SIS_UTIL on one SPR socket, and TTWU_QUEUE_IDLE on lkp's Cascade Lake-AP.
// Both commits were merged for v6.0 on top of v5.19's scheduler: the base
// is v5.19-cfs (SIS_PROP on, no SIS_UTIL, no TTWU_QUEUE_IDLE).

// Lengths.
var (
	// sisNetperfLen: a point at 224 clients is about 12 s of host time
	// at 10 ms; the study runs 16 netperf points by default.
	sisNetperfLen = Length{Default: 0.01, Quick: 0.001, Unit: "s virtual (netperf -l)", Seconds: true}
	// sisHackbenchLen: -g 8 at 200 loops is 7-15 s of host time; the
	// study has 32 hackbench runs.
	sisHackbenchLen = Length{Default: 200, Quick: 20, Int: true, Unit: "loops (hackbench -l)"}
	// clxNetperfLen: 384 clients on clx-ap-2s are about 14 s of host time
	// per 5 ms.
	clxNetperfLen = Length{Default: 0.02, Quick: 0.002, Unit: "s virtual (netperf -l; lkp: 300)", Seconds: true}
)

// sisScanned is select_idle_cpu()'s CPUs visited per wakeup (all wakeups,
// those that never scan included), and sisPerScan the same per scan.
var (
	sisScanned = Metric{Name: "select_idle_cpu CPUs scanned per wakeup", Fn: ratio("sched.SISProbes", "sched.TTWUCount"), Format: "%.2f"}
	sisPerScan = Metric{Name: "... per select_idle_cpu scan", Fn: ratio("sched.SISProbes", "sched.SISScans"), Format: "%.2f"}
)

// sisNetperfRow is netperf TEST with clients client/server pairs on
// spr-1s. The TCP_RR rows run only with -all: the model's TCP_RR is
// UDP_RR's schedule (bench/netperf.go: one request/response loop, only the
// printed headers differ), so they repeat the UDP_RR rows.
func sisNetperfRow(test string, clients int) Row {
	return Row{Label: fmt.Sprintf("%s %d", test, clients), Topo: "spr-1s", Workload: "netperf",
		Args:    []string{"-t", test, "-nr", fmt.Sprint(clients), "-l", "{L}"},
		Length:  sisNetperfLen,
		Extra:   test == "TCP_RR",
		Metrics: []Metric{tpsPerClient, sisScanned, sisPerScan}}
}

// sisHackbenchRow is hackbench -g groups in mode (process or threads)
// over pipes or sockets on spr-1s.
func sisHackbenchRow(groups int, mode string, pipe bool) Row {
	ipc, args := "socket", []string{"-g", fmt.Sprint(groups), "-f", "20", "--" + mode}
	if pipe {
		ipc, args = "pipe", append(args, "--pipe")
	}
	return Row{Label: fmt.Sprintf("hackbench g%d %s %s", groups, mode, ipc), Topo: "spr-1s", Workload: "hackbench",
		Args:    append(args, "-l", "{L}", "-s", "100"),
		Length:  sisHackbenchLen,
		Metrics: []Metric{hbThroughput, sisScanned, sisPerScan}}
}

func sisUtilRows() []Row {
	var rows []Row
	for _, test := range []string{"TCP_RR", "UDP_RR"} {
		for _, n := range []int{28, 56, 84, 112, 140, 168, 196, 224} {
			rows = append(rows, sisNetperfRow(test, n))
		}
	}
	for _, g := range []int{1, 2, 4, 8} {
		for _, mode := range []string{"process", "threads"} {
			rows = append(rows, sisHackbenchRow(g, mode, true), sisHackbenchRow(g, mode, false))
		}
	}
	return rows
}

var sisUtilSPR1S = &Study{
	Name: "sis-util-spr1s", Set: "validation",
	Doc: "netperf TCP_RR/UDP_RR at 28-224 clients and hackbench 1-8 groups (process/threads, pipe/sockets) on spr-1s (112 CPUs, one LLC), v5.19 CFS with SIS_PROP vs with SIS_UTIL (70fb5ccf2ebb)",
	// The publication's runs are not described beyond experiments.md's
	// row: the workloads run in the root cgroup, netperf over loopback.
	Source:   `Chen Yu, "sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of util_avg" (70fb5ccf2ebb, v6.0)`,
	Settings: []Setting{{"SIS_PROP", "v5.19-cfs"}, {"SIS_UTIL", "v5.19-cfs,-SIS_PROP,+SIS_UTIL"}},
	Rows:     sisUtilRows(),
	Headline: &Headline{Row: "UDP_RR 224", Setting: 1},
}

var ttwuIdleCLXAP = &Study{
	Name: "ttwu-idle-clxap", Set: "validation",
	Doc:      "netperf UDP_RR at nr_threads 200% (384 clients) on clx-ap-2s (lkp-csl-2ap4, 4 nodes) in lkp's cgroup, v5.19 CFS -TTWU_QUEUE_IDLE vs +TTWU_QUEUE_IDLE (f3dd3f674555)",
	Source:   `Tianchen Ding, "sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle" (f3dd3f674555, v6.0), lkp on lkp-csl-2ap4`,
	Settings: []Setting{{"-TTWU_QUEUE_IDLE", "v5.19-cfs"}, {"+TTWU_QUEUE_IDLE", "v5.19-cfs,+TTWU_QUEUE_IDLE"}},
	Rows: []Row{{Label: "UDP_RR 200%", Topo: "clx-ap-2s", Workload: "netperf",
		// lkp's netperf command line (as lkp-base's rows, in its
		// cgroup): nr_threads 200% of 192 CPUs.
		Args:   []string{"-4", "-H", "127.0.0.1", "-t", "UDP_RR", "-c", "-C", "-nr", "200%", "-l", "{L}", "-cgroup", lkpCgroup},
		Length: clxNetperfLen}},
	Metrics: []Metric{
		tpsPerClient, csPerSec, migPerSec,
		{Name: "wakeups through the wake list", Format: "%.2f", Unit: "%", Fn: func(o *Outcome) float64 {
			return 100 * ratio("sched.WakelistWakeups", "sched.TTWUCount")(o)
		}},
	},
	Headline: &Headline{Row: "UDP_RR 200%", Setting: 1},
}
