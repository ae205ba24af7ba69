package study

import (
	"fmt"
	"math"
	"slices"

	"github.com/rqemu/rqemu/emu"
)

// The kernel test robot's base-kernel runs (experiments.md, lkp-base) and
// the stress-ng validation study on the same machine.
//
// lkp runs its jobs as lkp-tests' programs/*/run scripts inside the
// lkp-bootstrap.service unit (rootfs/addon/etc/systemd/system), so in the
// cgroup system.slice/lkp-bootstrap.service (depth 2). Its commands:
//   - stress-ng (programs/stress-ng/run, October 2023): `stress-ng
//     --timeout 60s --times --verify --metrics-brief --TEST NR_THREADS`,
//     nr_threads 100% of the CPUs; lkp's parse reads
//     stress-ng.TEST.ops_per_sec from the --metrics-brief table;
//   - hackbench (programs/hackbench/run): `hackbench -g NR_THREADS -f 20
//     --MODE [--pipe] -l $((30000 * nr_cpu / nr_threads)) -s 100`,
//     nr_threads the groups (50% of 128 CPUs: 64), MODE process or
//     threads, --pipe for ipc=pipe (sockets otherwise); the parse's
//     hackbench.throughput is (tasks * loops * datasize >> 10) over the
//     best Time: of the iterations (one here).

// lkpCgroup is the cgroup lkp's jobs run in.
const lkpCgroup = "system.slice/lkp-bootstrap.service"

