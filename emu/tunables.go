package emu

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/rqemu/rqemu/contention"
)

// Tunables are the scheduler's knobs in force for a Sim: the sysctls as
// the kernel sets them for the machine (fair.c: update_sysctl(),
// sched_init_granularity(): a normalized value times the tunable-scaling
// factor), then whatever -sched set by name (SchedSettings), as a write to
// the debugfs file or sysctl would. Fixed once the Sim is built; every
// kernel rule that reads a knob reads it here.
type Tunables struct {
	// Scaling is sysctl_sched_tunable_scaling (SCHED_TUNABLESCALING_NONE
	// 0, LOG 1, the default, LINEAR 2) and Factor what
	// get_update_sysctl_factor() makes of it: 1, 1 + ilog2(min(ncpus, 8))
	// or min(ncpus, 8).
	Scaling uint64
	Factor  uint64
	// The CFS kernels' knobs (v6.5 and before).
	Latency           uint64 // sysctl_sched_latency
	MinGranularity    uint64 // sysctl_sched_min_granularity
	WakeupGranularity uint64 // sysctl_sched_wakeup_granularity
	// NrLatency is sched_nr_latency: 8 as initialized. In the debugfs
	// kernels (v5.13 to v6.5) only sched_update_scaling(), on a write of
	// tunable_scaling, recomputes it, from the values then in force
	// (whose ratio at the scaled defaults is 8 whatever the factor): a
	// write of latency_ns or min_granularity_ns leaves it alone.
	NrLatency uint64
	// BaseSlice is sysctl_sched_base_slice (EEVDF's request size r_i).
	BaseSlice     uint64
	MigrationCost int64 // sysctl_sched_migration_cost
	NrMigrate     int   // sysctl_sched_nr_migrate
	TickNsec      int64 // TICK_NSEC = NSEC_PER_SEC / HZ (CONFIG_HZ, not a knob)
	// TgLoadAvgRatelimit is the interval of TG_LOAD_RATELIMIT: the
	// NSEC_PER_MSEC that update_tg_load_avg() compares with (1528c661c24b
	// hard-codes it; tg_load_avg_ratelimit_ns is the model's name).
	TgLoadAvgRatelimit int64
	// Schedstats is the sched_schedstats static key (kernel.sched_schedstats).
	Schedstats bool
	// UclampUtilMin / UclampUtilMax are sysctl_sched_uclamp_util_min and
	// _max (kernel.sched_util_clamp_min / _max): the system default
	// clamps that restrict every task's (uclamp_eff_get()).
	UclampUtilMin, UclampUtilMax uint32
}

// SCHED_TUNABLESCALING_* (sched.h).
const (
	tunableScalingNone   = 0
	tunableScalingLog    = 1
	tunableScalingLinear = 2
)

// sysctlFactor is fair.c: get_update_sysctl_factor().
func sysctlFactor(ncpus int, scaling uint64) uint64 {
	cpus := uint64(min(max(ncpus, 1), 8))
	switch scaling {
	case tunableScalingNone:
		return 1
	case tunableScalingLinear:
		return cpus
	default: // SCHED_TUNABLESCALING_LOG
		return uint64(1 + bits.Len64(cpus) - 1)
	}
}

// NewTunables computes the knobs for ncpus CPUs, the given HZ and the
// settings: update_sysctl()'s scaled defaults under the tunable_scaling
// in force (set as if before boot: in the kernel a write of it takes
// effect at the next update_sysctl(), on a CPU going on- or offline), then
// each knob set, as its debugfs file or sysctl writes it.
func NewTunables(ncpus, hz int, set SchedSettings) Tunables {
	scaling := uint64(tunableScalingLog)
	if v, ok := set.get(knobTunableScaling); ok {
		scaling = v
	}
	f := sysctlFactor(ncpus, scaling)
	t := Tunables{
		Scaling: scaling,
		Factor:  f,
		// normalized_sysctl_sched_* (fair.c) times the factor.
		Latency:            6_000_000 * f,
		MinGranularity:     750_000 * f,
		WakeupGranularity:  1_000_000 * f,
		BaseSlice:          750_000 * f,
		NrLatency:          8,
		MigrationCost:      500_000,
		NrMigrate:          32, // SCHED_NR_MIGRATE_BREAK (not PREEMPT_RT)
		TickNsec:           int64(nsecPerSec / hz),
		TgLoadAvgRatelimit: nsecPerMsec,
		Schedstats:         true,
		UclampUtilMin:      contention.SchedCapacityScale,
		UclampUtilMax:      contention.SchedCapacityScale,
	}
	for k := range numKnobs {
		if v, ok := set.get(k); ok {
			knobs[k].set(&t, v)
		}
	}
	return t
}

