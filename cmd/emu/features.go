package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/emu"
)

const featuresUsage = `usage: emu features [PROFILE[,+X,-X...][;sched:NAME=VALUE,...]]

Lists the scheduler switches rqemu models, with the kernel's names and a
one-line description each, the named kernel profiles that bundle them, and
the tunables (-sched NAME=VALUE) with their defaults per profile. With an
argument, prints that feature set as /sys/kernel/debug/sched/features
would (NO_ marks a feature that is off), then its tunables as set on a
machine of 8 or more CPUs.

examples:
  emu features
  emu features v6.6-eevdf,+TG_LOAD_RATELIMIT,-RUN_TO_PARITY
  emu features 'v6.6-eevdf;sched:base_slice_ns=2800000'`

func runFeatures(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("features", featuresUsage, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("features: at most one feature set, got %d arguments", fs.NArg())
	}
	if fs.NArg() == 1 {
		set, sched, spec, err := emu.ParseKernel(fs.Arg(0))
		if err != nil {
			return usagef("features: %v", err)
		}
		fmt.Fprintf(stdout, "%s:\n%s\n", spec, set)
		t := emu.NewTunables(8, 1000, sched)
		var kv []string
		for _, k := range emu.Knobs() {
			if v, ok := t.Values(set)[k.Name]; ok {
				kv = append(kv, fmt.Sprintf("%s=%d", k.Name, v))
			}
		}
		fmt.Fprintf(stdout, "sched (8+ CPUs): %s\n", strings.Join(kv, " "))
		return nil
	}
	var b strings.Builder
	fmt.Fprintln(&b, "features:")
	for _, f := range emu.AllFeatures() {
		fmt.Fprintf(&b, "  %-24s %s\n", f, f.Doc())
	}
	fmt.Fprintln(&b, "\nprofiles (-features NAME[,+X][,-X]...):")
	for _, p := range emu.Profiles {
		var on []string
		for _, f := range emu.AllFeatures() {
			if p.Set.Has(f) {
				on = append(on, f.String())
			}
		}
		fmt.Fprintf(&b, "  %-12s %s\n  %-12s on: %s\n", p.Name, p.Doc, "", strings.Join(on, " "))
	}
	fmt.Fprintf(&b, "\ndefault: %s\n", emu.DefaultProfile)
	writeKnobs(&b)
	_, err := io.WriteString(stdout, b.String())
	return err
}

// writeKnobs lists the tunables: each one's default per profile on a
// machine of 8 or more CPUs ("-" where the profile's kernel has no such
// knob), then its range, kernel variable and description.
func writeKnobs(b *strings.Builder) {
	fmt.Fprintln(b, "\ntunables (-sched NAME=VALUE, repeatable, or PROFILE;sched:NAME=VALUE,... in a feature set):")
	fmt.Fprintf(b, "  defaults on 8 or more CPUs (the scaled ones, under tunable_scaling 1, are 1 + ilog2(min(ncpus, 8)) times\n  the normalized value: 1x on 1 CPU, 2x on 2-3, 3x on 4-7); \"-\": not a knob of that kernel\n")
	fmt.Fprintf(b, "  %-25s", "")
	for _, p := range emu.Profiles {
		fmt.Fprintf(b, " %12s", p.Name)
	}
	fmt.Fprintln(b)
	for _, k := range emu.Knobs() {
		fmt.Fprintf(b, "  %-25s", k.Name)
		for _, p := range emu.Profiles {
			v, ok := emu.NewTunables(8, 1000, emu.SchedSettings{}).Values(p.Set)[k.Name]
			if ok {
				fmt.Fprintf(b, " %12d", v)
			} else {
				fmt.Fprintf(b, " %12s", "-")
			}
		}
		fmt.Fprintln(b)
	}
	fmt.Fprintln(b)
	for _, k := range emu.Knobs() {
		fmt.Fprintf(b, "  %-25s %d..%d, %s: %s\n", k.Name, k.Min, k.Max, k.Var, k.Doc)
	}
}