// Lengths.
var (
	// nanosleepLen: lkp averages 60 s; the emulated run is read from 30
	// to 90 ms (-window-from, -window-to), its steady state. All 1792
	// threads start a pass at 0 and a pass's first sleeps are its longest
	// (stress_mwc32modn(1 << 18) + 8 ns, then halving), so at first the
	// threads sleep in step and dephase over ~20 ms: on spr-2s (seed 1,
	// -interval 10ms, stop 63) 9.51 M context switches/s and 0.47
	// migrations per wakeup at 0-10 ms, 12.17 M and 0.38 at 10-20 ms, then
	// 16.8-17.7 M and 0.27-0.29 in every 10 ms to 120 ms. A whole run of
	// 0.06 s (the length before stop 63) averaged a third of ramp in:
	// 15.33 M switches/s and 644667 ops/s, against 17.38 M and 751400
	// ops/s in this window; the seeds agree there (seeds 1-3: 751400,
	// 757817, 749483 ops/s), where the 0.06 s whole runs scattered by 7%
	// (644667, 692083, 688633). stress-ng counts an op when a thread's
	// pass of 19 sleeps ends (about 4 ms here), so the window reads the
	// ops that ended in it (bench.Windowed).
	nanosleepLen = Length{Default: 0.09, Quick: 0.004, Window: 0.03, QuickWindow: 0.001, Until: true,
		Unit: "s virtual (stress-ng -t, read from 0.03 s: -window-from/-window-to; lkp: 60)", Seconds: true}
	// stressNGLen: sem's and switch's ops take microseconds and settle
	// in ~6 ms (spr-2s, -interval 2ms, stop 63: switch 4.25 and 4.99 M
	// ops/s in the first two intervals, 5.41-5.62 M after; sem 10.5 M,
	// then 11.3-11.6 M), so they are read from 6 ms, 20 ms long.
	stressNGLen = Length{Default: 0.026, Quick: 0.002, Window: 0.006, QuickWindow: 0.0005, Until: true,
		Unit: "s virtual (stress-ng -t, read from 0.006 s; lkp: 60)", Seconds: true}
	// lkpHackbenchLen: lkp's hackbench runs for minutes (-l 30000 *
	// nr_cpu / groups: 60000 loops at 64 groups of icl-2s), an average of
	// its steady state: its pipes and sockets full, senders sleeping on
	// them, the placement settled. The rows run lkp's loops and stop at the
	// window's end (Until), measured from 0.3 s: stop 50's -interval series
	// (icl-2s, 128 groups, sockets) show migrations per wakeup falling from
	// 0.3 in the first 40 ms to 0.1 at 0.15 s and 0.04-0.05 at 0.3-0.4 s
	// (the balancer's NUMA level settling; that series was too short: those
	// 128-group socket rows go on drifting to 2.5 s, lkpCrowdedLen), and
	// the pipe rows reach their
	// full pipes within 50 ms; before stop 50 the rows ran 200 loops to
	// their end, all start and tail (a sender's 200 messages fit a pipe's
	// 655, so no sender slept). The quick scale is a smoke test (a window
	// of 3 ms inside the start, from 2 ms).
	lkpHackbenchLen = Length{Default: 0.5, Quick: 0.005, Seconds: true, Until: true, Window: 0.3, QuickWindow: 0.002,
		Unit: "s virtual (-window-to; hackbench -l is lkp's 30000 * nr_cpu / groups)"}
	// lkpCrowdedLen is lkpHackbenchLen for hackbench over sockets at 40
	// tasks a CPU (icl-2s, 128 groups), whose placement takes seconds to
	// settle: wake_affine() (WF_SYNC from sock_def_readable()) moves a
	// wakee to its waker's CPU, and with every CPU as loaded as the next
	// (wake_affine_weight(), WA_BIAS) it does so until a group's tasks
	// share a CPU or two. A 4 s -interval series of hb-icl-process-socket
	// (stop 57, seed 1): context switches/s 3.70 M at 0.25-0.5 s, 2.06 M
	// at 0.75-1 s, 0.96 M at 1.5-1.75 s, 0.74-0.77 M from 2.5 s to 3.75 s;
	// migrations/s 158 k, 54 k, 15 k, 7.5-11 k; throughput 463 k, 502 k,
	// 524 k, 528-529 k; at 1.6 s a group's 40 tasks were on 2.3 CPUs, 29
	// of them on one. So these rows are read from 2.5 s to 3 s. The other
	// hackbench rows (20 tasks a CPU or fewer) drift far less: on
	// xeon-e5-2x10 at 20 tasks a CPU, sockets, migrations/s fall 25%
	// from 0.25-0.5 s to 0.75-1 s and context switches/s stay within 10%;
	// pipes and threads over pipes at 4 a CPU (CFS) show no trend to 3 s;
	// hb-spr-process-socket itself (20 a CPU) holds 5.8-6.0 M switches/s
	// and 497-501 k throughput from 0.25 s to 1.5 s, its migrations/s
	// 534 k at 0.25-0.5 s and 465 k at 1.25-1.5 s. The drift notes under
	// lkp-base's table give each row's.
	//
	// What a window leaves out of lkp's averages, which span whole
	// iterations: on the cheap analog (xeon-e5-2x10, 40 groups, 40 tasks a
	// CPU, sockets, v6.12-eevdf, lkp's cgroup and -l 30000, seed 1, stop
	// 58) one whole iteration (39 s virtual) averages, for processes and
	// for threads (+RESCHED_RQ_NR_RUNNING), 820 k and 932 k switches/s,
	// 23.4 k and 24.1 k migrations/s, 120 k and 118 k throughput, against
	// 674 k and 737 k, 19.8 k and 20.1 k, 123 k and 122 k in the mean of
	// its 0.5 s steps from 2.5 s to 30 s: the last seconds, as groups
	// finish and the rest ping-pong (up to 3.6 M switches/s), add about a
	// fifth to the switches and migrations and take 2-3% off throughput.
	// A single 0.5 s step of the steady state scatters by 15-25% (599 k
	// to 889 k switches/s). Neither is the 2-4x between these rows' model
	// and lkp's switches and migrations.
	lkpCrowdedLen = later(lkpHackbenchLen, 2.5, 3)
)

// later is l read from from to to (virtual seconds) at the default scale.
func later(l Length, from, to float64) Length {
	l.Window, l.Default = from, to
	return l
}