// knob is a tunable -sched sets by name.
type knob struct {
	name, kvar, doc string
	min, max        uint64
	only            knobKernel
	set             func(*Tunables, uint64)
	get             func(*Tunables) uint64
}

// knobKernel says which kernels have a knob.
type knobKernel uint8

const (
	anyKernel   knobKernel = iota
	eevdfKernel            // EEVDF on: v6.6 and later
	cfsKernel              // EEVDF off: v6.5 and before
)

// The knobs, in canonical order.
const (
	knobBaseSlice = iota
	knobLatency
	knobMinGranularity
	knobWakeupGranularity
	knobTunableScaling
	knobMigrationCost
	knobNrMigrate
	knobTgLoadAvgRatelimit
	knobSchedstats
	knobUclampMin
	knobUclampMax
	numKnobs
)

// The bounds of the granularities are those of the sysctl table before
// the knobs moved to debugfs (kernel/sysctl.c v5.12:
// min_sched_granularity_ns 100 us, max_sched_granularity_ns and
// max_wakeup_granularity_ns NSEC_PER_SEC, min_wakeup_granularity_ns 0);
// debugfs itself takes any u32, which bounds the others.
const (
	minGranNS = 100_000
	maxGranNS = nsecPerSec
	maxU32    = 1<<32 - 1
)

