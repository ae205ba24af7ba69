package emu

import (
	"fmt"
	"slices"
	"strings"
)

// Feature is a scheduler switch, named as the kernel names it in
// kernel/sched/features.h (or as the patch that introduced it did).
type Feature uint8

// The features. Order is the canonical print order.
const (
	EEVDF Feature = iota
	RUN_TO_PARITY
	WAKEUP_PREEMPTION
	WAKEUP_DEADLINE
	PLACE_LAG
	PLACE_DEADLINE_INITIAL
	GENTLE_FAIR_SLEEPERS
	START_DEBIT
	PLACE_MIGRATE
	TG_LOAD_RATELIMIT
	TTWU_QUEUE
	TTWU_QUEUE_L2
	TTWU_QUEUE_IDLE
	SIS_PROP
	SIS_UTIL
	WA_IDLE
	WA_WEIGHT
	WA_BIAS
	LB_SPREAD_LLC
	NUMA_IMB_LLC
	NUMA_IMB_CONSISTENT
	UCLAMP
	UTIL_EST
	UTIL_EST_FASTUP
	RT_GROUP_SCHED
	DELAY_DEQUEUE
	DELAY_ZERO
	PREEMPT_SHORT
	RESCHED_RQ_NR_RUNNING
	PICK_BUDDY
	PLACE_REL_DEADLINE
	numFeatures
)

type featureInfo struct {
	name string
	doc  string
}