// lkp-base's metrics.
var (
	csPerSec  = Metric{Name: "context switches/s", Fn: func(o *Outcome) float64 { return o.Counters["rate.context_switches_per_sec"] / 1e6 }, Format: "%.3f", Unit: " M"}
	migPerSec = Metric{Name: "migrations/s", Fn: func(o *Outcome) float64 { return o.Counters["rate.migrations_per_sec"] / 1e6 }, Format: "%.3f", Unit: " M"}
	// nrRunningSteady is rq->nr_running per CPU averaged over the window
	// (Stats.NrRunningNS): the tasks running or waiting and, from v6.11,
	// the sleepers delayed on a runqueue (DELAY_DEQUEUE), which count in
	// nr_running as sched_debug shows it. Before stop 51 it was the
	// tasks' running and waiting time (rq_cpu_time + run_delay), which
	// leaves the delayed sleepers out.
	nrRunningSteady = Metric{Name: "nr_running per CPU, in the run", Format: "%.2f", Fn: func(o *Outcome) float64 {
		d := o.Counters["run.virtual_sec"] * 1e9 * float64(max(o.CPUs, 1))
		if d == 0 {
			return 0
		}
		return o.Counters["sched.NrRunningNS"] / d
	}}
	// nrRunning is lkp's sched_debug.cpu.nr_running.avg: the run's
	// nr_running as lkp's sched_debug monitor samples it (lkpSamples).
	nrRunning = Metric{Name: "nr_running per CPU (sched_debug avg)", Format: "%.2f", Fn: func(o *Outcome) float64 {
		in, all := lkpSamples(lkpRunSec(o))
		return nrRunningSteady.Fn(o) * float64(in) / float64(all)
	}}
	volInvol = Metric{Name: "voluntary/involuntary switches", Format: "%.2f", Fn: func(o *Outcome) float64 {
		if o.InvolSwitches == 0 {
			return 0
		}
		return float64(o.VolSwitches) / float64(o.InvolSwitches)
	}}
	// tasksPerMsg is the tool's tasks' switches (voluntary and
	// involuntary) per hackbench message (groups x fds x fds x loops an
	// iteration), in the window: what lkp's rusage gives per run.
	tasksPerMsg = Metric{Name: "tasks' switches per message", Format: "%.4f", Fn: func(o *Outcome) float64 {
		msgs := hackbenchMsgsPerSec(o)
		if msgs <= 0 {
			return 0
		}
		return float64(o.VolSwitches+o.InvolSwitches) / o.Counters["run.virtual_sec"] / msgs
	}}
	// othersSwitches are the context switches/s whose task is not the
	// tool's (rq->nr_switches less the tasks' own): the idle task's, in
	// the model the only other.
	othersSwitches = Metric{Name: "switches of other tasks (idle)/s", Format: "%.3f", Unit: " M", Fn: func(o *Outcome) float64 {
		sec := o.Counters["run.virtual_sec"]
		if sec <= 0 {
			return 0
		}
		return (o.Counters["sched.NrSwitches"] - float64(o.VolSwitches+o.InvolSwitches)) / sec / 1e6
	}}
	// cpusUtilized is perf stat's "CPUs utilized": the time the CPUs ran
	// tasks (task-clock) over the run, the idle loop left out.
	cpusUtilized = Metric{Name: "CPUs utilized", Format: "%.0f", Fn: func(o *Outcome) float64 {
		return float64(o.CPUs) * (100 - idleShare(o)) / 100
	}}
	// idleSelf is the rows' "idle": the CPUs' time in the idle loop, % of
	// all cycles. The model charges that time to two symbols, do_idle()
	// (halted) and the idle driver's exit latency (intel_idle on Intel):
	// both are idle time, so both count (before stop 48 only do_idle did).
	idleSelf = Metric{Name: "idle", Format: "%.2f", Unit: "%", Fn: idleShare}
)

// idleShare is the idle loop's self share of all cycles, in %.
func idleShare(o *Outcome) float64 {
	var s float64
	for _, sym := range emu.IdleLoopSymbols() {
		s += o.Self[sym]
	}
	return s
}

// selfShare is lkp's perf-profile.self.cycles-pp.SYM: the symbol's share
// of all cycles, idle included.
func selfShare(sym string) Metric {
	return Metric{Name: sym + " (self)", Key: "self." + sym, Format: "%.2f", Unit: "%"}
}

