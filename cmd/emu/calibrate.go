package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/study"
	"github.com/rqemu/rqemu/weave"
)

const calibrateUsage = `usage: emu calibrate [-o FILE] [-calib FILE] [-quick] [-repeats N] [-max-spread F] [-json]

Measures this host with physical probes, each thread pinned to a host CPU:
a CAS ping-pong per distance class present among the allowed CPUs (one-way
= RTT/2), an atomic-add hammer with 1 and 2 writers on one cache line and
on padded lines, and a 1-byte pipe round trip through the real kernel on
two CPUs and on one, a page fault, and a forked child's copy-on-write
fault (which prices the tools' children's faults), the same fault while
the mm runs on the other CPU (the TLB shootdown's IPI, a check), and the
child's exit and reap; where perf and strace are installed, a perf child's
exit path (strace -f of perf bench sched pipe -l 1), which the emulated
perf bench sched messaging children run before they exit. The set runs -repeats times; each
figure is the median of its samples with their spread (IQR/median). Prints
each figure next to what the host preset predicts, and what it predicts
once this run's measurements are applied, then fits pipe_cross_scale so
the engine's own two-CPU pipe reproduces the measured one. When a spread exceeds
-max-spread (other work on the host), it says which, writes no -o and
exits with status 1.
-o writes them as a calibration file that -calib FILE applies to the host
preset (emu topo -calib FILE host, and later emu run -topo host).

examples:
  emu calibrate
  emu calibrate -o host.calib.yaml
  emu topo -calib host.calib.yaml host`

func runCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("calibrate", calibrateUsage, stderr)
	out := fs.String("o", "", "write the calibration file here")
	calib := fs.String("calib", "", "start from the host preset with this calibration applied")
	quick := fs.Bool("quick", false, "fewer rounds (about 3 s; noisier)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	repeats := fs.Int("repeats", 3, "how many times the set of probes runs")
	maxSpread := fs.Float64("max-spread", contention.DefaultMaxSpread, "refuse to fit when a probe's IQR/median exceeds this")
	settle := fs.Duration("settle", contention.DefaultSettle, "first wait, at most this long, until other processes use under 10% of the CPUs (0: do not wait)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
	}
	if *repeats < 1 || *repeats > 100 {
		return usagef("-repeats: must be from 1 to 100, got %d", *repeats)
	}
	if *settle < 0 || *settle > time.Hour {
		return usagef("-settle: must be from 0 to 1h, got %v", *settle)
	}
	if !(*maxSpread > 0 && *maxSpread <= 1e6) {
		return usagef("-max-spread: must be a number above 0 (an IQR/median; at most 1e6), got %v", *maxSpread)
	}
	// -o is checked before the seconds of measuring.
	if err := checkOutputs([][2]string{{"-o", *out}}); err != nil {
		return err
	}
	m, err := hwmodel.Load(hwmodel.HostPreset, hwmodel.LoadOptions{Calib: *calib, Hammer: weave.PredictHammer})
	if err != nil {
		return err
	}
	opt := contention.CalibrateOptions{}
	if *quick {
		opt = contention.QuickCalibrate
	}
	opt.Repeats, opt.MaxSpread, opt.Settle = *repeats, *maxSpread, *settle
	rep, noisy := contention.Calibrate(m, opt)
	var ne *contention.NoisyError
	if noisy != nil && !errors.As(noisy, &ne) {
		return noisy
	}
	if noisy == nil {
		// The perf children's exit path, where perf and strace are
		// installed (host-pipe's messaging children run it).
		if rb, err := study.PerfExitPath(""); err != nil {
			rep.Notes = append(rep.Notes, "a perf child's exit path not measured: "+err.Error())
		} else {
			rep.Rows = append(rep.Rows, contention.CalibRow{Probe: "perf child's exit path (strace, pipe -l 1)", CPUs: "-", Unit: "us",
				Measured: rb.Median, Spread: rb.Spread, Samples: rb.N, After: rb.Median})
			noisy = contention.CheckSpread([]string{"a perf child's exit path"}, []contention.Robust{rb}, *maxSpread, rep.OtherLoad)
			rep.Calib.ExitPathUS = map[string]float64{"perf": math.Round(100*rb.Median) / 100}
		}
	}
	if noisy == nil && rep.Calib.PipeRTTUS > 0 {
		rtt, err := study.FitPipeCross(rep.Calib)
		if err != nil {
			return err
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("the engine's own two-CPU pipe round trip: %.2f us with pipe_cross_scale %.3f (fitted to the measured %.2f us)",
			rtt, rep.Calib.PipeCrossScale, rep.Calib.PipeRTTUS))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := rep.Write(stdout); err != nil {
		return err
	}
	if noisy != nil {
		return noisy // the table is printed; no calibration is written
	}
	if *out != "" {
		if err := writeFile(*out, rep.Calib.Write); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		fmt.Fprintf(stderr, "emu: wrote %s\n", *out)
	}
	return nil
}
