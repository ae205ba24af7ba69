package hwmodel

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/klauspost/cpuid/v2"
)

// The golden files of the recorded trees are testdata/host/<tree>.golden.yaml,
// rewritten by `go test -update` (the flag and golden() are in golden_test.go).

type classPair struct {
	a, b int
	want Class
}

type hostTree struct {
	tree string
	id   HostIdentity
	// Expected group counts.
	cpus, cores, l2s, llcs, pkgs, nodes int
	pairs                               []classPair
	caches                              CacheSpec
	hz                                  int
	desc                                []string // substrings of the description
}

// The identities are fixed so the golden files do not depend on the CPU
// the tests run on. Cache sizes are left 0 to exercise the sysfs reading.
var hostTrees = []hostTree{
	{
		tree: "kvm-2vcpu-genoa",
		id:   HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596.14},
		cpus: 2, cores: 2, l2s: 2, llcs: 1, pkgs: 1, nodes: 1,
		pairs:  []classPair{{0, 0, ClassSelf}, {0, 1, ClassLLC}, {1, 0, ClassLLC}},
		caches: CacheSpec{LineBytes: 64, L1dKiB: 32, L2KiB: 1024, L3KiB: 32768},
		hz:     1000,
		desc:   []string{"detected: AMD EPYC, 2 CPUs (1 socket, 1 LLC)"},
	},
	{
		tree: "xeon-2s-smt",
		id:   HostIdentity{Vendor: "intel", Model: "Intel(R) Xeon(R) CPU E5-2667 v4 @ 3.20GHz", Arch: "x86_64", FreqMHz: 3200},
		cpus: 32, cores: 16, l2s: 16, llcs: 2, pkgs: 2, nodes: 2,
		pairs: []classPair{
			{0, 16, ClassSMT}, {7, 23, ClassSMT}, {8, 24, ClassSMT}, {15, 31, ClassSMT},
			{0, 1, ClassLLC}, {0, 23, ClassLLC}, {8, 15, ClassLLC},
			{0, 8, ClassRemote}, {16, 24, ClassRemote}, {7, 31, ClassRemote},
		},
		caches: CacheSpec{LineBytes: 64, L1dKiB: 32, L2KiB: 256, L3KiB: 25600},
		hz:     1000,
		desc:   []string{"detected: Intel(R) Xeon(R) CPU E5-2667 v4 @ 3.20GHz, 32 CPUs (2 sockets, 2 LLCs)"},
	},
	{
		tree: "arm64-2cluster",
		id:   HostIdentity{Vendor: "arm", Model: "Hi3660 (4x Cortex-A53 + 4x Cortex-A73)", Arch: "arm64", FreqMHz: 2362},
		cpus: 8, cores: 8, l2s: 2, llcs: 2, pkgs: 1, nodes: 1,
		pairs: []classPair{
			{0, 1, ClassL2}, {0, 3, ClassL2}, {4, 7, ClassL2},
			{0, 4, ClassSocket}, {3, 4, ClassSocket}, {7, 0, ClassSocket},
		},
		// sysfs gives no sizes on this board: the defaults.
		caches: CacheSpec{LineBytes: defaultLineBytes, L1dKiB: defaultL1dKiB, L2KiB: defaultL2KiB, L3KiB: 0},
		hz:     250,
		desc: []string{
			"8 CPUs (1 socket, 2 LLCs)",
			"line_bytes 64 is a default", "l2_kib 1024 is a default", "neither cpuid nor sysfs gives a size",
		},
	},
	{
		tree: "qemu-8vcpu-offline",
		id:   HostIdentity{Vendor: "intel", Model: "QEMU Virtual CPU", Arch: "x86_64", FreqMHz: 2400},
		cpus: 7, cores: 4, l2s: 4, llcs: 1, pkgs: 1, nodes: 1,
		pairs: []classPair{
			{0, 1, ClassSMT}, {4, 5, ClassSMT}, {1, 2, ClassLLC},
			{5, 6, ClassLLC}, // sysfs cpu5 and cpu7: cpu7 lost its sibling cpu6
			{0, 6, ClassLLC},
		},
		caches: CacheSpec{LineBytes: 64, L1dKiB: 32, L2KiB: 4096, L3KiB: 16384},
		hz:     1000,
		desc:   []string{"7 CPUs (1 socket, 1 LLC)", "online CPUs 0-5,7 renumbered 0-6"},
	},
}