// nanosleepBound is why no model that keeps nanosleep()'s timer slack
// meets both of nanosleep-spr's ops/s and nr_running (Little's law over
// the machine). At 462089 ops/s of 19 sleeps, 8.78 M sleeps/s; a sleep
// asks for stress_mwc32modn(i)+8 ns, 13.8 us on average over the 19, and
// hrtimer_nanosleep() wakes it by its hard expiry, at most
// timer_slack_ns (50 us) later: at most 8.78 M/s x 63.8 us = 560 of the
// 1792 threads sleep at a time, so at least 1232 are on a runqueue, 5.5
// per CPU in the run, 2.75 in lkp's average of its two samples (one
// before the run: lkpSamples). It is printed, not fitted to.
const nanosleepBound = "at 8.78 M sleeps/s of at most 13.8 us asked + 50 us slack, at most 560 of the 1792 threads sleep at a time, so at least 5.5 per CPU are on a runqueue in the run (Little's law), 2.75 in lkp's average of an idle pre-test sample and one in the run"

// lkp's sched_debug monitor, as lkp-tests runs it (include/category/
// benchmark lists it among every benchmark job's monitors):
//   - lib/job.sh: wakeup_pre_test() wakes the monitors (activate-monitor),
//     sleeps 1 s, then the test starts;
//   - programs/proc-vmstat/monitor (sched_debug's monitor links to it):
//     `cat /sys/kernel/debug/sched/debug` at once, then every 60 s
//     (sched_debug's default interval) until post-test;
//   - programs/sched_debug/parse: per sample, the average over the CPUs;
//   - lib/matrix.rb: create_stats_matrix() sums a key over its samples and
//     divides by the number of samples.
//
// So the first sample sees the machine before the test, idle, and counts
// as one sample of nr_running 0: a 60 s stress-ng run has two samples
// (monitor time 0 and 60 s, the run's 59th second), and lkp's figure is
// half the run's. lkpSamples is that count for a run of runSec seconds:
// the samples at 60 s, 120 s, ... of monitor time taken before the run's
// end (1 + runSec), and all of them with the idle one. Simplified: a sample
// between two hackbench iterations (their exit and fork) counts as the run's
// steady state, and the monitor's drift (each cat's time) is left out.
func lkpSamples(runSec float64) (in, all int) {
	const interval, preTest = 60.0, 1.0
	in = int(math.Floor((preTest + runSec) / interval))
	return in, in + 1
}

// lkpRunSec is how long lkp's run of the row lasts at the emulated rate:
// stress-ng's 60 s (lkp's testtime, `--timeout 60s`); hackbench's eight
// iterations (jobs/hackbench.yaml: iterations: 8, since 2021), each of the
// parse's tasks * messages * datasize >> 10 KiB at the emulated
// hackbench.throughput (KiB/s). 0 when the run gives no rate.
func lkpRunSec(o *Outcome) float64 {
	switch o.Run.Workload {
	case "stress-ng":
		return 60
	case "hackbench":
		v := flagInts(o.Run, "g", "f", "l", "s")
		return lkpHackbenchRunSec(v[0], v[1], v[2], v[3], o.LKP["hackbench.throughput"])
	}
	return 0
}

// lkpHackbenchIterations is jobs/hackbench.yaml's `iterations: 8` (since
// 2021): the runs lkp's GNU time and monitors span.
const lkpHackbenchIterations = 8

// lkpHackbenchRunSec is lkp's hackbench run at throughput tp (KiB/s, its
// parse's): the iterations, each tasks * loops * datasize >> 10 KiB.
// 0 without a rate.
func lkpHackbenchRunSec(groups, fds, loops, datasize int, tp float64) float64 {
	if tp <= 0 {
		return 0
	}
	kib := (2 * groups * fds * loops * datasize) >> 10
	return lkpHackbenchIterations * float64(kib) / tp
}

// hackbenchMsgsPerSec is the messages/s behind lkp's hackbench.throughput
// (KiB/s of tasks x loops x datasize): each iteration moves groups x fds x
// fds x loops messages, fds x 1024 / (2 x datasize) per KiB.
func hackbenchMsgsPerSec(o *Outcome) float64 {
	v := flagInts(o.Run, "f", "s")
	f, ds := v[0], v[1]
	if ds <= 0 {
		return 0
	}
	return o.LKP["hackbench.throughput"] * 1024 * float64(f) / float64(2*ds)
}

