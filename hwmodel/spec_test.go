package hwmodel

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// tinySpec is a valid 2-socket, 2-core, SMT2 machine in explicit form.
var tinySpec = `name: tiny
description: test machine
vendor: intel
model: test
arch: x86_64
freq_mhz: 2000
hz: 1000
cpus:
  - {cpu: 0, package: 0, core: 0, siblings: "0,2", llc: "0,2", node: 0}
  - {cpu: 1, package: 1, core: 0, siblings: "1,3", llc: "1,3", node: 1}
  - {cpu: 2, package: 0, core: 0, siblings: "0,2", llc: "0,2", node: 0}
  - {cpu: 3, package: 1, core: 0, siblings: "1,3", llc: "1,3", node: 1}
numa_distance: [[10, 21], [21, 10]]
caches: {line_bytes: 64, l1d_kib: 32, l2_kib: 1024, l3_kib: 8192}
latency_ns:
  smt: {value: 8, source: '[E] test'}
  remote: {value: 100, source: '[E] test'}
  home_remote: {value: 50, source: '[E] test'}
  mem_local: {value: 80, source: '[E] test'}
  mem_remote: {value: 140, source: '[E] test'}
  rmw_local: {value: 5, source: '[E] test'}
  burst: {value: 2, source: '[E] test'}
costs_cycles:
` + allCosts

var allCosts = func() string {
	var b strings.Builder
	for op := KernelOp(0); op < NumKernelOps; op++ {
		b.WriteString("  " + op.String() + ": {value: 100, source: '[E] test'}\n")
	}
	return b.String()
}()

func buildString(s string) (*Machine, error) {
	spec, err := DecodeSpec(strings.NewReader(s))
	if err != nil {
		return nil, err
	}
	return Build(spec)
}

