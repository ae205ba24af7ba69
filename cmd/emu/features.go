package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/emu"
)

const featuresUsage = `usage: emu features [PROFILE[,+X,-X...]]

Lists the scheduler switches rqemu models, with the kernel's names and a
one-line description each, and the named kernel profiles that bundle them.
With an argument, prints that feature set as /sys/kernel/debug/sched/features
would (NO_ marks a feature that is off).

examples:
  emu features
  emu features v6.6-eevdf,+TG_LOAD_RATELIMIT,-RUN_TO_PARITY`

func runFeatures(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("features", featuresUsage, stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("features: at most one feature set, got %d arguments", fs.NArg())
	}
	if fs.NArg() == 1 {
		set, spec, err := emu.ParseFeatures(fs.Arg(0))
		if err != nil {
			return usagef("features: %v", err)
		}
		fmt.Fprintf(stdout, "%s:\n%s\n", spec, set)
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
	_, err := io.WriteString(stdout, b.String())
	return err
}