// rusageNotes are a hackbench row's notes of what lkp's two switch counts
// say together: rusage's voluntary and involuntary switches per run (GNU
// time over the 8 iterations, bin/run-test) against perf-stat's
// machine-wide context switches/s, the run taken as 8 best iterations at
// the published throughput (so at least that long). Their texts are not
// pairs (they start with a word): derived figures, printed beside the
// model's.
func rusageNotes(row string, groups, loops int, tp, csPerSec, vol, invol float64) []Note {
	run := lkpHackbenchRunSec(groups, 20, loops, 100, tp)
	msgs := lkpHackbenchIterations * float64(groups*20*20*loops)
	tasks := (vol + invol) / run
	return []Note{
		{Row: row, Metric: tasksPerMsg, Pub: fmt.Sprintf("derived: %.4f (rusage %.3g per run over its messages)", (vol+invol)/msgs, vol+invol)},
		{Row: row, Metric: othersSwitches, Pub: fmt.Sprintf("derived: >= %.2f M (perf %.2f M - rusage over >= %.0f s)", (csPerSec-tasks)/1e6, csPerSec/1e6, run)},
	}
}

// pub is m with its published value.
func pub(m Metric, v float64) Metric { m.Pub = v; return m }

// lkpHackbench is lkp's hackbench command line for groups groups on a
// machine of cpus CPUs (programs/hackbench/run: -l 30000 * nr_cpu /
// nr_threads, nr_threads the groups).
func lkpHackbench(cpus, groups int, mode string, pipe bool) []string {
	args := []string{"-g", fmt.Sprint(groups), "-f", "20", "--" + mode}
	if pipe {
		args = append(args, "--pipe")
	}
	return append(args, "-l", fmt.Sprint(30000*cpus/groups), "-s", "100", "-cgroup", lkpCgroup)
}