func TestHostSpecTrees(t *testing.T) {
	for _, tc := range hostTrees {
		t.Run(tc.tree, func(t *testing.T) {
			s, err := HostSpec(os.DirFS(filepath.Join("testdata", "sysfs", tc.tree)), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(s)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			counts := []struct {
				name      string
				got, want int
			}{
				{"CPUs", m.NumCPUs(), tc.cpus}, {"cores", len(m.Cores), tc.cores},
				{"L2s", len(m.L2s), tc.l2s}, {"LLCs", len(m.LLCs), tc.llcs},
				{"packages", len(m.Packages), tc.pkgs}, {"nodes", len(m.Nodes), tc.nodes},
			}
			for _, c := range counts {
				if c.got != c.want {
					t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
				}
			}
			for _, p := range tc.pairs {
				if got := m.Class(p.a, p.b); got != p.want {
					t.Errorf("Class(%d, %d) = %v, want %v", p.a, p.b, got, p.want)
				}
			}
			if m.Caches != tc.caches {
				t.Errorf("caches = %+v, want %+v", m.Caches, tc.caches)
			}
			if m.HZ != tc.hz {
				t.Errorf("hz = %d, want %d", m.HZ, tc.hz)
			}
			if m.Name != "host" || m.Vendor != tc.id.Vendor || m.Arch != tc.id.Arch || m.FreqMHz != tc.id.FreqMHz {
				t.Errorf("identity = %q %q %q %v, want host %q %q %v", m.Name, m.Vendor, m.Arch, m.FreqMHz, tc.id.Vendor, tc.id.Arch, tc.id.FreqMHz)
			}
			for _, d := range tc.desc {
				if !strings.Contains(m.Description, d) {
					t.Errorf("description %q lacks %q", m.Description, d)
				}
			}
			checkHostDefaults(t, s, m)

			var buf bytes.Buffer
			if err := s.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("host", tc.tree+".golden.yaml"), buf.Bytes())

			// The generated spec is a valid spec file.
			s2, err := DecodeSpec(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("decoding the generated spec: %v", err)
			}
			if _, err := Build(s2); err != nil {
				t.Fatalf("building the decoded spec: %v", err)
			}
		})
	}
}

// checkHostDefaults checks that the host has a latency for exactly the
// classes it has, that the multi-socket and multi-node entries come and go
// with the topology, and that every source says it is a default.
func checkHostDefaults(t *testing.T, s *Spec, m *Machine) {
	t.Helper()
	present := m.ClassesPresent()
	for c := ClassSMT; c < NumClasses; c++ {
		if got := *latField(&s.Latency, c) != nil; got != present[c] {
			t.Errorf("latency_ns.%s given = %v, but class present = %v", c, got, present[c])
		}
	}
	if (s.Latency.HomeRemote != nil) != (len(m.Packages) > 1) {
		t.Errorf("home_remote given = %v with %d packages", s.Latency.HomeRemote != nil, len(m.Packages))
	}
	if (s.Latency.MemRemote != nil) != (len(m.Nodes) > 1) {
		t.Errorf("mem_remote given = %v with %d nodes", s.Latency.MemRemote != nil, len(m.Nodes))
	}
	preset := hostPresetFor(s.Vendor, s.Arch)
	check := func(field string, v *Sourced) {
		if v == nil {
			return
		}
		want := "[E] default for " + s.Vendor + " from the " + preset + " preset: "
		if !strings.HasPrefix(v.Source, want) && !strings.HasPrefix(v.Source, "[E] estimate for "+s.Vendor+": ") {
			t.Errorf("%s.source = %q, want prefix %q", field, v.Source, want)
		}
		if !strings.HasSuffix(v.Source, "; run emu calibrate to measure this host") {
			t.Errorf("%s.source = %q does not point to emu calibrate", field, v.Source)
		}
	}
	for c := ClassSMT; c < NumClasses; c++ {
		check("latency_ns."+c.String(), *latField(&s.Latency, c))
	}
	for _, f := range []struct {
		name string
		v    *Sourced
	}{
		{"home_remote", s.Latency.HomeRemote}, {"mem_local", s.Latency.MemLocal},
		{"mem_remote", s.Latency.MemRemote}, {"rmw_local", s.Latency.RMWLocal}, {"burst", s.Latency.Burst},
	} {
		check("latency_ns."+f.name, f.v)
	}
	for op := KernelOp(0); op < NumKernelOps; op++ {
		check("costs_cycles."+op.String(), *kernelOps[op].field(&s.Costs))
	}
}

// The damaged-tree tests work on in-memory copies of the recorded trees.
var (
	treeMu    sync.Mutex
	treeCache = map[string]fstest.MapFS{}
)

