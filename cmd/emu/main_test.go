package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

func runEmu(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestTopoPresets: `emu topo` prints the right counts for every preset.
func TestTopoPresets(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"spr-2s", []string{"CPU(s):              224", "LLC domain(s):       2 (112 CPUs each)", "Socket(s):           2"}},
		{"spr-1s", []string{"CPU(s):              112", "LLC domain(s):       1 (112 CPUs each)"}},
		{"epyc-9654-2s", []string{"CPU(s):              384", "LLC domain(s):       24 (16 CPUs each)", "NUMA node(s):        2"}},
		{"icl-2s", []string{"CPU(s):              128", "LLC domain(s):       2 (64 CPUs each)"}},
		{"clx-ap-2s", []string{"CPU(s):              192", "LLC domain(s):       4 (48 CPUs each)", "Socket(s):           2", "NUMA node(s):        4"}},
		{"xeon-e5-2x10", []string{"CPU(s):              40", "Thread(s) per core:  2"}},
		{"hikey-8", []string{"CPU(s):              8", "Cluster(s):          2", "LLC domain(s):       2 (4 CPUs each)"}},
		{"host", []string{"Machine:             host", "detected:"}},
	} {
		code, out, errs := runEmu("topo", tc.name)
		if code != 0 {
			t.Errorf("emu topo %s: exit %d: %s", tc.name, code, errs)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("emu topo %s: output lacks %q", tc.name, w)
			}
		}
	}
}

func TestTopoSpecRoundTrip(t *testing.T) {
	code, spec, errs := runEmu("topo", "-spec", "epyc-9654-2s")
	if code != 0 {
		t.Fatalf("emu topo -spec: %d %s", code, errs)
	}
	path := filepath.Join(t.TempDir(), "my-epyc.yaml")
	edited := strings.Replace(strings.Replace(spec, "[10, 32]", "[10, 21]", 1), "[32, 10]", "[21, 10]", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runEmu("topo", "-json", path)
	if code != 0 || !strings.Contains(out, `"cpus": 384`) || !strings.Contains(out, "21") {
		t.Errorf("emu topo -json FILE: %d %s", code, errs)
	}
}

// TestBadInput: each kind of bad input exits 2 with an error naming the
// field or flag.
func TestBadInput(t *testing.T) {
	good, err := hwmodel.PresetSpec("hikey-8")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := fileIn(t, dir)
	explicit := strings.Replace(string(good), `layout:
  sockets: 1
  llcs_per_socket: 2
  cores_per_llc: 4
  cores_per_l2: 4
  threads_per_core: 1
  nodes_per_socket: 1
  numbering: adjacent`, `cpus:
  - {cpu: 0, package: 0, core: 0, siblings: "0", l2: "0-3", llc: "0-3", node: 0}
  - {cpu: 1, package: 0, core: 1, siblings: "1", l2: "0-3", llc: "0-3", node: 0}
  - {cpu: 2, package: 0, core: 2, siblings: "2", l2: "0-3", llc: "0-3", node: 0}
  - {cpu: 3, package: 0, core: 3, siblings: "3", l2: "0-3", llc: "0-3", node: 0}`, 1)
	if explicit == string(good) {
		t.Fatal("hikey-8 layout block not found")
	}
	if code, _, errs := runEmu("topo", file("ok.yaml", explicit)); code != 0 {
		t.Fatalf("explicit hikey variant rejected: %s", errs)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown topology", []string{"topo", "spr-3s"}, `unknown topology "spr-3s" (allowed: clx-ap-2s, epyc-9654-2s, hikey-8`},
		{"unknown field", []string{"topo", file("a.yaml", strings.Replace(string(good), "hz: 250", "hz: 250\nl3_shared_by: 4", 1))}, "l3_shared_by"},
		{"asymmetric siblings", []string{"topo", file("b.yaml", strings.Replace(explicit, `siblings: "1"`, `siblings: "1,2"`, 1))}, "not symmetric"},
		{"cpu in two LLCs", []string{"topo", file("c.yaml", strings.Replace(explicit, `core: 3, siblings: "3", l2: "0-3", llc: "0-3"`, `core: 3, siblings: "3", l2: "0-3", llc: "2-3"`, 1))}, "in two llc domains"},
		{"SLIT wrong size", []string{"topo", file("d.yaml", strings.Replace(explicit, "numa_distance:\n  - [10]", "numa_distance:\n  - [10, 20]\n  - [20, 10]", 1))}, "numa_distance"},
		{"missing file", []string{"topo", filepath.Join(dir, "nope.yaml")}, "no such file"},
		{"bad flag", []string{"topo", "-bogus", "spr-2s"}, "flag provided but not defined: -bogus"},
		{"no argument", []string{"topo"}, "need exactly one"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"calib on a preset", []string{"topo", "-calib", "x.yaml", "spr-2s"}, "-calib"},
		{"unknown profile", []string{"features", "v6.9-eevdf"}, `unknown profile "v6.9-eevdf" (allowed: v5.15-cfs, v5.19-cfs, v6.5-cfs, v6.6-eevdf, v6.7-eevdf, v6.11-eevdf, v6.12-eevdf)`},
		{"unknown feature", []string{"features", "v6.6-eevdf,+FOO"}, `unknown feature "FOO"`},
	} {
		code, _, errs := runEmu(tc.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", tc.name, code, errs)
		}
		if !strings.Contains(errs, tc.want) {
			t.Errorf("%s: stderr %q lacks %q", tc.name, errs, tc.want)
		}
	}
}

func TestFeatures(t *testing.T) {
	code, out, errs := runEmu("features")
	if code != 0 || !strings.Contains(out, "TG_LOAD_RATELIMIT") || !strings.Contains(out, "v6.7-eevdf") {
		t.Errorf("emu features: %d %q %q", code, out, errs)
	}
	// The current-kernel profile and its two headline switches, on.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "v6.12-eevdf ") {
			code, set, _ := runEmu("features", "v6.12-eevdf")
			if code != 0 || !strings.Contains(set, " DELAY_DEQUEUE ") || !strings.Contains(set, " PREEMPT_SHORT ") || strings.Contains(set, "NO_DELAY_DEQUEUE") {
				t.Errorf("emu features v6.12-eevdf: %d %q", code, set)
			}
		}
	}
	if !strings.Contains(out, "\n  v6.12-eevdf ") || !strings.Contains(out, "  DELAY_DEQUEUE ") || !strings.Contains(out, "  PREEMPT_SHORT ") {
		t.Errorf("emu features lacks v6.12-eevdf, DELAY_DEQUEUE or PREEMPT_SHORT:\n%s", out)
	}
	code, out, _ = runEmu("features", "v6.6-eevdf,+TG_LOAD_RATELIMIT,-RUN_TO_PARITY")
	if code != 0 || !strings.Contains(out, " TG_LOAD_RATELIMIT") || !strings.Contains(out, "NO_RUN_TO_PARITY") {
		t.Errorf("emu features SET: %d %q", code, out)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"topo", "-h"}, {"calibrate", "-h"}} {
		code, _, errs := runEmu(args...)
		if code != 0 || !strings.Contains(errs, "usage") {
			t.Errorf("emu %v: exit %d, stderr %q", args, code, errs)
		}
	}
}