var knobs = [numKnobs]knob{
	knobBaseSlice: {"base_slice_ns", "sysctl_sched_base_slice", "EEVDF's request size r_i, the slice a task asks for (debugfs, v6.6+)",
		minGranNS, maxGranNS, eevdfKernel,
		func(t *Tunables, v uint64) { t.BaseSlice = v }, func(t *Tunables) uint64 { return t.BaseSlice }},
	knobLatency: {"latency_ns", "sysctl_sched_latency", "CFS's targeted preemption latency: the period of sched_slice() and the sleeper credit of place_entity() (debugfs, v5.13-v6.5)",
		minGranNS, maxGranNS, cfsKernel,
		func(t *Tunables, v uint64) { t.Latency = v }, func(t *Tunables) uint64 { return t.Latency }},
	knobMinGranularity: {"min_granularity_ns", "sysctl_sched_min_granularity", "CFS's minimal preemption granularity (debugfs, v5.13-v6.5; sched_nr_latency stays 8)",
		minGranNS, maxGranNS, cfsKernel,
		func(t *Tunables, v uint64) { t.MinGranularity = v }, func(t *Tunables) uint64 { return t.MinGranularity }},
	knobWakeupGranularity: {"wakeup_granularity_ns", "sysctl_sched_wakeup_granularity", "CFS's wakeup preemption granularity, wakeup_gran() (debugfs, v5.13-v6.5)",
		0, maxGranNS, cfsKernel,
		func(t *Tunables, v uint64) { t.WakeupGranularity = v }, func(t *Tunables) uint64 { return t.WakeupGranularity }},
	knobTunableScaling: {"tunable_scaling", "sysctl_sched_tunable_scaling", "how update_sysctl() scales the defaults of the four above with the CPU count: 0 none, 1 log (1 + ilog2(min(ncpus, 8))), 2 linear (min(ncpus, 8)); as set at boot",
		tunableScalingNone, tunableScalingLinear, anyKernel,
		func(t *Tunables, v uint64) { t.Scaling = v }, func(t *Tunables) uint64 { return t.Scaling }},
	knobMigrationCost: {"migration_cost_ns", "sysctl_sched_migration_cost", "task_hot()'s cache-hot window, and the cap of rq->avg_idle (2x) that newidle balancing compares",
		0, maxU32, anyKernel,
		func(t *Tunables, v uint64) { t.MigrationCost = int64(v) }, func(t *Tunables) uint64 { return uint64(t.MigrationCost) }},
	knobNrMigrate: {"nr_migrate", "sysctl_sched_nr_migrate", "the most tasks one load_balance() pass looks at (env.loop_max)",
		0, maxU32, anyKernel,
		func(t *Tunables, v uint64) { t.NrMigrate = int(v) }, func(t *Tunables) uint64 { return uint64(t.NrMigrate) }},
	knobTgLoadAvgRatelimit: {"tg_load_avg_ratelimit_ns", "NSEC_PER_MSEC in update_tg_load_avg()", "the model's name for TG_LOAD_RATELIMIT's interval (1528c661c24b hard-codes 1 ms): a cfs_rq writes tg->load_avg at most once per interval; read only with TG_LOAD_RATELIMIT on",
		0, maxGranNS, anyKernel,
		func(t *Tunables, v uint64) { t.TgLoadAvgRatelimit = int64(v) }, func(t *Tunables) uint64 { return uint64(t.TgLoadAvgRatelimit) }},
	knobSchedstats: {"sched_schedstats", "sched_schedstats (static key)", "kernel.sched_schedstats: 0 leaves the schedstat_inc() counters of /proc/schedstat at 0 (its sched_info fields still count) and drops the schedstat block of /proc/<pid>/sched; their cost is not modeled either way (the model's default is 1; the kernel's is 0 unless booted with schedstats=enable)",
		0, 1, anyKernel,
		func(t *Tunables, v uint64) { t.Schedstats = v != 0 }, func(t *Tunables) uint64 { return b2u(t.Schedstats) }},
	knobUclampMin: {"sched_util_clamp_min", "sysctl_sched_uclamp_util_min", "kernel.sched_util_clamp_min: the most any task's util_min may be (uclamp_eff_get()); a value other than 1024 turns sched_uclamp_used on (sysctl_sched_uclamp_handler())",
		0, 1024, anyKernel,
		func(t *Tunables, v uint64) { t.UclampUtilMin = uint32(v) }, func(t *Tunables) uint64 { return uint64(t.UclampUtilMin) }},
	knobUclampMax: {"sched_util_clamp_max", "sysctl_sched_uclamp_util_max", "kernel.sched_util_clamp_max: the most any task's util_max may be; a value other than 1024 turns sched_uclamp_used on",
		0, 1024, anyKernel,
		func(t *Tunables, v uint64) { t.UclampUtilMax = uint32(v) }, func(t *Tunables) uint64 { return uint64(t.UclampUtilMax) }},
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Knob describes a tunable for listings (emu features).
type Knob struct {
	Name     string // as -sched spells it: the debugfs file or the sysctl's name
	Var      string // the kernel variable
	Doc      string
	Min, Max uint64
	EEVDF    bool // only in EEVDF kernels
	CFS      bool // only in CFS kernels
}

// Knobs lists the tunables in canonical order.
func Knobs() []Knob {
	out := make([]Knob, numKnobs)
	for i, k := range knobs {
		out[i] = Knob{Name: k.name, Var: k.kvar, Doc: k.doc, Min: k.min, Max: k.max,
			EEVDF: k.only == eevdfKernel, CFS: k.only == cfsKernel}
	}
	return out
}

// KnobNames lists the tunables' names.
func KnobNames() []string {
	out := make([]string, numKnobs)
	for i, k := range knobs {
		out[i] = k.name
	}
	return out
}

// has reports whether a kernel with feature set f has knob k.
func (k *knob) has(f Features) bool {
	switch k.only {
	case eevdfKernel:
		return f.Has(EEVDF)
	case cfsKernel:
		return !f.Has(EEVDF)
	}
	return true
}

// knobByName finds a knob; the sysctls also answer to "kernel.NAME".
func knobByName(name string) (int, bool) {
	name = strings.TrimPrefix(name, "kernel.")
	for i, k := range knobs {
		if k.name == name {
			return i, true
		}
	}
	return 0, false
}

// Values are the knobs a kernel with feature set f has and their values
// in force, by name (for -json and the NDJSON records).
func (t Tunables) Values(f Features) map[string]uint64 {
	out := map[string]uint64{}
	for _, k := range knobs {
		if k.has(f) {
			out[k.name] = k.get(&t)
		}
	}
	return out
}

// Value is one knob's value in force, by name.
func (t Tunables) Value(name string) (uint64, bool) {
	i, ok := knobByName(name)
	if !ok {
		return 0, false
	}
	return knobs[i].get(&t), true
}

// SchedSettings are the tunables set by name (-sched NAME=VALUE), applied
// over the defaults. The zero value sets none.
type SchedSettings struct {
	mask uint32
	val  [numKnobs]uint64
}

func (s SchedSettings) get(k int) (uint64, bool) { return s.val[k], s.mask&(1<<k) != 0 }

// Empty reports whether nothing is set.
func (s SchedSettings) Empty() bool { return s.mask == 0 }

// Merge returns s with every knob o sets set to o's value.
func (s SchedSettings) Merge(o SchedSettings) SchedSettings {
	for k := range numKnobs {
		if v, ok := o.get(k); ok {
			s.mask |= 1 << k
			s.val[k] = v
		}
	}
	return s
}

// String is the canonical "NAME=VALUE,..." in knob order.
func (s SchedSettings) String() string {
	var parts []string
	for k := range numKnobs {
		if v, ok := s.get(k); ok {
			parts = append(parts, knobs[k].name+"="+strconv.FormatUint(v, 10))
		}
	}
	return strings.Join(parts, ",")
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// SchedError is a bad -sched setting.
type SchedError struct{ Msg string }

// Error is the message alone: the caller names the flag it came from.
func (e *SchedError) Error() string { return e.Msg }

func schedErrorf(format string, a ...any) error { return &SchedError{fmt.Sprintf(format, a...)} }

// ParseSched reads "NAME=VALUE[,NAME=VALUE...]": a knob's name (Knobs)
// and a decimal value in its range, as its debugfs file (kstrtouint())
// or sysctl reads it. A knob given twice keeps the last value.
func ParseSched(list string) (SchedSettings, error) {
	var s SchedSettings
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		name, val, ok := strings.Cut(item, "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !ok || name == "" {
			return s, schedErrorf("%q is not NAME=VALUE (allowed names: %s)", item, strings.Join(KnobNames(), ", "))
		}
		k, ok := knobByName(name)
		if !ok {
			return s, schedErrorf("unknown tunable %q (allowed: %s)", name, strings.Join(KnobNames(), ", "))
		}
		kb := &knobs[k]
		v, err := strconv.ParseUint(val, 10, 64)
		if err != nil && !isDigits(val) {
			return s, schedErrorf("%s=%s: not a decimal integer (allowed: %d to %d)", kb.name, val, kb.min, kb.max)
		}
		if err != nil || v < kb.min || v > kb.max {
			return s, schedErrorf("%s=%s: out of range (allowed: %d to %d)", kb.name, val, kb.min, kb.max)
		}
		s.mask |= 1 << k
		s.val[k] = v
	}
	return s, nil
}

// Check reports a setting the kernel of feature set f cannot take: a
// knob it does not have (the CFS granularities in an EEVDF kernel,
// base_slice_ns in a CFS one), or uclamp sysctls with min above max
// (sysctl_sched_uclamp_handler() refuses them with -EINVAL).
func (s SchedSettings) Check(f Features) error {
	for k := range numKnobs {
		if _, ok := s.get(k); ok && !knobs[k].has(f) {
			kind, have := "an EEVDF", "CFS"
			if knobs[k].only == cfsKernel {
				kind, have = "a CFS", "EEVDF"
			}
			var names []string
			for _, kb := range knobs {
				if kb.has(f) {
					names = append(names, kb.name)
				}
			}
			return schedErrorf("%s is %s kernel's knob, and this feature set's kernel is %s (its knobs: %s)", knobs[k].name, kind, have, strings.Join(names, ", "))
		}
	}
	lo, hi := uint64(contention.SchedCapacityScale), uint64(contention.SchedCapacityScale)
	if v, ok := s.get(knobUclampMin); ok {
		lo = v
	}
	if v, ok := s.get(knobUclampMax); ok {
		hi = v
	}
	if lo > hi {
		return schedErrorf("sched_util_clamp_min=%d is above sched_util_clamp_max=%d (allowed: min <= max, as sysctl_sched_uclamp_handler() requires; both default to 1024, so lowering the max needs the min lowered too)", lo, hi)
	}
	return nil
}

// ParseKernel reads a feature set that may carry tunables:
// "PROFILE[,+X,-X...][;sched:NAME=VALUE[,NAME=VALUE...]]...": extra (the
// -sched flags' NAME=VALUE lists, common to every feature set of a
// command) first, then the set's own ;sched: parts in order, the last
// value of a knob winning. It returns the features, the settings, checked
// against the features, and the canonical spec: the feature part as
// ParseFeatures returns it, then ";sched:" and the settings in knob order
// when any is set.
func ParseKernel(spec string, extra ...string) (Features, SchedSettings, string, error) {
	var s SchedSettings
	feat, rest, found := strings.Cut(spec, ";")
	f, fspec, err := ParseFeatures(feat)
	if err != nil {
		return 0, s, "", err
	}
	lists := append([]string(nil), extra...)
	if found {
		for _, seg := range strings.Split(rest, ";") {
			body, ok := strings.CutPrefix(strings.TrimSpace(seg), "sched:")
			if !ok {
				return 0, s, "", schedErrorf("%q after ';' is not sched:NAME=VALUE[,NAME=VALUE...] (allowed names: %s)", seg, strings.Join(KnobNames(), ", "))
			}
			lists = append(lists, body)
		}
	}
	for _, l := range lists {
		p, err := ParseSched(l)
		if err != nil {
			return 0, s, "", err
		}
		s = s.Merge(p)
	}
	if err := s.Check(f); err != nil {
		return 0, s, "", err
	}
	if !s.Empty() {
		fspec += ";sched:" + s.String()
	}
	return f, s, fspec, nil
}