// loadTree returns a private, mutable copy of a recorded tree.
func loadTree(t *testing.T, tree string) fstest.MapFS {
	t.Helper()
	treeMu.Lock()
	defer treeMu.Unlock()
	m, ok := treeCache[tree]
	if !ok {
		m = fstest.MapFS{}
		root := os.DirFS(filepath.Join("testdata", "sysfs", tree))
		err := fs.WalkDir(root, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || path == "README.md" {
				return err
			}
			data, err := fs.ReadFile(root, path)
			m[path] = &fstest.MapFile{Data: data}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		treeCache[tree] = m
	}
	c := make(fstest.MapFS, len(m))
	for k, v := range m {
		c[k] = &fstest.MapFile{Data: slices.Clone(v.Data)}
	}
	return c
}

// writeFile sets a file as sysfs prints it, with a trailing newline.
func writeFile(m fstest.MapFS, file, content string) {
	m[file] = &fstest.MapFile{Data: []byte(content + "\n")}
}

// removeFile removes a file or a directory with everything under it.
func removeFile(m fstest.MapFS, path string) {
	for k := range m {
		if k == path || strings.HasPrefix(k, path+"/") {
			delete(m, k)
		}
	}
}

// renameFile moves a file or a directory.
func renameFile(m fstest.MapFS, from, to string) {
	moved := map[string]*fstest.MapFile{}
	for k, v := range m {
		if k == from || strings.HasPrefix(k, from+"/") {
			moved[to+strings.TrimPrefix(k, from)] = v
			delete(m, k)
		}
	}
	maps.Copy(m, moved)
}

func TestHostSpecMalformed(t *testing.T) {
	amd := HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596.14}
	intel := HostIdentity{Vendor: "intel", Model: "Xeon", Arch: "x86_64", FreqMHz: 3200}
	tests := []struct {
		name   string
		tree   string
		damage func(m fstest.MapFS)
		file   string // the SysfsError's File
		msg    string // a substring of the message
	}{
		{"missing cpu/online", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { removeFile(d, "cpu/online") },
			"cpu/online", "does not exist"},
		{"garbage in cpu/online", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { writeFile(d, "cpu/online", "0-1,zz") },
			"cpu/online", "bad cpu list"},
		{"missing core_id", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { removeFile(d, "cpu/cpu1/topology/core_id") },
			"cpu/cpu1/topology/core_id", "does not exist"},
		{"garbage core_id", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu9/topology/core_id", "one") },
			"cpu/cpu9/topology/core_id", `"one" is not an integer`},
		{"garbage physical_package_id", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu3/topology/physical_package_id", "") },
			"cpu/cpu3/topology/physical_package_id", "not an integer"},
		{"garbage in a cache list", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu0/cache/index3/shared_cpu_list", "0-x") },
			"cpu/cpu0/cache/index3/shared_cpu_list", "bad cpu list"},
		{"garbage in a sibling list", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu4/topology/thread_siblings_list", "4,,20") },
			"cpu/cpu4/topology/thread_siblings_list", "bad cpu list"},
		{"asymmetric sibling list", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu16/topology/thread_siblings_list", "16") },
			"cpu/cpu0/topology/thread_siblings_list", "not symmetric: cpu16's (cpu/cpu16/topology/thread_siblings_list) is \"16\""},
		{"sibling list without its CPU", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu2/topology/thread_siblings_list", "18") },
			"cpu/cpu2/topology/thread_siblings_list", "does not contain cpu2 itself"},
		{"siblings in different cores", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu21/topology/core_id", "6") },
			"cpu/cpu5/topology/thread_siblings_list", "differ in physical_package_id/core_id"},
		{"CPU in two L2s", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu0/cache/index2/shared_cpu_list", "0-1") },
			"cpu/cpu0/cache/index2/shared_cpu_list", "cpu1 is in two L2 domains"},
		{"LLC across packages", "xeon-2s-smt",
			func(d fstest.MapFS) {
				for c := range 32 {
					writeFile(d, "cpu/cpu"+itoa(c)+"/cache/index3/shared_cpu_list", "0-31")
				}
			},
			"cpu/cpu0/cache/index3/shared_cpu_list", "LLC spans packages 0 (cpu0) and 1 (cpu8)"},
		{"bad cache size", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu0/cache/index2/size", "1024Q") },
			"cpu/cpu0/cache/index2/size", "not a cache size"},
		{"bad cache type", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu1/cache/index0/type", "Victim") },
			"cpu/cpu1/cache/index0/type", "not a cache type"},
		{"missing cache level", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { removeFile(d, "cpu/cpu1/cache/index3/level") },
			"cpu/cpu1/cache/index3/level", "does not exist"},
		{"garbage distance", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "node/node1/distance", "21 ten") },
			"node/node1/distance", `"ten" is not a distance`},
		{"short distance row", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "node/node0/distance", "10") },
			"node/node0/distance", "has 1 entries but there are 2 node directories"},
		{"bad local distance", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "node/node1/distance", "21 20") },
			"node/node1/distance", "local distance is 20"},
		{"missing distance", "kvm-2vcpu-genoa",
			func(d fstest.MapFS) { removeFile(d, "node/node0/distance") },
			"node/node0/distance", "does not exist"},
		{"CPU in no node", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "node/node1/cpulist", "8-15,24-30") },
			"node/node*/cpulist", "online cpu31 is in no node"},
		{"CPU in two nodes", "xeon-2s-smt",
			func(d fstest.MapFS) { writeFile(d, "node/node1/cpulist", "7-15,24-31") },
			"node/node1/cpulist", "cpu7 is also in node/node0/cpulist"},
		{"online CPU without a directory", "qemu-8vcpu-offline",
			func(d fstest.MapFS) { writeFile(d, "cpu/online", "0-7") },
			"cpu/cpu6/topology/physical_package_id", "does not exist"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sys := loadTree(t, tc.tree)
			tc.damage(sys)
			id := amd
			if strings.HasPrefix(tc.tree, "xeon") || strings.HasPrefix(tc.tree, "qemu") {
				id = intel
			}
			s, err := HostSpec(sys, id)
			if err == nil {
				t.Fatalf("no error; description %q", s.Description)
			}
			var se *SysfsError
			if !errors.As(err, &se) {
				t.Fatalf("error %q (%T) is not a *SysfsError", err, err)
			}
			if se.File != tc.file {
				t.Errorf("error names %q, want %q (%v)", se.File, tc.file, err)
			}
			if !strings.HasPrefix(err.Error(), "sysfs "+tc.file+": ") {
				t.Errorf("error %q does not start with the file", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q lacks %q", err, tc.msg)
			}
		})
	}
}