var features = [numFeatures]featureInfo{
	EEVDF:                  {"EEVDF", "pick the eligible entity with the earliest virtual deadline (v6.6, 147f3efaa241); off: legacy CFS leftmost-vruntime pick with slices and granularities"},
	RUN_TO_PARITY:          {"RUN_TO_PARITY", "curr keeps the CPU until its deadline is renewed while eligible (63304558ba5d, 'Curb wakeup-preemption')"},
	WAKEUP_PREEMPTION:      {"WAKEUP_PREEMPTION", "a wakeup may preempt curr (check_preempt_wakeup / wakeup_preempt)"},
	WAKEUP_DEADLINE:        {"WAKEUP_DEADLINE", "experimental (PeterZ, 2023, not merged): preempt only if the wakee's deadline is earlier than curr's"},
	PLACE_LAG:              {"PLACE_LAG", "place_entity() keeps the entity's lag: v = V - vlag*(W+w)/W"},
	PLACE_DEADLINE_INITIAL: {"PLACE_DEADLINE_INITIAL", "a new task's first deadline is half a slice away"},
	GENTLE_FAIR_SLEEPERS:   {"GENTLE_FAIR_SLEEPERS", "CFS: a waking sleeper is placed at most sched_latency/2 before min_vruntime"},
	START_DEBIT:            {"START_DEBIT", "CFS: a new task starts one vslice after min_vruntime"},
	PLACE_MIGRATE:          {"PLACE_MIGRATE", "CFS: Tim Chen/PeterZ 'Fix starvation caused by task migration' (2022 RFC): se->migrated instead of exec_start=0, and a migrated task goes to the front or back of the destination instead of carrying its relative vruntime"},
	TG_LOAD_RATELIMIT:      {"TG_LOAD_RATELIMIT", "update_tg_load_avg() writes tg->load_avg at most once per ms per cfs_rq (v6.7, 1528c661c24b)"},
	TTWU_QUEUE:             {"TTWU_QUEUE", "remote wakeups across LLCs (or to an idle CPU) go through the target's wake list and an IPI (ttwu_queue_cond)"},
	TTWU_QUEUE_L2:          {"TTWU_QUEUE_L2", "Mathieu Desnoyers' RFC: queue every wakeup whose target is outside the waker's L2 (not merged)"},
	TTWU_QUEUE_IDLE:        {"TTWU_QUEUE_IDLE", "ttwu_queue_cond(): a wakeup inside the LLC onto an idle CPU goes through its wake list too (f3dd3f674555, v6.0); off (v5.x): only one whose wakee is still descheduling there (WF_ON_CPU, nr_running <= 1); the waker enqueues the rest under the target's rq lock"},
	SIS_PROP:               {"SIS_PROP", "select_idle_cpu() scans at most span_weight * wake_avg_idle / avg_scan_cost CPUs (at least 4) when the LLC has no idle core (features.h: on to v5.19, off from v6.0, removed in v6.7)"},
	SIS_UTIL:               {"SIS_UTIL", "select_idle_cpu() scans at most sd_llc_shared->nr_idle_scan CPUs (v6.0, Chen Yu)"},
	WA_IDLE:                {"WA_IDLE", "wake_affine(): prefer an idle waker or prev CPU"},
	WA_WEIGHT:              {"WA_WEIGHT", "wake_affine(): compare the effective loads of this and prev CPU"},
	WA_BIAS:                {"WA_BIAS", "wake_affine_weight(): bias toward prev by half the imbalance_pct"},
	LB_SPREAD_LLC:          {"LB_SPREAD_LLC", "calculate_imbalance() inside an LLC balances task counts, not utilisation (16b0a7a1a0af, v5.10); off: the pre-fix behaviour"},
	NUMA_IMB_LLC:           {"NUMA_IMB_LLC", "calculate_imbalance(): a NUMA imbalance of at most 2 is allowed while the destination's running tasks + 1 are at most sd->imb_numa_nr (e496132ebedd, v5.18); off: while the busiest group runs fewer than a quarter of its CPUs' worth (7d2b5dd0bcc4, v5.11)"},
	NUMA_IMB_CONSISTENT:    {"NUMA_IMB_CONSISTENT", "calculate_imbalance(): the NUMA allowance tests the whole imbalance, halved after it (cb29a5c19d2d, v6.0); off: halved first"},
	UCLAMP:                 {"UCLAMP", "the sched_uclamp_used static key: uclamp_rq_inc/dec on every enqueue/dequeue (46609ce22703); a workload that sets a clamp turns it on"},
	UTIL_EST:               {"UTIL_EST", "util_est (7f65ea42eb00, v4.17): a task's util_avg at its last sleep and its EWMA; cpu_util() and task_util_est() take the max with util_avg (load balancing, SIS_UTIL)"},
	UTIL_EST_FASTUP:        {"UTIL_EST_FASTUP", "util_est_update(): the EWMA jumps up to a higher sample and only decays on the way down (b8c96361402a, v5.5; permanent from v6.8)"},
	RT_GROUP_SCHED:         {"RT_GROUP_SCHED", "CONFIG_RT_GROUP_SCHED: struct task_group's rt_se and rt_rq pointers follow load_avg on its cache line (sched.h, v5.15 to today; Deng Pan's 2023 re-layout was not merged), and set_task_rq() reads them on every migration of a task in a cgroup"},
	DELAY_DEQUEUE:          {"DELAY_DEQUEUE", "dequeue_entity() (v6.12): a task that sleeps ineligible (negative lag) stays queued, se->sched_delayed, until pick_next_entity() picks it (then dequeue_entities(DEQUEUE_DELAYED)) or a wakeup finds it queued (ttwu_runnable(): requeue_delayed_entity(), no select)"},
	DELAY_ZERO:             {"DELAY_ZERO", "v6.12: a delayed entity's positive lag is dropped: at its final dequeue (finish_delayed_dequeue_entity()) and, on a requeue, by placing it again at zero lag (requeue_delayed_entity())"},
	PREEMPT_SHORT:          {"PREEMPT_SHORT", "85e511df3c (v6.12-rc1): a waking entity with a shorter slice, eligible and with an earlier deadline (or curr ineligible), cancels curr's RUN_TO_PARITY protection (check_preempt_wakeup_fair(): do_preempt_short()), and update_curr() reschedules an ineligible unprotected curr (did_preempt_short())"},
	RESCHED_RQ_NR_RUNNING:  {"RESCHED_RQ_NR_RUNNING", "update_curr()'s reschedule test as 85e511df3c merged it in v6.12-rc1: skip only when rq->nr_running == 1; off: cfs_rq->nr_running == 1, the fix (1c3386188ad9 / d4ac164bde, v6.12) and v6.6's update_deadline(); they differ on a group's cfs_rq with one entity beside other tasks"},
	PICK_BUDDY:             {"PICK_BUDDY", "pick_next_entity() (v6.12): run cfs_rq->next if it is eligible (the buddy dequeue_entities() sets on the parent of a sleeping task's entity); off (v6.6-v6.7): only with NEXT_BUDDY, which is off"},
	PLACE_REL_DEADLINE:     {"PLACE_REL_DEADLINE", "82e9d0456e06 (v6.12): a dequeue that is not a sleep (a migration) keeps the deadline relative to vruntime and place_entity() restores it instead of giving a new one"},
}

