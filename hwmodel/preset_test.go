package hwmodel

import (
	"bytes"
	"encoding/json"
	"testing"
)

func builtinPresets() []string {
	var out []string
	for _, n := range PresetNames() {
		if n != HostPreset {
			out = append(out, n)
		}
	}
	return out
}

func mustLoad(t testing.TB, name string) *Machine {
	t.Helper()
	m, err := Load(name, LoadOptions{})
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return m
}

// TestPresetCounts checks each preset's shape as the scheduler sees it
// (kernel-mechanisms.md 12).
func TestPresetCounts(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		cpus, cores, l2s, llcs, pkgs, nodes int
		llcSize                             int
		smt                                 int
	}{
		{"spr-2s", 224, 112, 112, 2, 2, 2, 112, 2},
		{"spr-1s", 112, 56, 56, 1, 1, 1, 112, 2},
		{"epyc-9654-2s", 384, 192, 192, 24, 2, 2, 16, 2},
		{"icl-2s", 128, 64, 64, 2, 2, 2, 64, 2},
		{"clx-ap-2s", 192, 96, 96, 4, 2, 4, 48, 2},
		{"xeon-e5-2x10", 40, 20, 20, 2, 2, 2, 20, 2},
		{"hikey-8", 8, 8, 2, 2, 1, 1, 4, 1},
	} {
		m := mustLoad(t, tc.name)
		got := []int{m.NumCPUs(), len(m.Cores), len(m.L2s), len(m.LLCs), len(m.Packages), len(m.Nodes)}
		want := []int{tc.cpus, tc.cores, tc.l2s, tc.llcs, tc.pkgs, tc.nodes}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: cpus/cores/l2s/llcs/packages/nodes = %v, want %v", tc.name, got, want)
				break
			}
		}
		for i, llc := range m.LLCs {
			if len(llc) != tc.llcSize {
				t.Errorf("%s: LLC %d has %d CPUs, want %d", tc.name, i, len(llc), tc.llcSize)
			}
		}
		if s := m.threadsPerCore(); s != tc.smt {
			t.Errorf("%s: %d threads per core, want %d", tc.name, s, tc.smt)
		}
	}
}

// TestLinuxNumbering: on x86 Linux numbers every core's first thread
// first, so SMT siblings are ncores apart.
func TestLinuxNumbering(t *testing.T) {
	for _, tc := range []struct {
		name         string
		a, b         int
		want         Class
		wantPkgOfB   int
		wantLLCOfB   int
		wantNodeOfB  int
		wantSiblings string
	}{
		{"spr-2s", 0, 112, ClassSMT, 0, 0, 0, "0,112"},
		{"spr-2s", 0, 55, ClassLLC, 0, 0, 0, "0,112"},
		{"spr-2s", 0, 56, ClassRemote, 1, 1, 1, "0,112"},
		{"spr-2s", 55, 223, ClassRemote, 1, 1, 1, "55,167"},
		{"epyc-9654-2s", 0, 192, ClassSMT, 0, 0, 0, "0,192"},
		{"epyc-9654-2s", 0, 7, ClassLLC, 0, 0, 0, "0,192"},
		{"epyc-9654-2s", 0, 8, ClassSocket, 0, 1, 0, "0,192"},
		{"epyc-9654-2s", 0, 96, ClassRemote, 1, 12, 1, "0,192"},
		{"epyc-9654-2s", 8, 383, ClassRemote, 1, 23, 1, "8,200"},
		{"hikey-8", 0, 3, ClassL2, 0, 0, 0, "0"},
		{"hikey-8", 0, 4, ClassSocket, 0, 1, 0, "0"},
	} {
		m := mustLoad(t, tc.name)
		if got := m.Class(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: Class(%d,%d) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		cb := m.CPUs[tc.b]
		if cb.Package != tc.wantPkgOfB || cb.LLC != tc.wantLLCOfB || cb.Node != tc.wantNodeOfB {
			t.Errorf("%s: CPU %d in package %d LLC %d node %d, want %d %d %d", tc.name, tc.b,
				cb.Package, cb.LLC, cb.Node, tc.wantPkgOfB, tc.wantLLCOfB, tc.wantNodeOfB)
		}
		if got := FormatCPUList(m.SMTSiblings(tc.a)); got != tc.wantSiblings {
			t.Errorf("%s: siblings of %d = %s, want %s", tc.name, tc.a, got, tc.wantSiblings)
		}
	}
}

// TestTopoGolden pins `emu topo` output for every preset.
func TestTopoGolden(t *testing.T) {
	for _, name := range builtinPresets() {
		t.Run(name, func(t *testing.T) {
			m := mustLoad(t, name)
			var buf bytes.Buffer
			if err := m.WriteTopo(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, "topo/"+name+".golden", buf.Bytes())
			buf.Reset()
			if err := m.WriteTopoJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var tj TopoJSON
			if err := json.Unmarshal(buf.Bytes(), &tj); err != nil {
				t.Fatalf("topo -json is not JSON: %v", err)
			}
			if tj.NumCPUs != m.NumCPUs() || len(tj.LLCs) != len(m.LLCs) || len(tj.CPUList) != m.NumCPUs() {
				t.Errorf("topo -json counts differ: %d cpus %d llcs", tj.NumCPUs, len(tj.LLCs))
			}
		})
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("spr-3s", LoadOptions{})
	if _, ok := err.(*UnknownError); !ok {
		t.Fatalf("Load(spr-3s) = %v, want *UnknownError", err)
	}
	if _, err := Load("spr-2s", LoadOptions{Calib: "x.yaml"}); err == nil {
		t.Error("-calib accepted on a non-host preset")
	}
	if _, err := Load("testdata/does-not-exist.yaml", LoadOptions{}); err == nil {
		t.Error("missing spec file accepted")
	}
}