func itoa(i int) string { return FormatCPUList([]int{i}) }

// Irregular but valid trees: HostSpec reads them, says so where it guessed,
// and the result builds.
func TestHostSpecTolerated(t *testing.T) {
	intel := HostIdentity{Vendor: "intel", Model: "Xeon", Arch: "x86_64", FreqMHz: 3200}
	arm := HostIdentity{Vendor: "arm", Model: "Hi3660", Arch: "arm64", FreqMHz: 2362}
	amd := HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596.14}
	tests := []struct {
		name   string
		tree   string
		id     HostIdentity
		damage func(m fstest.MapFS)
		check  func(t *testing.T, s *Spec, m *Machine)
	}{
		{"stale offline CPU in a sibling list", "qemu-8vcpu-offline", intel,
			func(d fstest.MapFS) { writeFile(d, "cpu/cpu7/topology/thread_siblings_list", "6-7") },
			func(t *testing.T, s *Spec, m *Machine) {
				if got := s.CPUs[6].Siblings; got != "6" {
					t.Errorf("siblings of CPU 6 (sysfs cpu7) = %q, want \"6\"", got)
				}
				if len(m.Cores) != 4 {
					t.Errorf("%d cores, want 4", len(m.Cores))
				}
			}},
		{"core_cpus_list instead of thread_siblings_list", "xeon-2s-smt", intel,
			func(d fstest.MapFS) {
				for c := range 32 {
					p := "cpu/cpu" + itoa(c) + "/topology/"
					renameFile(d, p+"thread_siblings_list", p+"core_cpus_list")
				}
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if len(m.Cores) != 16 || m.Class(0, 16) != ClassSMT {
					t.Errorf("%d cores, Class(0,16) = %v; want 16, smt", len(m.Cores), m.Class(0, 16))
				}
			}},
		{"no L2 cache: the cluster is the L2, the package the LLC", "arm64-2cluster", arm,
			func(d fstest.MapFS) {
				for c := range 8 {
					removeFile(d, "cpu/cpu"+itoa(c)+"/cache/index2")
				}
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if len(m.L2s) != 2 || len(m.LLCs) != 1 {
					t.Errorf("%d L2s, %d LLCs; want 2, 1", len(m.L2s), len(m.LLCs))
				}
				if m.Class(0, 1) != ClassL2 || m.Class(0, 4) != ClassLLC {
					t.Errorf("Class(0,1) = %v, Class(0,4) = %v; want l2, llc", m.Class(0, 1), m.Class(0, 4))
				}
				if !strings.Contains(s.Description, "8 CPUs have no L2 or L3 in sysfs") {
					t.Errorf("description %q does not say the LLC was guessed", s.Description)
				}
				// hikey-8 has no llc latency: estimated between l2 and socket.
				if s.Latency.LLC == nil || s.Latency.LLC.Value != 97.5 || !strings.HasPrefix(s.Latency.LLC.Source, "[E] estimate for arm: midway between") {
					t.Errorf("latency_ns.llc = %+v, want the 97.5 ns estimate", s.Latency.LLC)
				}
			}},
		{"no cache directories", "kvm-2vcpu-genoa", amd,
			func(d fstest.MapFS) {
				removeFile(d, "cpu/cpu0/cache")
				removeFile(d, "cpu/cpu1/cache")
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if len(m.LLCs) != 1 || len(m.L2s) != 2 {
					t.Errorf("%d LLCs, %d L2s; want 1, 2", len(m.LLCs), len(m.L2s))
				}
				if s.Caches.L3KiB != 0 || s.Caches.L2KiB != defaultL2KiB {
					t.Errorf("caches %+v, want defaults", s.Caches)
				}
				if !strings.Contains(s.Description, "l3_kib unknown (no cache description)") {
					t.Errorf("description %q does not say the caches are unknown", s.Description)
				}
			}},
		{"memory-only and renumbered nodes", "xeon-2s-smt", intel,
			func(d fstest.MapFS) {
				// node0 has no CPUs (CXL memory), the sockets are node1, node2.
				renameFile(d, "node/node1", "node/node2")
				renameFile(d, "node/node0", "node/node1")
				writeFile(d, "node/node0/cpulist", "")
				writeFile(d, "node/node0/distance", "10 17 28")
				writeFile(d, "node/node1/distance", "17 10 21")
				writeFile(d, "node/node2/distance", "28 21 10")
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if len(m.Nodes) != 2 || m.CPUs[0].Node != 0 || m.CPUs[8].Node != 1 {
					t.Errorf("nodes %v", m.Nodes)
				}
				if got := m.Distance; len(got) != 2 || got[0][1] != 21 || got[1][0] != 21 || got[0][0] != 10 {
					t.Errorf("distance %v, want [[10 21] [21 10]]", got)
				}
				for _, d := range []string{"NUMA nodes without online CPUs left out: 0", "NUMA nodes 1-2 renumbered 0-1"} {
					if !strings.Contains(s.Description, d) {
						t.Errorf("description %q lacks %q", s.Description, d)
					}
				}
			}},
		{"cache sizes differ between CPUs", "arm64-2cluster", arm,
			func(d fstest.MapFS) {
				for c := range 8 {
					size := "512K"
					if c >= 4 {
						size = "2048K"
					}
					writeFile(d, "cpu/cpu"+itoa(c)+"/cache/index2/size", size)
				}
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if s.Caches.L2KiB != 512 {
					t.Errorf("l2_kib %d, want cpu0's 512", s.Caches.L2KiB)
				}
				if !strings.Contains(s.Description, "l2 sizes differ between CPUs (512, 2048 KiB): cpu0's written") {
					t.Errorf("description %q does not say the sizes differ", s.Description)
				}
			}},
		{"package id -1", "arm64-2cluster", arm,
			func(d fstest.MapFS) {
				for c := range 8 {
					writeFile(d, "cpu/cpu"+itoa(c)+"/topology/physical_package_id", "-1")
				}
			},
			func(t *testing.T, s *Spec, m *Machine) {
				if len(m.Packages) != 1 {
					t.Errorf("%d packages, want 1", len(m.Packages))
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sys := loadTree(t, tc.tree)
			tc.damage(sys)
			s, err := HostSpec(sys, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Build(s)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			checkHostDefaults(t, s, m)
			tc.check(t, s, m)
		})
	}
}

func TestParseCacheSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"32K", 32, true}, {"1024K", 1024, true}, {"32768K", 32768, true}, {"2M", 2048, true},
		{"1G", 1 << 20, true}, {"48K\n", 48, true}, {"65536", 64, true}, {"1000", 1, true},
		{"", 0, false}, {"K", 0, false}, {"-1K", 0, false}, {"32KB", 0, false}, {"x", 0, false},
	} {
		got, err := parseCacheSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseCacheSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestHostIdentityFallbacks(t *testing.T) {
	kvm := os.DirFS(filepath.Join("testdata", "sysfs", "kvm-2vcpu-genoa"))
	arm := os.DirFS(filepath.Join("testdata", "sysfs", "arm64-2cluster"))
	cpuinfo := []byte("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\ncpu MHz\t\t: 2596.140\n\nprocessor\t: 1\ncpu MHz\t\t: 1.000\n")
	undetected := cpuidFacts{Vendor: cpuid.AMD, VendorString: "AuthenticAMD", L1D: -1, L2: -1, L3: -1}

	t.Run("cpuid complete", func(t *testing.T) {
		f := cpuidFacts{Brand: " Intel(R) Xeon(R) Platinum 8480+ ", Vendor: cpuid.Intel, Hz: 2_000_000_000, BoostHz: 3_800_000_000,
			Line: 64, L1D: 48 << 10, L2: 2 << 20, L3: 105 << 20}
		id := hostIdentity(f, "amd64", cpuinfo, kvm)
		want := HostIdentity{Vendor: "intel", Model: "Intel(R) Xeon(R) Platinum 8480+", Arch: "x86_64", FreqMHz: 2000,
			LineBytes: 64, L1dKiB: 48, L2KiB: 2048, L3KiB: 107520}
		if id.Vendor != want.Vendor || id.Model != want.Model || id.Arch != want.Arch || id.FreqMHz != want.FreqMHz ||
			id.LineBytes != want.LineBytes || id.L1dKiB != want.L1dKiB || id.L2KiB != want.L2KiB || id.L3KiB != want.L3KiB || len(id.Notes) != 0 {
			t.Errorf("got %+v, want %+v", id, want)
		}
	})
	t.Run("hypervisor: /proc/cpuinfo clock, sysfs caches", func(t *testing.T) {
		id := hostIdentity(undetected, "amd64", cpuinfo, kvm)
		if id.FreqMHz != 2596.14 || id.Model != "AMD EPYC" || id.Vendor != "amd" {
			t.Errorf("got %+v", id)
		}
		if id.LineBytes != 64 || id.L1dKiB != 32 || id.L2KiB != 1024 || id.L3KiB != 32768 {
			t.Errorf("caches not from sysfs: %+v", id)
		}
		if len(id.Notes) != 1 || !strings.Contains(id.Notes[0], "/proc/cpuinfo") {
			t.Errorf("notes %q", id.Notes)
		}
	})
	t.Run("boost clock only", func(t *testing.T) {
		f := undetected
		f.BoostHz = 3_700_000_000
		id := hostIdentity(f, "amd64", cpuinfo, kvm)
		if id.FreqMHz != 3700 || len(id.Notes) != 1 || !strings.Contains(id.Notes[0], "boost") {
			t.Errorf("got %v MHz, notes %q", id.FreqMHz, id.Notes)
		}
	})
	t.Run("cpufreq before /proc/cpuinfo", func(t *testing.T) {
		sys := fstest.MapFS{
			"cpu/online":                        {Data: []byte("2-3\n")},
			"cpu/cpu2/cpufreq/cpuinfo_max_freq": {Data: []byte("2362000\n")},
		}
		id := hostIdentity(undetected, "arm64", cpuinfo, sys)
		if id.FreqMHz != 2362 || id.Arch != "arm64" || id.Vendor != "amd" {
			t.Errorf("got %+v", id)
		}
	})
	t.Run("nothing: defaults, said so", func(t *testing.T) {
		f := cpuidFacts{Vendor: cpuid.VendorUnknown, L1D: -1, L2: -1, L3: -1}
		id := hostIdentity(f, "arm64", nil, fstest.MapFS{})
		if id.FreqMHz != defaultFreqMHz || id.Vendor != "arm" || id.Model != "unknown arm64 CPU" {
			t.Errorf("got %+v", id)
		}
		if id.LineBytes != defaultLineBytes || id.L1dKiB != defaultL1dKiB || id.L2KiB != defaultL2KiB || id.L3KiB != 0 {
			t.Errorf("caches %+v, want defaults", id)
		}
		notes := strings.Join(id.Notes, "; ")
		for _, want := range []string{"freq_mhz 2000 is a default", "l2_kib 1024 is a default", "l3_kib unknown"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes %q lack %q", notes, want)
			}
		}
	})
	t.Run("arm64 board: sysfs without sizes", func(t *testing.T) {
		f := cpuidFacts{Vendor: cpuid.ARM, L1D: -1, L2: -1, L3: -1}
		id := hostIdentity(f, "arm64", nil, arm)
		if id.L3KiB != 0 || id.L2KiB != defaultL2KiB {
			t.Errorf("got %+v", id)
		}
	})
	t.Run("model from /proc/cpuinfo", func(t *testing.T) {
		f := undetected
		f.Brand = ""
		if id := hostIdentity(f, "amd64", []byte("model name\t: Some CPU\n"), kvm); id.Model != "Some CPU" {
			t.Errorf("model %q", id.Model)
		}
	})
}

