package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rqemu/rqemu/study"
)

const fitUsage = `usage: emu fit -family spr|icl|epyc [flags]

Fits a preset family's constants (study/fitsets.go: spr-2s and spr-1s, icl-2s,
epyc-9654-2s) to its calibration rows (every lkp-base, tgload-udprr,
tgload-hackbench and tgload-profile row on the family's machines): each
candidate edits the presets in memory and runs every row; the objective is
the mean over the rows' (row, metric) pairs of ln(emulated/published)^2.
A deterministic coordinate descent over the constants' grids, from the
presets' values, prints one line per evaluation, then the best set's pairs
and the spec lines to paste ([C] sources naming this command).

examples:
  emu fit -family epyc -rounds 1            # one row, smt_yield only: 7 candidates, minutes
  emu fit -j 2 -family spr                  # the spr fit at -scale quick: about 20 minutes on 2 cores
  emu fit -family icl -vary latency_ns.smt_yield=0.5,0.6,0.7 -rounds 1
  emu fit -j 2 -family spr -check           # exit 1 if a [C] constant is not the fit's result`

// varyFlags collects repeated -vary flags.
type varyFlags []string

func (v *varyFlags) String() string     { return strings.Join(*v, " ") }
func (v *varyFlags) Set(s string) error { *v = append(*v, s); return nil }

func runFit(args []string, stdout, stderr io.Writer) error {
	var family, scale, driver string
	var vary varyFlags
	var check, progress bool
	f := &study.Fit{Out: stdout}
	fs := newFlags("fit", fitUsage, stderr)
	fs.StringVar(&family, "family", "", "the preset family: "+strings.Join(study.FamilyNames(), ", ")+" (required)")
	fs.StringVar(&scale, "scale", "quick", "the rows' length: quick or default (reproduce's scales)")
	fs.IntVar(&f.Jobs, "j", 1, "runs executed at once, as reproduce -j (same bytes)")
	fs.Var(&vary, "vary", "NAME=lo:hi:step or NAME=v1,v2,...: vary this constant (a spec path, or tied paths joined with +) instead of the family's set; repeatable")
	fs.IntVar(&f.Rounds, "rounds", 4, "at most this many rounds of the descent")
	fs.BoolVar(&check, "check", false, "exit 1 naming every [C] constant of the family's presets whose value is not the fit's result")
	fs.Uint64Var(&f.Seed, "seed", 1, "the runs' seed")
	fs.StringVar(&driver, "driver", "parallel", "engine driver: parallel or serial (same bytes)")
	fs.BoolVar(&progress, "progress", true, "print each evaluation's host time on stderr")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("fit: takes no arguments, got %q (the family is -family)", fs.Args())
	}
	if f.Family = study.LookupFamily(family); f.Family == nil {
		return usagef("-family: %q is not a family (allowed: %s)", family, strings.Join(study.FamilyNames(), ", "))
	}
	switch scale {
	case "quick", "default":
		f.Quick = scale == "quick"
	default:
		return usagef("-scale: %q is not a scale (allowed: quick, default)", scale)
	}
	if err := checkDriver(driver); err != nil {
		return err
	}
	f.Driver = driver
	if f.Jobs < 1 || f.Jobs > 256 {
		return usagef("-j: runs at once must be in [1, 256], got %d", f.Jobs)
	}
	if f.Rounds < 1 || f.Rounds > 100 {
		return usagef("-rounds: must be in [1, 100], got %d", f.Rounds)
	}
	f.Consts = f.Family.Consts
	if len(vary) > 0 {
		f.Consts = nil
		for _, s := range vary {
			c, err := study.ParseVary(s, f.Family)
			if err != nil {
				return usagef("-vary: %v", err)
			}
			for _, o := range f.Consts {
				for _, p := range c.Paths {
					if strings.Contains("+"+o.Name()+"+", "+"+p+"+") {
						return usagef("-vary: %s is varied twice", p)
					}
				}
			}
			f.Consts = append(f.Consts, c)
		}
	}
	if progress {
		f.Progress = stderr
	}
	if check {
		names, _, err := f.Fitted()
		if err != nil {
			return err
		}
		if len(names) == 0 {
			fmt.Fprintf(stdout, "check: %s have no [C] constant: nothing to check, the fit is not run\n", strings.Join(f.Family.Presets, ", "))
			return nil
		}
	}
	stop, unlisten := interrupts()
	defer unlisten()
	f.Stop = stop
	res, err := f.Run()
	if errors.Is(err, study.ErrInterrupted) {
		return errInterrupted
	}
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	if !check {
		return nil
	}
	bad, err := f.Check(res)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("fit -check: %d [C] constant(s) of %s are not the fit's result:\n  %s", len(bad), strings.Join(f.Family.Presets, ", "), strings.Join(bad, "\n  "))
	}
	fmt.Fprintf(stdout, "check: every [C] constant of %s is the fit's result\n", strings.Join(f.Family.Presets, ", "))
	return nil
}

var _ flag.Value = (*varyFlags)(nil)