var lkpBase = &Study{
	Name: "lkp-base", Set: "calibration",
	Doc: "the kernel test robot's base-kernel runs on spr-2s, icl-2s and epyc-9654-2s (stress-ng nanosleep, hackbench pipe/socket), each on its kernel",
	Published: "lkp's base-kernel columns, 60-300 s averages (experiments.md lkp-base); nanosleep-spr's native_queued_spin_lock_slowpath 1.29% has no model symbol " +
		"(a contended rq lock's wait is charged to its caller), and its select_idle_cpu 11.21% + select_idle_sibling 0.50% compare with the model's select_idle_sibling (which charges the scan there); " +
		"nr_running is lkp's sched_debug.cpu.nr_running.avg, a mean of 60 s samples whose first is taken before the run (lkpSamples; the run's own value is a note); " +
		"nanosleep-spr's nr_running 2.05 cannot be met together with its ops/s: " + nanosleepBound,
	Source:   "Intel 0-day kernel test robot reports, the parent commits' columns (lkp-tests)",
	Settings: []Setting{{"row's kernel", ""}},
	Rows: []Row{
		{Label: "nanosleep-spr", Topo: "spr-2s", Features: "v6.6-eevdf", Workload: "stress-ng",
			Args:   []string{"--timeout", "{L}", "--times", "--verify", "--metrics-brief", "--nanosleep", "224", "-cgroup", lkpCgroup},
			Length: nanosleepLen,
			Metrics: []Metric{
				pub(Metric{Name: "stress-ng.nanosleep.ops_per_sec", Key: "stress-ng.nanosleep.ops_per_sec"}, 462089),
				pub(csPerSec, 9.62), pub(migPerSec, 2.65),
				pub(selfShare("update_cfs_group"), 30.41), pub(selfShare("update_load_avg"), 9.76),
				pub(selfShare("select_idle_sibling"), 11.21+0.50),
				pub(idleSelf, 8.19), pub(nrRunning, 2.05),
			}},
		{Label: "hb-icl-process-pipe", Topo: "icl-2s", Features: "v6.6-eevdf", Workload: "hackbench",
			Args: lkpHackbench(128, 64, "process", true), Length: lkpHackbenchLen,
			Metrics: []Metric{
				pub(hbThroughput, 1052797), pub(csPerSec, 9.03), pub(migPerSec, 0.544),
				pub(volInvol, 4.41/0.99),
			}},
		{Label: "hb-epyc-threads-pipe", Topo: "epyc-9654-2s", Features: "v6.5-cfs", Workload: "hackbench",
			// The l2-ttwu-epyc load, measured with perf stat: run where
			// that study runs it (a login session's cgroup). Its window
			// is in a transient that the 49 s perf stat average is not:
			// clone() keeps the threads on the parent's socket (no
			// SD_BALANCE_FORK at a NUMA distance of 32), and socket 1
			// takes tasks only when the NUMA level's idle balance (every
			// 384 ms at least) moves cache-hot ones, after cache_nice_tries
			// failures. Stop 61, seed 1, -interval 50ms: 177-181 CPUs
			// utilized (socket 1 idle) from 0 to 1.1 s, 193 at 1.10-1.15 s,
			// 207 at 1.15-1.20 s; perf stat's average is 253. The idle,
			// node N notes show it.
			Args:   []string{"-g", "32", "-f", "20", "--threads", "--pipe", "-l", "480000", "-s", "100", "-cgroup", "user.slice/user-1000.slice/session-1.scope"},
			Length: lkpHackbenchLen,
			Metrics: []Metric{
				hbThroughput, pub(csPerSec, 9.27), pub(migPerSec, 2.41), pub(cpusUtilized, 253),
			}},
		// v6.11 tip: delayed dequeue, before PREEMPT_SHORT (v6.11-eevdf).
		{Label: "hb-spr-process-socket", Topo: "spr-2s", Features: "v6.11-eevdf", Workload: "hackbench",
			Args: lkpHackbench(224, 112, "process", false), Length: lkpHackbenchLen,
			Metrics: []Metric{pub(hbThroughput, 623219), pub(csPerSec, 4.71), pub(migPerSec, 0.602), pub(nrRunning, 8.92), pub(volInvol, 6.48/1.65)}},
		// v6.13-rc: the model has no rule of v6.13's that v6.12 lacks, so the
		// row runs v6.12-eevdf (simplified).
		{Label: "hb-icl-threads-pipe", Topo: "icl-2s", Features: "v6.12-eevdf", Workload: "hackbench",
			Args: lkpHackbench(128, 64, "threads", true), Length: lkpHackbenchLen,
			Metrics: []Metric{pub(hbThroughput, 823004), pub(migPerSec, 0.577), pub(nrRunning, 6.10)}},
		// v6.14-rc tip: run as v6.12-eevdf, with v6.12's base slice (the
		// model has no v6.14 profile; simplified).
		{Label: "hb-icl-process-socket", Topo: "icl-2s", Features: "v6.12-eevdf", Workload: "hackbench",
			Args: lkpHackbench(128, 128, "process", false), Length: lkpCrowdedLen,
			Metrics: []Metric{pub(hbThroughput, 433157), pub(csPerSec, 1.66), pub(migPerSec, 0.0446), pub(volInvol, 2.02/0.40)}},
		// v6.12-rc1: PREEMPT_SHORT with update_curr()'s rq->nr_running test.
		{Label: "hb-icl-threads-socket", Topo: "icl-2s", Features: "v6.12-eevdf,+RESCHED_RQ_NR_RUNNING", Workload: "hackbench",
			Args: lkpHackbench(128, 128, "threads", false), Length: lkpCrowdedLen,
			Metrics: []Metric{pub(hbThroughput, 283113), pub(csPerSec, 3.87), pub(nrRunning, 24.82), pub(volInvol, 5.76/2.69)}},
	},
	Notes: slices.Concat([]Note{
		{Row: "nanosleep-spr", Metric: nrRunningSteady, Pub: lkpSampledOnly},
		{Row: "hb-spr-process-socket", Metric: nrRunningSteady, Pub: lkpSampledOnly},
		{Row: "hb-icl-threads-pipe", Metric: nrRunningSteady, Pub: lkpSampledOnly},
		{Row: "hb-icl-threads-socket", Metric: nrRunningSteady, Pub: lkpSampledOnly},
	},
		// experiments.md's per-run voluntary / involuntary switches beside
		// its context switches/s.
		rusageNotes("hb-icl-process-pipe", 64, 60000, 1052797, 9.03e6, 4.41e8, 0.99e8),
		rusageNotes("hb-spr-process-socket", 112, 60000, 623219, 4.71e6, 6.48e8, 1.65e8),
		rusageNotes("hb-icl-process-socket", 128, 30000, 433157, 1.66e6, 2.02e8, 0.40e8),
		rusageNotes("hb-icl-threads-socket", 128, 30000, 283113, 3.87e6, 5.76e8, 2.69e8),
		driftNotes("stress-ng.nanosleep.ops_per_sec", "nanosleep-spr"),
		driftNotes("hackbench.throughput", "hb-icl-process-pipe", "hb-epyc-threads-pipe", "hb-spr-process-socket", "hb-icl-threads-pipe",
			"hb-icl-process-socket", "hb-icl-threads-socket"),
		nodeIdleNotes("nanosleep-spr", "hb-icl-process-pipe", "hb-epyc-threads-pipe", "hb-spr-process-socket",
			"hb-icl-threads-pipe", "hb-icl-process-socket", "hb-icl-threads-socket"),
	),
	Headline: &Headline{Row: "nanosleep-spr", Metric: 0, Pub: "462089"},
	Rollup:   true,
}