func TestVendorAndArchNames(t *testing.T) {
	for _, tc := range []struct {
		v      cpuid.Vendor
		goarch string
		want   string
	}{
		{cpuid.Intel, "amd64", "intel"}, {cpuid.AMD, "amd64", "amd"}, {cpuid.Hygon, "amd64", "amd"},
		{cpuid.VIA, "amd64", "other"}, {cpuid.VendorUnknown, "amd64", "other"},
		{cpuid.ARM, "arm64", "arm"}, {cpuid.Ampere, "arm64", "arm"}, {cpuid.Apple, "arm64", "arm"},
		{cpuid.VendorUnknown, "arm64", "arm"},
	} {
		if got := vendorName(tc.v, tc.goarch); got != tc.want {
			t.Errorf("vendorName(%v, %s) = %q, want %q", tc.v, tc.goarch, got, tc.want)
		}
	}
	for goarch, want := range map[string]string{"amd64": "x86_64", "arm64": "arm64", "riscv64": "riscv64"} {
		if got := archName(goarch); got != want {
			t.Errorf("archName(%s) = %q, want %q", goarch, got, want)
		}
	}
	for _, tc := range []struct{ vendor, arch, want string }{
		{"amd", "x86_64", "epyc-9654-2s"}, {"intel", "x86_64", "spr-2s"}, {"arm", "arm64", "hikey-8"},
		{"other", "x86_64", "spr-2s"}, {"other", "arm64", "hikey-8"},
	} {
		if got := hostPresetFor(tc.vendor, tc.arch); got != tc.want {
			t.Errorf("hostPresetFor(%s, %s) = %q, want %q", tc.vendor, tc.arch, got, tc.want)
		}
	}
}

