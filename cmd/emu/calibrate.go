package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

const calibrateUsage = `usage: emu calibrate [-o FILE] [-calib FILE] [-quick] [-json]

Measures this host with physical probes, each thread pinned to a host CPU:
a CAS ping-pong per distance class present among the allowed CPUs (one-way
= RTT/2), an atomic-add hammer with 1 and 2 writers on one cache line and
on padded lines, and a 1-byte pipe round trip through the real kernel on
two CPUs and on one. Prints each figure next to what the host preset
predicts, and what it predicts once this run's measurements are applied.
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
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("calibrate: unexpected argument %q", fs.Arg(0))
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
		opt = contention.CalibrateOptions{PingPongRounds: 20000, HammerDur: 100 * time.Millisecond, PipeRounds: 500}
	}
	rep, err := contention.Calibrate(m, opt)
	if err != nil {
		return err
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
	if *out != "" {
		if err := writeFile(*out, rep.Calib.Write); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		fmt.Fprintf(stderr, "emu: wrote %s\n", *out)
	}
	return nil
}