// driftOf is a window rate's change from the window's first half to its
// second (Outcome.Drift), in %: near zero where the window is a steady
// state, as lkp's minutes-long averages are.
func driftOf(name, key string) Metric {
	return Metric{Name: name + ", 2nd half of the window vs 1st", Format: "%+.1f", Unit: "%",
		Fn: func(o *Outcome) float64 { return o.Drift[key] }}
}

// driftNotes are the drift notes of rows whose lkp rate is key: their
// switches, migrations and that rate, half against half.
func driftNotes(key string, rows ...string) []Note {
	var ns []Note
	for _, row := range rows {
		for _, m := range []Metric{
			driftOf("context switches/s", "rate.context_switches_per_sec"),
			driftOf("migrations/s", "rate.migrations_per_sec"),
			driftOf(key, key),
		} {
			ns = append(ns, Note{Row: row, Metric: m, Pub: lkpSteady})
		}
	}
	return ns
}

// nodeIdleNotes are the idle loop's share of each NUMA node's CPUs'
// time (Outcome.NodeIdle) for rows on two-node machines: a machine-wide
// idle share or CPUs utilized split by socket. A window that a socket
// sits out (hb-epyc-threads-pipe: see its row) is a transient that lkp's
// minute-long averages do not have.
func nodeIdleNotes(rows ...string) []Note {
	var ns []Note
	for _, row := range rows {
		for n := range 2 {
			ns = append(ns, Note{Row: row, Metric: nodeIdleShare(n), Pub: "lkp: machine-wide only"})
		}
	}
	return ns
}

// nodeIdleShare is Outcome.NodeIdle[n].
func nodeIdleShare(n int) Metric {
	return Metric{Name: fmt.Sprintf("idle, node %d CPUs", n), Format: "%.1f", Unit: "%", Fn: func(o *Outcome) float64 {
		if n >= len(o.NodeIdle) {
			return 0
		}
		return o.NodeIdle[n]
	}}
}

// lkpSteady is the drift notes' published column.
const lkpSteady = "lkp: a minutes-long average, so ~0"

// lkpSampledOnly is a note's published column where lkp gives only its
// samples' average (the nr_running metric).
const lkpSampledOnly = "lkp gives only its samples' average"

// stressNGRow is stress-ng's STRESSOR at nr_threads 100% of spr-2s, as lkp
// runs it.
func stressNGRow(stressor string, l Length) Row {
	return Row{Label: stressor, Topo: "spr-2s", Workload: "stress-ng",
		Args:   []string{"--timeout", "{L}", "--times", "--verify", "--metrics-brief", "--" + stressor, "224", "-cgroup", lkpCgroup},
		Length: l}
}

var tgloadStressNG = &Study{
	Name: "tgload-stressng", Set: "validation",
	Doc:      "stress-ng nanosleep, sem and switch at nr_threads 100% (224 workers) on spr-2s in lkp's cgroup, v6.6-eevdf vs +TG_LOAD_RATELIMIT",
	Settings: tgload,
	Rows:     []Row{stressNGRow("nanosleep", nanosleepLen), stressNGRow("sem", stressNGLen), stressNGRow("switch", stressNGLen)},
	Metrics: []Metric{
		{Name: "ops_per_sec", Key: "ops_per_sec"}, csPerSec, migPerSec,
		selfShare("update_cfs_group"), selfShare("update_load_avg"),
	},
	Headline: &Headline{Row: "nanosleep", Setting: 1},
}