// layoutHost is a host spec with a regular topology, for the defaults.
func layoutHost(t *testing.T, vendor, arch string, l Layout) (*Spec, *Machine) {
	t.Helper()
	cpus, err := l.expand()
	if err != nil {
		t.Fatal(err)
	}
	m := &Machine{}
	if err := m.buildTopology(cpus); err != nil {
		t.Fatal(err)
	}
	dist := make([][]int, len(m.Nodes))
	for i := range dist {
		dist[i] = make([]int, len(m.Nodes))
		for j := range dist[i] {
			dist[i][j] = 21
			if i == j {
				dist[i][j] = 10
			}
		}
	}
	s := &Spec{Name: "host", Vendor: vendor, Arch: arch, Model: "test", FreqMHz: 2000, CPUs: cpus,
		NUMADistance: dist, Caches: CacheSpec{LineBytes: 64, L1dKiB: 32, L2KiB: 1024}}
	if err := hostDefaults(s, m); err != nil {
		t.Fatal(err)
	}
	return s, m
}

func TestHostDefaultsEstimates(t *testing.T) {
	t.Run("x86 with a shared L2", func(t *testing.T) {
		// E-core modules: 4 cores behind one L2; spr-2s has no l2 figure.
		s, m := layoutHost(t, "intel", "x86_64", Layout{Sockets: 1, LLCsPerSocket: 1, CoresPerLLC: 8, CoresPerL2: 4,
			ThreadsPerCore: 1, NodesPerSocket: 1, Numbering: "linux"})
		if _, err := Build(s); err != nil {
			t.Fatal(err)
		}
		checkHostDefaults(t, s, m)
		l2 := s.Latency.L2
		if l2 == nil || l2.Value != 31.7 || !strings.Contains(l2.Source, "midway between the spr-2s preset's smt (8.0 ns) and llc (55.3 ns)") {
			t.Errorf("latency_ns.l2 = %+v", l2)
		}
		if s.Latency.SMT != nil || s.Latency.Remote != nil || s.Latency.HomeRemote != nil || s.Latency.MemRemote != nil {
			t.Errorf("classes the host lacks kept: %+v", s.Latency)
		}
		if s.HZ != 1000 {
			t.Errorf("hz %d", s.HZ)
		}
	})
	t.Run("arm64 with SMT, two sockets and nodes", func(t *testing.T) {
		s, m := layoutHost(t, "arm", "arm64", Layout{Sockets: 2, LLCsPerSocket: 2, CoresPerLLC: 4, CoresPerL2: 4,
			ThreadsPerCore: 2, NodesPerSocket: 1, Numbering: "adjacent"})
		if _, err := Build(s); err != nil {
			t.Fatal(err)
		}
		checkHostDefaults(t, s, m)
		lat := s.Latency
		for _, c := range []struct {
			name string
			v    *Sourced
			want float64
			src  string
		}{
			{"smt", lat.SMT, 10, "[E] estimate for arm: SMT siblings"},
			{"l2", lat.L2, 45, "[E] default for arm from the hikey-8 preset: [E] by analogy"},
			{"socket", lat.Socket, 150, "[E] default for arm from the hikey-8 preset:"},
			{"remote", lat.Remote, 300, "[E] estimate for arm: 2 x the hikey-8 preset's socket transfer (150.0 ns)"},
			{"home_remote", lat.HomeRemote, 150, "[E] estimate for arm: remote (300.0 ns) minus socket (150.0 ns)"},
			{"mem_remote", lat.MemRemote, 306, "[E] estimate for arm: 1.7 x mem_local (180 ns)"},
		} {
			if c.v == nil || math.Abs(c.v.Value-c.want) > 1e-9 || !strings.HasPrefix(c.v.Source, c.src) {
				t.Errorf("latency_ns.%s = %+v, want %v from %q", c.name, c.v, c.want, c.src)
			}
		}
		if s.HZ != 250 {
			t.Errorf("hz %d, want hikey-8's 250", s.HZ)
		}
	})
	t.Run("sources are rewritten, values kept", func(t *testing.T) {
		s, _ := layoutHost(t, "amd", "x86_64", Layout{Sockets: 2, LLCsPerSocket: 2, CoresPerLLC: 2, CoresPerL2: 1,
			ThreadsPerCore: 2, NodesPerSocket: 1, Numbering: "linux"})
		data, _ := PresetSpec("epyc-9654-2s")
		p, err := DecodeSpec(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := "[E] default for amd from the epyc-9654-2s preset: " + p.Latency.Remote.Source + "; run emu calibrate to measure this host"
		if s.Latency.Remote.Value != p.Latency.Remote.Value || s.Latency.Remote.Source != want {
			t.Errorf("remote = %+v, want %v %q", s.Latency.Remote, p.Latency.Remote.Value, want)
		}
		if s.Costs.Schedule.Value != p.Costs.Schedule.Value || !strings.HasSuffix(s.Costs.Schedule.Source, p.Costs.Schedule.Source+"; run emu calibrate to measure this host") {
			t.Errorf("schedule = %+v", s.Costs.Schedule)
		}
		// The preset itself is untouched (PresetSpec hands out its bytes).
		if strings.Contains(string(data), "default for amd") {
			t.Error("preset modified")
		}
	})
}

func TestDetectHost(t *testing.T) {
	sys := os.DirFS(sysRoot)
	online, err := readCPUList(sys, "cpu/online")
	if err != nil {
		t.Skipf("no readable sysfs here: %v", err)
	}
	m, err := DetectHost()
	if err != nil {
		t.Fatal(err)
	}
	if m.NumCPUs() != len(online) {
		t.Errorf("%d CPUs, but cpu/online lists %d", m.NumCPUs(), len(online))
	}
	if len(m.LLCs) < 1 || len(m.LLCs) > m.NumCPUs() {
		t.Errorf("%d LLCs", len(m.LLCs))
	}
	if m.Name != "host" || !strings.HasPrefix(m.Description, "detected: ") {
		t.Errorf("name %q, description %q", m.Name, m.Description)
	}
	t.Logf("%s", m.Description)
	// The development VM (kvm-2vcpu-genoa): 2 CPUs sharing one L3.
	if l3, err := readString(sys, "cpu/cpu0/cache/index3/shared_cpu_list"); err == nil && l3 == "0-1" && len(online) == 2 {
		if m.NumCPUs() != 2 || len(m.LLCs) != 1 {
			t.Errorf("dev VM: %d CPUs, %d LLCs; want 2, 1", m.NumCPUs(), len(m.LLCs))
		}
	}
	// Load("host") goes through DetectHost.
	m2, err := Load(HostPreset, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m2.NumCPUs() != m.NumCPUs() {
		t.Errorf("Load(host): %d CPUs, DetectHost: %d", m2.NumCPUs(), m.NumCPUs())
	}
}

func TestCPUIDIdentity(t *testing.T) {
	id := CPUIDIdentity()
	if id.Arch == "" || id.Vendor == "" || id.Model == "" {
		t.Errorf("incomplete identity %+v", id)
	}
	if !(id.FreqMHz > 0) || id.LineBytes <= 0 || id.L1dKiB <= 0 || id.L2KiB <= 0 || id.L3KiB < 0 {
		t.Errorf("identity %+v: clock and caches must be filled", id)
	}
	t.Logf("%+v", id)
}