func TestTinySpec(t *testing.T) {
	m, err := buildString(tinySpec)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.CPUs) != 4 || len(m.Cores) != 2 || len(m.LLCs) != 2 || len(m.Packages) != 2 || len(m.Nodes) != 2 {
		t.Fatalf("counts: cpus %d cores %d llcs %d pkgs %d nodes %d", len(m.CPUs), len(m.Cores), len(m.LLCs), len(m.Packages), len(m.Nodes))
	}
	for _, tc := range []struct {
		a, b int
		want Class
	}{{0, 0, ClassSelf}, {0, 2, ClassSMT}, {0, 1, ClassRemote}, {3, 1, ClassSMT}} {
		if got := m.Class(tc.a, tc.b); got != tc.want {
			t.Errorf("Class(%d,%d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestSpecErrors feeds broken specs and checks that each is rejected
// with an error naming the offending field.
func TestSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new, field string
	}{
		{"unknown field", "hz: 1000", "hz: 1000\nl3_shared_by: 4", "l3_shared_by"},
		{"unknown nested field", "l3_kib: 8192", "l3_kib: 8192, l4_kib: 1", "l4_kib"},
		{"asymmetric siblings", `{cpu: 2, package: 0, core: 0, siblings: "0,2"`, `{cpu: 2, package: 0, core: 0, siblings: "2"`, "cpus[0].siblings"},
		{"cpu in two LLCs", `{cpu: 1, package: 1, core: 0, siblings: "1,3", llc: "1,3"`, `{cpu: 1, package: 1, core: 0, siblings: "1,3", llc: "1-3"`, "llc"},
		{"SLIT wrong size", "numa_distance: [[10, 21], [21, 10]]", "numa_distance: [[10, 21, 21], [21, 10, 21], [21, 21, 10]]", "numa_distance"},
		{"SLIT short row", "numa_distance: [[10, 21], [21, 10]]", "numa_distance: [[10, 21], [21]]", "numa_distance[1]"},
		{"SLIT bad diagonal", "numa_distance: [[10, 21], [21, 10]]", "numa_distance: [[10, 21], [21, 11]]", "numa_distance[1][1]"},
		{"duplicate cpu", `{cpu: 3, package: 1`, `{cpu: 2, package: 1`, "cpus[3].cpu"},
		{"cpu out of range", `{cpu: 3, package: 1`, `{cpu: 7, package: 1`, "cpus[3].cpu"},
		{"garbage list", `llc: "1,3", node: 1}
  - {cpu: 2`, `llc: "1,x", node: 1}
  - {cpu: 2`, "cpus[1].llc"},
		{"list without self", `{cpu: 0, package: 0, core: 0, siblings: "0,2", llc: "0,2"`, `{cpu: 0, package: 0, core: 0, siblings: "0,2", llc: "2"`, "cpus[0].llc"},
		{"missing latency", "  remote: {value: 100, source: '[E] test'}\n", "", "latency_ns.remote"},
		{"missing source", "smt: {value: 8, source: '[E] test'}", "smt: {value: 8}", "latency_ns.smt.source"},
		{"negative latency", "smt: {value: 8, source: '[E] test'}", "smt: {value: -8, source: '[E] test'}", "latency_ns.smt.value"},
		{"fractional burst", "burst: {value: 2, source: '[E] test'}", "burst: {value: 2.5, source: '[E] test'}", "latency_ns.burst.value"},
		{"l2_hit without llc_hit", "burst: {value: 2, source: '[E] test'}", "burst: {value: 2, source: '[E] test'}\n  l2_hit: {value: 3, source: '[E] test'}", "latency_ns.llc_hit"},
		{"llc_hit without l2_hit", "burst: {value: 2, source: '[E] test'}", "burst: {value: 2, source: '[E] test'}\n  llc_hit: {value: 15, source: '[E] test'}", "latency_ns.llc_hit"},
		{"missing cost", "  ttwu: {value: 100, source: '[E] test'}\n", "", "costs_cycles.ttwu"},
		{"bad hz", "hz: 1000", "hz: 999", "hz"},
		{"bad arch", "arch: x86_64", "arch: sparc", "arch"},
		{"bad line size", "line_bytes: 64", "line_bytes: 48", "caches.line_bytes"},
		{"type mismatch", "freq_mhz: 2000", "freq_mhz: fast", "freq_mhz"},
		{"huge latency", "smt: {value: 8, source: '[E] test'}", "smt: {value: 1e300, source: '[E] test'}", "latency_ns.smt.value"},
		{"infinite cost", "  ttwu: {value: 100, source: '[E] test'}", "  ttwu: {value: .inf, source: '[E] test'}", "costs_cycles.ttwu.value"},
		{"source without a tag", "smt: {value: 8, source: '[E] test'}", "smt: {value: 8, source: a guess}", "latency_ns.smt.source"},
		{"flow mapping: second key's type", "smt: {value: 8, source: '[E] test'}", "smt: {value: 8, source: [1, 2]}", "latency_ns.smt.source"},
		{"flow mapping: unknown key", "smt: {value: 8, source: '[E] test'}", "smt: {value: 8, source: '[E] test', sorce: x}", "latency_ns.smt.sorce"},
		{"both forms", "numa_distance:", "layout: {sockets: 1, llcs_per_socket: 1, cores_per_llc: 1, cores_per_l2: 1, threads_per_core: 1, nodes_per_socket: 1, numbering: linux}\nnuma_distance:", "layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := strings.Replace(tinySpec, tc.old, tc.new, 1)
			if s == tinySpec {
				t.Fatalf("test edit %q not found in the spec", tc.old)
			}
			_, err := buildString(s)
			if err == nil {
				t.Fatal("accepted")
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SpecError", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %q", err, tc.field)
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	base := "sockets: 1, llcs_per_socket: 2, cores_per_llc: 4, cores_per_l2: 2, threads_per_core: 2, nodes_per_socket: 1, numbering: linux"
	for _, tc := range []struct{ old, new, field string }{
		{"sockets: 1", "sockets: 0", "layout.sockets"},
		{"cores_per_l2: 2", "cores_per_l2: 3", "layout.cores_per_l2"},
		{"nodes_per_socket: 1", "nodes_per_socket: 3", "layout.nodes_per_socket"},
		{"numbering: linux", "numbering: windows", "layout.numbering"},
	} {
		spec := strings.Replace(tinySpec, "cpus:", "layout: {"+strings.Replace(base, tc.old, tc.new, 1)+"}\ncpus_unused:", 1)
		spec = spec[:strings.Index(spec, "cpus_unused:")] + spec[strings.Index(spec, "numa_distance:"):]
		spec = strings.Replace(spec, "numa_distance: [[10, 21], [21, 10]]", "numa_distance: [[10]]", 1)
		_, err := buildString(spec)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s -> %s: error %v, want one naming %s", tc.old, tc.new, err, tc.field)
		}
	}
}

func TestDecodeSpecEmpty(t *testing.T) {
	if _, err := DecodeSpec(strings.NewReader("")); err == nil {
		t.Error("empty spec accepted")
	}
	if _, err := DecodeSpec(strings.NewReader(tinySpec + "---\nname: two\n")); err == nil {
		t.Error("two documents accepted")
	}
}

// TestSpecRoundTrip: every preset encodes and decodes to the same machine.
func TestSpecRoundTrip(t *testing.T) {
	for _, name := range builtinPresets() {
		m := mustLoad(t, name)
		c := cloneSpec(m.Spec)
		m2, err := Build(c)
		if err != nil {
			t.Fatalf("%s: re-encoded spec does not build: %v", name, err)
		}
		if m2.NumCPUs() != m.NumCPUs() || m2.Lat != m.Lat || m2.Costs != m.Costs {
			t.Errorf("%s: round trip changed the machine", name)
		}
	}
}

// TestUnixCostsFallBack: a spec file written before unix_send and
// unix_recv prices AF_UNIX streams as its sock_send and sock_recv; the
// presets price them apart.
func TestUnixCostsFallBack(t *testing.T) {
	data, err := PresetSpec("icl-2s")
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeSpec(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if m.Costs.Cycles[OpUnixSend] == m.Costs.Cycles[OpSockSend] {
		t.Errorf("icl-2s prices unix_send as sock_send (%v cycles)", m.Costs.Cycles[OpSockSend])
	}
	s.Costs.UnixSend, s.Costs.UnixRecv = nil, nil
	old, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	for op, from := range map[KernelOp]KernelOp{OpUnixSend: OpSockSend, OpUnixRecv: OpSockRecv} {
		if old.Costs.NS[op] != old.Costs.NS[from] || old.Costs.Cycles[op] != old.Costs.Cycles[from] {
			t.Errorf("%v left out costs %v cycles, want %v's %v", op, old.Costs.Cycles[op], from, old.Costs.Cycles[from])
		}
	}
}
