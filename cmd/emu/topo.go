package main

import (
	"io"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

const topoUsage = `usage: emu topo [-json] [-spec] [-calib FILE] NAME|FILE

Prints a machine as lscpu/lstopo would: CPU, core, socket, L2, LLC and
NUMA counts, the package/LLC/core tree with Linux CPU numbers, the SLIT,
and the cache-line transfer latency of each distance class with its source.

NAME is a built-in preset (spr-2s, spr-1s, epyc-9654-2s, icl-2s,
clx-ap-2s, xeon-e5-2x10, hikey-8) or "host" (detected from sysfs and cpuid); FILE is
a spec file (YAML or JSON). -spec prints the preset's spec file instead, to
copy and edit.

examples:
  emu topo spr-2s
  emu topo -json epyc-9654-2s | jq '.llcs | length'
  emu topo -spec epyc-9654-2s > my-epyc.yaml   # edit numa_distance, then
  emu topo my-epyc.yaml
  emu topo -calib host.calib.yaml host`

func runTopo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("topo", topoUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	spec := fs.Bool("spec", false, "print the machine's spec file (YAML) instead")
	calib := fs.String("calib", "", "apply this calibration file (host only)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("topo: need exactly one NAME or FILE, got %d arguments", fs.NArg())
	}
	m, err := hwmodel.Load(fs.Arg(0), hwmodel.LoadOptions{Calib: *calib, Hammer: weave.PredictHammer})
	if err != nil {
		return err
	}
	switch {
	case *spec:
		if data, err := hwmodel.PresetSpec(fs.Arg(0)); err == nil && *calib == "" {
			_, err = stdout.Write(data)
			return err
		}
		return m.Spec.Encode(stdout)
	case *asJSON:
		return m.WriteTopoJSON(stdout)
	}
	return m.WriteTopo(stdout)
}