// Features is a set of scheduler switches.
type Features uint64

// Has reports whether f is on.
func (s Features) Has(f Feature) bool { return s&(1<<f) != 0 }

// With returns s with f on.
func (s Features) With(f Feature) Features { return s | 1<<f }

// Without returns s with f off.
func (s Features) Without(f Feature) Features { return s &^ (1 << f) }

func (f Feature) String() string {
	if f < numFeatures {
		return features[f].name
	}
	return fmt.Sprintf("feature(%d)", uint8(f))
}

// Doc is the feature's one-line description.
func (f Feature) Doc() string { return features[f].doc }

// AllFeatures lists every feature in canonical order.
func AllFeatures() []Feature {
	out := make([]Feature, numFeatures)
	for i := range out {
		out[i] = Feature(i)
	}
	return out
}

// String prints the set as /sys/kernel/debug/sched/features does: every
// feature, the ones that are off prefixed with NO_.
func (s Features) String() string {
	var parts []string
	for _, f := range AllFeatures() {
		if s.Has(f) {
			parts = append(parts, f.String())
		} else {
			parts = append(parts, "NO_"+f.String())
		}
	}
	return strings.Join(parts, " ")
}

// Profile is a named kernel version's feature set.
type Profile struct {
	Name string
	Doc  string
	Set  Features
}

func set(fs ...Feature) Features {
	var s Features
	for _, f := range fs {
		s = s.With(f)
	}
	return s
}

// common are the switches every profile has on.
// RT_GROUP_SCHED is a build option; the profiles model the kernels lkp
// builds, and Deng Pan's measurement on such a build (the false sharing
// of tg->load_avg with rt_se/rt_rq in set_task_cpu(), 5.06% of cycles on
// netperf UDP_RR with nr_client = nr_cpu, "sched/task_group: Re-layout
// structure to reduce false sharing", June 2023) needs it on: without it
// set_task_rq() reads only tg->se and tg->cfs_rq, on the line before. [E]
var common = []Feature{WAKEUP_PREEMPTION, TTWU_QUEUE, WA_IDLE, WA_WEIGHT, WA_BIAS, LB_SPREAD_LLC, UTIL_EST, UTIL_EST_FASTUP, RT_GROUP_SCHED}

// Profiles are the kernel versions rqemu models.
//
// v5.15 to v5.19, in what the model has (features.h is the same in both:
// SIS_PROP on, no SIS_UTIL): v5.18's e496132ebedd made the NUMA allowance
// of calculate_imbalance() sd->imb_numa_nr's (NUMA_IMB_LLC); sd->imb_numa_nr
// is v6.0's (026b98a93bbd), which differs from v5.18's (span_weight >> 2)
// only where the first level above the LLC spans a single LLC (>> 3). SIS_UTIL (70fb5ccf2ebb, SIS_PROP off),
// TTWU_QUEUE_IDLE (f3dd3f674555) and NUMA_IMB_CONSISTENT (cb29a5c19d2d) came
// in v6.0. Simplified in v5.x: find_busiest_group()'s prefer_sibling test and
// find_idlest_group()'s NUMA allowance are v6.6's.
var Profiles = []Profile{
	{"v5.15-cfs", "Linux 5.15: CFS with the relative-vruntime migration protocol and exec_start = 0 on migration; SIS_PROP, no SIS_UTIL",
		set(append(common, GENTLE_FAIR_SLEEPERS, START_DEBIT, SIS_PROP)...)},
	{"v5.19-cfs", "Linux 5.19: v5.15 with the NUMA allowance by sd->imb_numa_nr; SIS_PROP, no SIS_UTIL, no TTWU_QUEUE_IDLE",
		set(append(common, GENTLE_FAIR_SLEEPERS, START_DEBIT, SIS_PROP, NUMA_IMB_LLC)...)},
	{"v6.5-cfs", "Linux 6.5: CFS with SIS_UTIL, the last CFS release",
		set(append(common, GENTLE_FAIR_SLEEPERS, START_DEBIT, TTWU_QUEUE_IDLE, SIS_UTIL, NUMA_IMB_LLC, NUMA_IMB_CONSISTENT)...)},
	{"v6.6-eevdf", "Linux 6.6: EEVDF with RUN_TO_PARITY; tg->load_avg not ratelimited",
		set(append(common, EEVDF, RUN_TO_PARITY, PLACE_LAG, PLACE_DEADLINE_INITIAL, TTWU_QUEUE_IDLE, SIS_UTIL, NUMA_IMB_LLC, NUMA_IMB_CONSISTENT)...)},
	{"v6.7-eevdf", "Linux 6.7: v6.6 plus the tg->load_avg ratelimit",
		set(append(common, EEVDF, RUN_TO_PARITY, PLACE_LAG, PLACE_DEADLINE_INITIAL, TTWU_QUEUE_IDLE, SIS_UTIL, NUMA_IMB_LLC, NUMA_IMB_CONSISTENT, TG_LOAD_RATELIMIT)...)},
	{"v6.11-eevdf", "tip sched/core on v6.11 before 85e511df3c: v6.7 plus delayed dequeue (DELAY_DEQUEUE, DELAY_ZERO), per-task slices, PICK_BUDDY, PLACE_REL_DEADLINE; no PREEMPT_SHORT",
		set(append(common, v611...)...)},
	{"v6.12-eevdf", "Linux 6.12: v6.11-eevdf plus PREEMPT_SHORT with update_curr()'s cfs_rq->nr_running test (the fix); +RESCHED_RQ_NR_RUNNING is v6.12-rc1's",
		set(append(common, append(v611, PREEMPT_SHORT)...)...)},
}

