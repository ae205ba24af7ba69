package emu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// TestDomainsGolden pins CPU 0's sched domains on every preset as the
// kernel builds them (kernel-mechanisms.md 12): SPR SMT -> MC(112) ->
// NUMA; EPYC SMT -> MC(16) -> PKG(192) -> NUMA without SD_WAKE_AFFINE
// (SLIT 32 > RECLAIM_DISTANCE); HiKey MC(4) -> PKG(8); Cascade Lake-AP
// SMT -> MC(48) -> NUMA(192), no PKG (NUMA inside the package).
func TestDomainsGolden(t *testing.T) {
	var b strings.Builder
	for _, name := range hwmodel.PresetNames() {
		if name == hwmodel.HostPreset {
			continue
		}
		s := newSim(t, name, "v6.6-eevdf")
		fmt.Fprintf(&b, "%s: sd_llc_size %d, %d LLCs\n", name, s.llc[0].size, len(s.m.LLCs))
		for _, d := range s.Domains(0) {
			var flags []string
			for i, f := range []string{"BALANCE_NEWIDLE", "BALANCE_EXEC", "BALANCE_FORK", "BALANCE_WAKE", "WAKE_AFFINE",
				"ASYM_CPUCAPACITY", "SHARE_CPUCAPACITY", "CLUSTER", "SHARE_LLC", "SERIALIZE", "ASYM_PACKING",
				"PREFER_SIBLING", "OVERLAP", "NUMA"} {
				if d.Flags&(1<<i) != 0 {
					flags = append(flags, f)
				}
			}
			fmt.Fprintf(&b, "  domain%d %-4s span %-24s groups %3d  imbalance_pct %d cache_nice_tries %d interval %d-%d ms imb_numa_nr %d\n    %s\n",
				d.Level, d.Name, hwmodel.FormatCPUList(d.Span), len(d.Groups), d.ImbalancePct, d.CacheNiceTries,
				d.MinInterval, d.MaxInterval, d.imbNumaNr, strings.Join(flags, " "))
		}
	}
	golden(t, "domains.golden", []byte(b.String()))
}

// TestCheckAllPresets runs the mixed workload with the invariant checks
// on every preset (the driver test covers four of them three times).
func TestCheckAllPresets(t *testing.T) {
	dur := 2 * ms
	if raceEnabled {
		dur = ms / 2
	}
	for _, name := range []string{"spr-1s", "icl-2s", "xeon-e5-2x10"} {
		s := newSim(t, name, "v6.7-eevdf")
		mixedWorkload(t, s)
		s.Run(dur)
	}
	for _, prof := range []string{"v5.15-cfs", "v6.5-cfs", "v5.15-cfs,+PLACE_MIGRATE"} {
		s := newSim(t, "epyc-9654-2s", prof)
		mixedWorkload(t, s)
		s.Run(dur)
	}
}
