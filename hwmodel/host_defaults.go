package hwmodel

import (
	"bytes"
	"fmt"
)

// Latencies and kernel-op costs cannot be read from sysfs or CPUID, so the
// host takes them from the built-in preset closest to it, tagged [E] with
// where each number came from, until `emu calibrate` measures them.

// hostPresetFor names the preset whose latencies and costs stand in for a
// host's: the same vendor's server part where there is one.
func hostPresetFor(vendor, arch string) string {
	switch {
	case vendor == "amd":
		return "epyc-9654-2s"
	case vendor == "intel":
		return "spr-2s"
	case vendor == "arm" || arch == "arm64":
		return "hikey-8"
	}
	return "spr-2s"
}

// hostDefaults fills s's hz, latency_ns and costs_cycles from the closest
// preset. m is the host's topology (buildTopology done), which decides the
// latencies kept: one per distance class the host has, home_remote only
// with several packages, mem_remote only with several nodes. A class the
// preset lacks is estimated from its neighbours, and the source says how.
func hostDefaults(s *Spec, m *Machine) error {
	name := hostPresetFor(s.Vendor, s.Arch)
	data, err := PresetSpec(name)
	if err != nil {
		return err
	}
	p, err := DecodeSpec(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("preset %s: %w", name, err)
	}
	from := func(v *Sourced) *Sourced {
		return &Sourced{Value: v.Value, Source: fmt.Sprintf(
			"[E] default for %s from the %s preset: %s; run emu calibrate to measure this host", s.Vendor, name, v.Source)}
	}
	estimate := func(v float64, why string) *Sourced {
		return &Sourced{Value: roundTenth(v), Source: fmt.Sprintf(
			"[E] estimate for %s: %s; run emu calibrate to measure this host", s.Vendor, why)}
	}

	// The preset's tick rate, until HostSpec puts the running kernel's
	// CONFIG_HZ in its place (kernelhz.go: /proc/config.gz or
	// /boot/config-RELEASE, where either says).
	s.HZ = p.HZ

	present := m.ClassesPresent()
	var lat LatencySpec
	for c := ClassSMT; c < NumClasses; c++ {
		if !present[c] {
			continue
		}
		if v := *latField(&p.Latency, c); v != nil {
			*latField(&lat, c) = from(v)
			continue
		}
		*latField(&lat, c) = estimateClass(c, &p.Latency, name, estimate)
	}
	if len(m.Packages) > 1 {
		if p.Latency.HomeRemote != nil {
			lat.HomeRemote = from(p.Latency.HomeRemote)
		} else {
			// A line homed on the other socket costs about one more
			// crossing than one homed locally (hardware.md C2): the
			// spr-2s and epyc-9654-2s presets take remote minus the
			// slowest in-package transfer.
			inner, innerName := 0.0, ""
			for c := ClassLLC; c >= ClassSMT && inner == 0; c-- {
				if v := *latField(&lat, c); v != nil {
					inner, innerName = v.Value, c.String()
				}
			}
			if lat.Socket != nil {
				inner, innerName = lat.Socket.Value, "socket"
			}
			v, why := lat.Remote.Value-inner, fmt.Sprintf("remote (%.1f ns) minus %s (%.1f ns): a line homed on the other socket costs one more crossing (hardware.md C2), the rule of the spr-2s and epyc-9654-2s presets; the %s preset has no home_remote", lat.Remote.Value, innerName, inner, name)
			if innerName == "" || v <= 0 {
				v, why = lat.Remote.Value/2, fmt.Sprintf("half the remote transfer (%.1f ns); the %s preset has no home_remote", lat.Remote.Value, name)
			}
			lat.HomeRemote = estimate(v, why)
		}
	}
	lat.MemLocal = from(p.Latency.MemLocal)
	if len(m.Nodes) > 1 {
		if p.Latency.MemRemote != nil {
			lat.MemRemote = from(p.Latency.MemRemote)
		} else {
			lat.MemRemote = estimate(p.Latency.MemLocal.Value*1.7, fmt.Sprintf(
				"1.7 x mem_local (%.0f ns): remote DRAM is 1.6-1.8x local in the spr-2s (190/110) and epyc-9654-2s (210/120) presets; the %s preset has no mem_remote",
				p.Latency.MemLocal.Value, name))
		}
	}
	lat.RMWLocal = from(p.Latency.RMWLocal)
	lat.Burst = from(p.Latency.Burst)
	if p.Latency.MLP != nil {
		lat.MLP = from(p.Latency.MLP)
	}
	if p.Latency.OOOWindow != nil {
		lat.OOOWindow = from(p.Latency.OOOWindow)
	}
	if p.Latency.StoreBuffer != nil {
		lat.StoreBuffer = from(p.Latency.StoreBuffer)
	}
	if p.Latency.SMTYield != nil {
		lat.SMTYield = from(p.Latency.SMTYield)
	}
	s.Latency = lat

	var costs CostSpec
	for op := KernelOp(0); op < NumKernelOps; op++ {
		v := *kernelOps[op].field(&p.Costs)
		if v == nil {
			if optionalOps[op] {
				continue
			}
			return fmt.Errorf("preset %s: costs_cycles.%s missing", name, op)
		}
		*kernelOps[op].field(&costs) = from(v)
	}
	s.Costs = costs
	return nil
}

// estimateClass prices a distance class the host has but the preset does
// not (an x86 host whose L2 is shared by several cores, as on E-core
// modules; an arm64 host with an L3 or several sockets).
func estimateClass(c Class, p *LatencySpec, preset string, estimate func(float64, string) *Sourced) *Sourced {
	if c == ClassSMT {
		return estimate(10, fmt.Sprintf(
			"SMT siblings exchange a line through their shared L1/L2, 5-10 ns on every SMT machine in hardware.md C1 (Ryzen 7950X 5.3, ICL-SP 8.0, Broadwell-EP 8.2, Genoa 10.3), the top taken; the %s preset has no smt", preset))
	}
	var lo, hi *Sourced
	var loC, hiC Class
	for d := c - 1; d >= ClassSMT && lo == nil; d-- {
		lo, loC = *latField(p, d), d
	}
	for d := c + 1; d < NumClasses && hi == nil; d++ {
		hi, hiC = *latField(p, d), d
	}
	switch {
	case lo != nil && hi != nil:
		return estimate((lo.Value+hi.Value)/2, fmt.Sprintf(
			"midway between the %s preset's %s (%.1f ns) and %s (%.1f ns) transfers, the classes either side of %s; it has no %s",
			preset, loC, lo.Value, hiC, hi.Value, c, c))
	case lo != nil:
		return estimate(2*lo.Value, fmt.Sprintf(
			"2 x the %s preset's %s transfer (%.1f ns): the slowest class costs about twice the next one on the 2-socket machines of hardware.md C1 (Genoa 191.6 vs 99.3, ICL-SP 107.8 vs 51.3); it has no %s",
			preset, loC, lo.Value, c))
	case hi != nil:
		return estimate(hi.Value/2, fmt.Sprintf("half the %s preset's %s transfer (%.1f ns); it has no %s", preset, hiC, hi.Value, c))
	}
	return estimate(50, fmt.Sprintf("a typical on-chip transfer (hardware.md C1: 16-55 ns within an LLC); the %s preset gives no transfer latency", preset))
}

func roundTenth(v float64) float64 {
	return float64(int64(v*10+0.5)) / 10
}