// v611 is the EEVDF of the v6.12 merge window before PREEMPT_SHORT
// (features.h v6.12: DELAY_DEQUEUE, DELAY_ZERO, PICK_BUDDY and
// PLACE_REL_DEADLINE true; SIS_PROP gone since v6.7, NEXT_BUDDY false).
var v611 = []Feature{EEVDF, RUN_TO_PARITY, PLACE_LAG, PLACE_DEADLINE_INITIAL, TTWU_QUEUE_IDLE, SIS_UTIL, NUMA_IMB_LLC, NUMA_IMB_CONSISTENT,
	TG_LOAD_RATELIMIT, DELAY_DEQUEUE, DELAY_ZERO, PICK_BUDDY, PLACE_REL_DEADLINE}

// DefaultProfile is what runs when no -features is given.
const DefaultProfile = "v6.6-eevdf"

// ProfileNames lists the profiles.
func ProfileNames() []string {
	var out []string
	for _, p := range Profiles {
		out = append(out, p.Name)
	}
	return out
}

// FeatureError is a bad -features specification.
type FeatureError struct{ Msg string }

// Error is the message alone: the caller names the flag or argument it
// came from (-features, -base, -patch).
func (e *FeatureError) Error() string { return e.Msg }

// ParseFeatures reads "PROFILE[,+X][,-X]..." (also "NO_X" for -X): a
// profile name first, then edits applied in order. An empty string is the
// default profile.
func ParseFeatures(spec string) (Features, string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = DefaultProfile
	}
	parts := strings.Split(spec, ",")
	base := strings.TrimSpace(parts[0])
	i := slices.IndexFunc(Profiles, func(p Profile) bool { return p.Name == base })
	if i < 0 {
		return 0, "", &FeatureError{fmt.Sprintf("unknown profile %q (allowed: %s)", base, strings.Join(ProfileNames(), ", "))}
	}
	s := Profiles[i].Set
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		on := true
		switch {
		case strings.HasPrefix(p, "+"):
			p = p[1:]
		case strings.HasPrefix(p, "-"):
			p, on = p[1:], false
		case strings.HasPrefix(p, "NO_"):
			p, on = p[3:], false
		}
		f, ok := FeatureByName(p)
		if !ok {
			var names []string
			for _, f := range AllFeatures() {
				names = append(names, f.String())
			}
			return 0, "", &FeatureError{fmt.Sprintf("unknown feature %q (allowed: %s)", p, strings.Join(names, ", "))}
		}
		if on {
			s = s.With(f)
		} else {
			s = s.Without(f)
		}
	}
	return s, spec, nil
}

// FeatureByName finds a feature by its kernel name.
func FeatureByName(name string) (Feature, bool) {
	for _, f := range AllFeatures() {
		if f.String() == name {
			return f, true
		}
	}
	return 0, false
}
