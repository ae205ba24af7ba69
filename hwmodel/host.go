// Host detection: the machine this process runs on, as a Spec.
//
// Two sources, for two kinds of fact. CPUID (github.com/klauspost/cpuid)
// gives the identity: vendor, brand string, clock, line and cache sizes.
// sysfs (/sys/devices/system) gives the sharing map: which CPUs are SMT
// siblings, share an L2, share the last-level cache, sit in one package or
// NUMA node. CPUID cannot give that map. Its counts (leaves 4, 0xB, 0x1F,
// 0x8000001E) describe the package of the CPU that executes the instruction,
// not the system; under a hypervisor they describe whatever virtual CPU the
// VMM chose to present, which need not match how the vCPUs are really
// placed; its APIC IDs are not Linux CPU numbers; and it knows nothing of
// NUMA nodes, offline CPUs or SLIT distances. sysfs is what the kernel
// built its own topology masks and sched domains from (topology_*_mask,
// cpu_coregroup_mask = the LLC, cpumask_of_node), so reading it gives the
// machine as the scheduler sees it, which is what rqemu emulates.
//
// Latencies and kernel-op costs cannot be read from either: they come from
// the closest built-in preset (host_defaults.go) until `emu calibrate`
// measures them.

package hwmodel

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/cpuid/v2"
)

// sysRoot is where HostSpec's tree lives on a running Linux system.
const sysRoot = "/sys/devices/system"

// HostIdentity is what CPUID (with fallbacks) says about the host's CPUs:
// everything but the topology.
type HostIdentity struct {
	Vendor  string // intel, amd, arm, other
	Model   string // brand string, e.g. "AMD EPYC 9654 96-Core Processor"
	Arch    string // x86_64, arm64 (runtime.GOARCH for anything else)
	FreqMHz float64
	// Cache geometry as CacheSpec has it: line size in bytes, sizes in KiB
	// per instance. 0 means unknown, except L3KiB where 0 also means "no
	// L3"; HostSpec fills unknown values from the sysfs tree it is given.
	LineBytes, L1dKiB, L2KiB, L3KiB int
	// KernelHZ is the running kernel's CONFIG_HZ where its configuration
	// says (kernelHZ), 0 when unknown (the preset's hz then stands).
	KernelHZ int
	// Notes say which values are fallbacks or defaults rather than what
	// CPUID reported; HostSpec appends them to the spec's description.
	Notes []string
}

// Defaults for what neither CPUID nor sysfs tells.
const (
	defaultFreqMHz   = 2000
	defaultLineBytes = 64
	defaultL1dKiB    = 32
	defaultL2KiB     = 1024
)

// cpuidFacts are the CPUID values CPUIDIdentity uses, separated from the
// global cpuid.CPU so the fallbacks can be tested.
type cpuidFacts struct {
	Brand        string
	Vendor       cpuid.Vendor
	VendorString string
	Hz, BoostHz  int64
	Line         int
	L1D, L2, L3  int // bytes; -1 or 0 when undetected
}

// CPUIDIdentity describes the host's CPUs from CPUID. Values CPUID does
// not give (it reports no clock under most hypervisors, and little on
// arm64) fall back to /proc/cpuinfo, cpufreq and the sysfs cache
// description, then to defaults that the Notes name.
func CPUIDIdentity() HostIdentity {
	c := &cpuid.CPU
	f := cpuidFacts{
		Brand: c.BrandName, Vendor: c.VendorID, VendorString: c.VendorString,
		Hz: c.Hz, BoostHz: c.BoostFreq, Line: c.CacheLine,
		L1D: c.Cache.L1D, L2: c.Cache.L2, L3: c.Cache.L3,
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo") // absent off Linux: no fallback
	id := hostIdentity(f, runtime.GOARCH, cpuinfo, os.DirFS(sysRoot))
	id.KernelHZ, id.Notes = runningKernelHZ(id.Notes)
	return id
}

func hostIdentity(f cpuidFacts, goarch string, cpuinfo []byte, sys fs.FS) HostIdentity {
	id := HostIdentity{Arch: archName(goarch), Vendor: vendorName(f.Vendor, goarch)}

	id.Model = strings.TrimSpace(f.Brand)
	if id.Model == "" {
		id.Model = cpuinfoField(cpuinfo, "model name")
	}
	if id.Model == "" {
		id.Model = strings.TrimSpace(f.VendorString)
	}
	if id.Model == "" {
		id.Model = "unknown " + id.Arch + " CPU"
	}

	// The spec wants the sustained all-core clock. CPUID's Hz is the base
	// clock (leaf 0x16, or the brand string), a lower bound of it; the
	// boost clock is an upper bound. Under a hypervisor both are usually
	// 0, and /proc/cpuinfo's "cpu MHz" is then the TSC rate the hypervisor
	// advertises. On bare metal with frequency scaling "cpu MHz" is the
	// current (possibly idle) clock, so cpufreq's maximum comes first.
	switch {
	case f.Hz > 0:
		id.FreqMHz = float64(f.Hz) / 1e6
	case f.BoostHz > 0:
		id.FreqMHz = float64(f.BoostHz) / 1e6
		id.Notes = append(id.Notes, "freq_mhz is cpuid's boost clock (it gives no base clock)")
	default:
		if khz := cpufreqMaxKHz(sys); khz > 0 {
			id.FreqMHz = khz / 1000
			id.Notes = append(id.Notes, "freq_mhz from cpufreq cpuinfo_max_freq (cpuid gives no clock)")
		} else if mhz, err := strconv.ParseFloat(cpuinfoField(cpuinfo, "cpu MHz"), 64); err == nil && mhz > 0 {
			id.FreqMHz = mhz
			id.Notes = append(id.Notes, "freq_mhz from /proc/cpuinfo cpu MHz (cpuid gives no clock, as under a hypervisor)")
		} else {
			id.FreqMHz = defaultFreqMHz
			id.Notes = append(id.Notes, fmt.Sprintf("freq_mhz %d is a default: neither cpuid, cpufreq nor /proc/cpuinfo gives a clock", defaultFreqMHz))
		}
	}

	kib := func(bytes int) int {
		if bytes <= 0 {
			return 0
		}
		return (bytes + 1023) / 1024
	}
	id.LineBytes = max(f.Line, 0)
	id.L1dKiB, id.L2KiB, id.L3KiB = kib(f.L1D), kib(f.L2), kib(f.L3)
	var caches []sysCache
	if online, err := readCPUList(sys, "cpu/online"); err == nil && len(online) > 0 {
		caches, _ = readCaches(sys, online[0])
	}
	id.Notes = append(id.Notes, completeCaches(&id, caches)...)
	return id
}

func archName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "arm64"
	}
	return goarch // Build rejects it, naming it
}

// vendorName maps CPUID's vendor to the spec's. Hygon's Dhyana is a Zen 1
// licence, so it is amd. On arm64 the vendor is the ISA's: whoever
// designed the core (ARM, Ampere, Apple, Qualcomm...), the coherence
// defaults that fit it best are the arm preset's.
func vendorName(v cpuid.Vendor, goarch string) string {
	switch {
	case v == cpuid.Intel:
		return "intel"
	case v == cpuid.AMD || v == cpuid.Hygon:
		return "amd"
	case goarch == "arm64":
		return "arm"
	}
	return "other"
}

// cpuinfoField returns the first value of key in /proc/cpuinfo's text.
func cpuinfoField(cpuinfo []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// cpufreqMaxKHz reads the first online CPU's cpufreq maximum, 0 if none.
func cpufreqMaxKHz(sys fs.FS) float64 {
	online, err := readCPUList(sys, "cpu/online")
	if err != nil || len(online) == 0 {
		return 0
	}
	s, err := readString(sys, fmt.Sprintf("cpu/cpu%d/cpufreq/cpuinfo_max_freq", online[0]))
	if err != nil {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

// completeCaches fills the unknown cache values of id from one CPU's sysfs
// caches, then from defaults, and returns notes for the defaults used.
func completeCaches(id *HostIdentity, caches []sysCache) []string {
	var notes []string
	find := func(level int) *sysCache {
		for i := range caches {
			if c := &caches[i]; c.level == level && c.typ != "Instruction" {
				return c
			}
		}
		return nil
	}
	if id.LineBytes <= 0 {
		for _, c := range caches {
			if c.typ != "Instruction" && c.lineBytes > 0 {
				id.LineBytes = c.lineBytes
				break
			}
		}
	}
	if id.LineBytes <= 0 {
		id.LineBytes = defaultLineBytes
		notes = append(notes, fmt.Sprintf("line_bytes %d is a default", defaultLineBytes))
	}
	if id.L1dKiB <= 0 {
		if c := find(1); c != nil {
			id.L1dKiB = c.sizeKiB
		}
	}
	if id.L1dKiB <= 0 {
		id.L1dKiB = defaultL1dKiB
		notes = append(notes, fmt.Sprintf("l1d_kib %d is a default", defaultL1dKiB))
	}
	if id.L2KiB <= 0 {
		if c := find(2); c != nil {
			id.L2KiB = c.sizeKiB
		}
	}
	if id.L2KiB <= 0 {
		id.L2KiB = defaultL2KiB
		notes = append(notes, fmt.Sprintf("l2_kib %d is a default", defaultL2KiB))
	}
	if id.L3KiB <= 0 {
		id.L3KiB = 0
		if c := find(3); c != nil {
			id.L3KiB = c.sizeKiB
			if c.sizeKiB == 0 {
				notes = append(notes, "l3_kib unknown (sysfs gives no size), 0 written")
			}
		} else if len(caches) == 0 {
			notes = append(notes, "l3_kib unknown (no cache description), 0 written")
		}
	}
	if len(notes) > 0 {
		notes[len(notes)-1] += " (neither cpuid nor sysfs gives a size)"
		if len(notes) > 1 {
			notes = []string{strings.Join(notes, ", ")}
		}
	}
	return notes
}

// DetectHost describes the machine this process runs on: topology from
// /sys/devices/system, identity from CPUID, latencies and costs from the
// closest preset (see hostDefaults).
func DetectHost() (*Machine, error) {
	s, err := HostSpec(os.DirFS(sysRoot), CPUIDIdentity())
	if err != nil {
		return nil, fmt.Errorf("detecting the host from %s: %w", sysRoot, err)
	}
	m, err := Build(s)
	if err != nil {
		return nil, fmt.Errorf("detected host: %w", err)
	}
	return m, nil
}

// SysfsError is a file of the sysfs tree that HostSpec could not use.
type SysfsError struct {
	// File is relative to the tree's root (/sys/devices/system), e.g.
	// "cpu/cpu3/topology/core_id".
	File string
	Err  error
}

func (e *SysfsError) Error() string { return "sysfs " + e.File + ": " + e.Err.Error() }
func (e *SysfsError) Unwrap() error { return e.Err }

func sysfsErr(file, format string, args ...any) error {
	return &SysfsError{File: file, Err: fmt.Errorf(format, args...)}
}

// readString reads a sysfs attribute without its trailing newline.
func readString(sys fs.FS, file string) (string, error) {
	data, err := fs.ReadFile(sys, file)
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fs.ErrNotExist // "file does not exist", on every OS
		case errors.As(err, &pe):
			err = pe.Err // the path is already in the SysfsError
		}
		return "", &SysfsError{File: file, Err: err}
	}
	return strings.TrimSpace(string(data)), nil
}

func readInt(sys fs.FS, file string) (int, error) {
	s, err := readString(sys, file)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, sysfsErr(file, "%q is not an integer", s)
	}
	return v, nil
}

func readCPUList(sys fs.FS, file string) ([]int, error) {
	s, err := readString(sys, file)
	if err != nil {
		return nil, err
	}
	list, err := ParseCPUList(s)
	if err != nil {
		return nil, &SysfsError{File: file, Err: err}
	}
	return list, nil
}

func exists(sys fs.FS, file string) bool {
	_, err := fs.Stat(sys, file)
	return err == nil
}

// sysCache is one cpuN/cache/indexM directory.
type sysCache struct {
	dir       string // "cpu/cpu0/cache/index2"
	level     int
	typ       string // Data, Instruction, Unified
	shared    []int  // shared_cpu_list, sysfs numbering
	sizeKiB   int    // 0 when the size attribute is absent
	lineBytes int    // 0 when coherency_line_size is absent
}

// readCaches reads cpu's cache directories in index order. A CPU without
// a cache directory (some VMs, firmware without cache tables) has none.
// level, type and shared_cpu_list are required; the kernel hides size and
// coherency_line_size when firmware does not give them
// (drivers/base/cacheinfo.c: cache_default_attrs_is_visible()).
func readCaches(sys fs.FS, cpu int) ([]sysCache, error) {
	dir := fmt.Sprintf("cpu/cpu%d/cache", cpu)
	entries, err := fs.ReadDir(sys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &SysfsError{File: dir, Err: err}
	}
	var idx []int
	for _, e := range entries {
		if n, ok := numbered(e.Name(), "index"); ok {
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	var out []sysCache
	for _, i := range idx {
		c := sysCache{dir: fmt.Sprintf("%s/index%d", dir, i)}
		if c.level, err = readInt(sys, c.dir+"/level"); err != nil {
			return nil, err
		}
		if c.level < 1 || c.level > 8 {
			return nil, sysfsErr(c.dir+"/level", "cache level %d out of range", c.level)
		}
		if c.typ, err = readString(sys, c.dir+"/type"); err != nil {
			return nil, err
		}
		switch c.typ {
		case "Data", "Instruction", "Unified":
		default:
			return nil, sysfsErr(c.dir+"/type", "%q is not a cache type (Data, Instruction, Unified)", c.typ)
		}
		if c.shared, err = readCPUList(sys, c.dir+"/shared_cpu_list"); err != nil {
			return nil, err
		}
		if exists(sys, c.dir+"/size") {
			s, err := readString(sys, c.dir+"/size")
			if err != nil {
				return nil, err
			}
			if c.sizeKiB, err = parseCacheSize(s); err != nil {
				return nil, &SysfsError{File: c.dir + "/size", Err: err}
			}
		}
		if exists(sys, c.dir+"/coherency_line_size") {
			if c.lineBytes, err = readInt(sys, c.dir+"/coherency_line_size"); err != nil {
				return nil, err
			}
			if c.lineBytes < 0 {
				return nil, sysfsErr(c.dir+"/coherency_line_size", "negative line size %d", c.lineBytes)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// numbered parses names like "index3" or "node12".
func numbered(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return 0, false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

// parseCacheSize parses a cache size attribute into KiB. The kernel prints
// "%uK" (drivers/base/cacheinfo.c: size_show(), size >> 10); "M" and "G"
// suffixes and plain byte counts are accepted too.
func parseCacheSize(s string) (int, error) {
	s = strings.TrimSpace(s)
	mult, unit := 1, s[max(len(s)-1, 0):]
	num := s
	switch unit {
	case "K", "k":
		num = s[:len(s)-1]
	case "M", "m":
		mult, num = 1024, s[:len(s)-1]
	case "G", "g":
		mult, num = 1024*1024, s[:len(s)-1]
	default:
		mult = 0 // bytes
	}
	v, err := strconv.Atoi(num)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a cache size (like 32K, 1024K or 2M)", s)
	}
	if mult == 0 {
		return (v + 1023) / 1024, nil
	}
	if v > (1<<40)/mult {
		return 0, fmt.Errorf("cache size %q too large", s)
	}
	return v * mult, nil
}

// hostCPU is one online CPU as sysfs describes it, in sysfs numbering.
type hostCPU struct {
	cpu, pkg, coreID  int
	pkgFile, coreFile string
	sets              [3][]int  // SMT siblings, L2, LLC (lvSiblings...)
	files             [3]string // the file each set was read from
	caches            []sysCache
}

// The sharing levels HostSpec reads, innermost first.
const (
	lvSiblings = iota
	lvL2
	lvLLC
)

var levelNames = [3]string{"SMT sibling", "L2", "LLC"}

// HostSpec describes a machine from its sysfs tree (sys is rooted at
// /sys/devices/system) and its identity, as an explicit per-CPU Spec named
// "host" with the latencies and costs of the closest preset (hostDefaults).
//
// Only online CPUs (cpu/online) are described; if they are not 0..n-1 they
// are renumbered densely in order, and the description says so. A CPU's L2
// is the shared_cpu_list of its level-2 data or unified cache (else its
// cluster_cpus_list, else its SMT siblings); its LLC is that of its
// highest-level cache of level 2 or more (the cluster L2 on arm64 boards
// without L3; without an L2 or L3 description, its package). NUMA nodes
// come from node/node*/cpulist and the SLIT from node/node*/distance
// (without a node directory, one node 0). Cache sizes the identity lacks
// come from the first online CPU's cache description. Errors name the
// sysfs file that is missing or malformed.
func HostSpec(sys fs.FS, id HostIdentity) (*Spec, error) {
	online, err := readCPUList(sys, "cpu/online")
	if err != nil {
		return nil, err
	}
	if len(online) == 0 {
		return nil, sysfsErr("cpu/online", "no online CPUs")
	}
	if len(online) > 8192 {
		return nil, sysfsErr("cpu/online", "%d CPUs is more than the 8192 supported", len(online))
	}
	var notes []string
	isOnline := make(map[int]bool, len(online))
	newID := make(map[int]int, len(online))
	for i, c := range online {
		isOnline[c] = true
		newID[c] = i
	}
	if online[len(online)-1] != len(online)-1 {
		notes = append(notes, fmt.Sprintf("online CPUs %s renumbered 0-%d (offline CPUs left out)",
			FormatCPUList(online), len(online)-1))
	}

	byCPU := make(map[int]*hostCPU, len(online))
	cpus := make([]hostCPU, len(online))
	for i, c := range online {
		h := &cpus[i]
		byCPU[c] = h
		if err := readHostCPU(sys, c, h); err != nil {
			return nil, err
		}
	}
	// Without a shared-cache description the LLC is the package, as the
	// kernel's MC domain then spans it.
	noCaches := 0
	for i := range cpus {
		h := &cpus[i]
		if h.files[lvLLC] == "" {
			noCaches++
			h.files[lvLLC] = h.pkgFile
			for j := range cpus {
				if cpus[j].pkg == h.pkg {
					h.sets[lvLLC] = append(h.sets[lvLLC], cpus[j].cpu)
				}
			}
		}
		// The kernel clears offline CPUs from topology and cache masks,
		// but a list read during a hotplug may still name one.
		for lv := range h.sets {
			h.sets[lv] = slices.DeleteFunc(h.sets[lv], func(c int) bool { return !isOnline[c] })
		}
	}
	if noCaches > 0 {
		notes = append(notes, fmt.Sprintf("%d CPUs have no L2 or L3 in sysfs: their package is taken as their LLC", noCaches))
	}
	if err := checkHostSets(online, byCPU); err != nil {
		return nil, err
	}

	nodeOf, dist, nodeNotes, err := readNodes(sys, online, isOnline)
	if err != nil {
		return nil, err
	}
	notes = append(notes, nodeNotes...)

	renum := func(list []int) string {
		out := make([]int, len(list))
		for i, c := range list {
			out[i] = newID[c]
		}
		return FormatCPUList(out)
	}
	vendor := id.Vendor
	switch vendor {
	case "intel", "amd", "arm", "other":
	default:
		vendor = "other"
	}
	model := id.Model
	if model == "" {
		model = "unknown"
	}
	s := &Spec{
		Name: HostPreset, Vendor: vendor, Model: model, Arch: id.Arch,
		FreqMHz: id.FreqMHz, NUMADistance: dist,
	}
	if s.FreqMHz <= 0 {
		s.FreqMHz = defaultFreqMHz
		notes = append(notes, fmt.Sprintf("freq_mhz %d is a default", defaultFreqMHz))
	}
	for i, c := range online {
		h := byCPU[c]
		s.CPUs = append(s.CPUs, CPUSpec{
			CPU: i, Package: h.pkg, Core: h.coreID,
			Siblings: renum(h.sets[lvSiblings]), L2: renum(h.sets[lvL2]), LLC: renum(h.sets[lvLLC]),
			Node: nodeOf[c],
		})
	}

	// Cache sizes: the identity's, else the first CPU's sysfs values.
	before := id
	notes = append(notes, completeCaches(&id, cpus[0].caches)...)
	for _, lc := range []struct {
		name  string
		level int
		had   int
	}{{"l1d", 1, before.L1dKiB}, {"l2", 2, before.L2KiB}, {"l3", 3, before.L3KiB}} {
		if lc.had > 0 {
			continue
		}
		var sizes []int
		for i := range cpus {
			for _, c := range cpus[i].caches {
				if c.level == lc.level && c.typ != "Instruction" && c.sizeKiB > 0 && !slices.Contains(sizes, c.sizeKiB) {
					sizes = append(sizes, c.sizeKiB)
				}
			}
		}
		if len(sizes) > 1 {
			slices.Sort(sizes)
			list := make([]string, len(sizes))
			for i, v := range sizes {
				list[i] = strconv.Itoa(v)
			}
			notes = append(notes, fmt.Sprintf("%s sizes differ between CPUs (%s KiB): cpu%d's written",
				lc.name, strings.Join(list, ", "), online[0]))
		}
	}
	s.Caches = CacheSpec{LineBytes: id.LineBytes, L1dKiB: id.L1dKiB, L2KiB: id.L2KiB, L3KiB: id.L3KiB}

	// The groups, for the description and for choosing the defaults.
	m := &Machine{}
	if err := m.buildTopology(s.CPUs); err != nil {
		return nil, fmt.Errorf("sysfs topology: %w", err)
	}
	desc := fmt.Sprintf("detected: %s, %d CPUs (%s, %s)", model, len(online),
		plural(len(m.Packages), "socket"), plural(len(m.LLCs), "LLC"))
	if all := append(slices.Clone(id.Notes), notes...); len(all) > 0 {
		desc += "; " + strings.Join(all, "; ")
	}
	s.Description = desc
	if err := hostDefaults(s, m); err != nil {
		return nil, err
	}
	if id.KernelHZ > 0 {
		s.HZ = id.KernelHZ
	}
	return s, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// readHostCPU reads one online CPU's topology and caches.
func readHostCPU(sys fs.FS, c int, h *hostCPU) error {
	var err error
	h.cpu = c
	topo := fmt.Sprintf("cpu/cpu%d/topology/", c)
	h.pkgFile, h.coreFile = topo+"physical_package_id", topo+"core_id"
	if h.pkg, err = readInt(sys, h.pkgFile); err != nil {
		return err
	}
	if h.pkg < 0 {
		// arch_topology leaves -1 where firmware names no package;
		// the CPUs then form one package.
		h.pkg = 0
	}
	if h.coreID, err = readInt(sys, h.coreFile); err != nil {
		return err
	}
	if h.coreID < 0 {
		return sysfsErr(h.coreFile, "core id %d is negative", h.coreID)
	}
	h.files[lvSiblings] = topo + "thread_siblings_list"
	if !exists(sys, h.files[lvSiblings]) && exists(sys, topo+"core_cpus_list") {
		h.files[lvSiblings] = topo + "core_cpus_list" // the newer name
	}
	if h.sets[lvSiblings], err = readCPUList(sys, h.files[lvSiblings]); err != nil {
		return err
	}
	if h.caches, err = readCaches(sys, c); err != nil {
		return err
	}
	// L2: the level-2 data or unified cache; without one the cluster (on
	// x86 the kernel builds it from the L2 sharing, on arm64 from
	// firmware), then the core. LLC: the highest-level data or unified
	// cache of level 2 or more (a description with only L1s is treated
	// as none: HostSpec then takes the package).
	var llc *sysCache
	for j := range h.caches {
		cc := &h.caches[j]
		if cc.typ == "Instruction" {
			continue
		}
		if cc.level == 2 && h.files[lvL2] == "" {
			h.files[lvL2], h.sets[lvL2] = cc.dir+"/shared_cpu_list", slices.Clone(cc.shared)
		}
		if cc.level >= 2 && (llc == nil || cc.level > llc.level) {
			llc = cc
		}
	}
	if h.files[lvL2] == "" {
		if f := topo + "cluster_cpus_list"; exists(sys, f) {
			h.files[lvL2] = f
			if h.sets[lvL2], err = readCPUList(sys, f); err != nil {
				return err
			}
		} else {
			h.files[lvL2], h.sets[lvL2] = h.files[lvSiblings], slices.Clone(h.sets[lvSiblings])
		}
	}
	if llc != nil {
		h.files[lvLLC], h.sets[lvLLC] = llc.dir+"/shared_cpu_list", slices.Clone(llc.shared)
	}
	return nil
}

// checkHostSets checks what Build would, but names the sysfs files: every
// sharing list contains its CPU, is the same for all its members (so is
// symmetric and puts no CPU in two domains), and nests in the next level;
// SMT siblings share package and core; an LLC lies in one package.
func checkHostSets(online []int, byCPU map[int]*hostCPU) error {
	for lv := lvSiblings; lv <= lvLLC; lv++ {
		// Interned sets, so that comparing two is O(1).
		key := make(map[int]int, len(online))
		ids := map[string]int{}
		for _, c := range online {
			k := FormatCPUList(byCPU[c].sets[lv])
			if _, ok := ids[k]; !ok {
				ids[k] = len(ids)
			}
			key[c] = ids[k]
		}
		for _, c := range online {
			h := byCPU[c]
			set := h.sets[lv]
			if _, ok := slices.BinarySearch(set, c); !ok {
				return sysfsErr(h.files[lv], "%q (online CPUs only) does not contain cpu%d itself", FormatCPUList(set), c)
			}
			for _, o := range set {
				oh := byCPU[o]
				if key[o] == key[c] {
					continue
				}
				if lv == lvSiblings {
					return sysfsErr(h.files[lv], "sibling list %q of cpu%d is not symmetric: cpu%d's (%s) is %q",
						FormatCPUList(set), c, o, oh.files[lv], FormatCPUList(oh.sets[lv]))
				}
				return sysfsErr(h.files[lv], "cpu%d is in two %s domains: %q here and %q in %s",
					o, levelNames[lv], FormatCPUList(set), FormatCPUList(oh.sets[lv]), oh.files[lv])
			}
			if lv > lvSiblings && !isSubset(h.sets[lv-1], set) {
				return sysfsErr(h.files[lv], "%s set %q of cpu%d does not contain its %s set %q (%s)",
					levelNames[lv], FormatCPUList(set), c, levelNames[lv-1], FormatCPUList(h.sets[lv-1]), h.files[lv-1])
			}
		}
	}
	for _, c := range online {
		h := byCPU[c]
		for _, o := range h.sets[lvSiblings] {
			if oh := byCPU[o]; oh.pkg != h.pkg || oh.coreID != h.coreID {
				return sysfsErr(h.files[lvSiblings], "SMT siblings cpu%d and cpu%d differ in physical_package_id/core_id (%d/%d vs %d/%d)",
					c, o, h.pkg, h.coreID, oh.pkg, oh.coreID)
			}
		}
		for _, o := range h.sets[lvLLC] {
			if oh := byCPU[o]; oh.pkg != h.pkg {
				return sysfsErr(h.files[lvLLC], "LLC spans packages %d (cpu%d) and %d (cpu%d); an LLC must lie within one package",
					h.pkg, c, oh.pkg, o)
			}
		}
	}
	return nil
}

// readNodes maps each online CPU to a dense NUMA node id and returns the
// SLIT between the nodes that have online CPUs. Without a node directory
// (CONFIG_NUMA=n) there is one node. The distance rows have one entry per
// node directory (node_read_distance() prints one per online node).
func readNodes(sys fs.FS, online []int, isOnline map[int]bool) (map[int]int, [][]int, []string, error) {
	nodeOf := make(map[int]int, len(online))
	entries, err := fs.ReadDir(sys, "node")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil, &SysfsError{File: "node", Err: err}
	}
	var ids []int
	for _, e := range entries {
		if n, ok := numbered(e.Name(), "node"); ok {
			ids = append(ids, n)
		}
	}
	sort.Ints(ids)
	if len(ids) == 0 {
		for _, c := range online {
			nodeOf[c] = 0
		}
		return nodeOf, [][]int{{10}}, nil, nil
	}

	rows := make([][]int, len(ids))
	members := make([][]int, len(ids))
	owner := map[int]int{}
	for i, nid := range ids {
		dir := fmt.Sprintf("node/node%d", nid)
		list, err := readCPUList(sys, dir+"/cpulist")
		if err != nil {
			return nil, nil, nil, err
		}
		for _, c := range list {
			if !isOnline[c] {
				continue
			}
			if prev, dup := owner[c]; dup {
				return nil, nil, nil, sysfsErr(dir+"/cpulist", "cpu%d is also in node/node%d/cpulist", c, prev)
			}
			owner[c] = nid
			members[i] = append(members[i], c)
		}
		s, err := readString(sys, dir+"/distance")
		if err != nil {
			return nil, nil, nil, err
		}
		fields := strings.Fields(s)
		if len(fields) != len(ids) {
			return nil, nil, nil, sysfsErr(dir+"/distance", "%q has %d entries but there are %d node directories", s, len(fields), len(ids))
		}
		rows[i] = make([]int, len(fields))
		for j, f := range fields {
			if rows[i][j], err = strconv.Atoi(f); err != nil {
				return nil, nil, nil, sysfsErr(dir+"/distance", "%q is not a distance", f)
			}
		}
	}
	for _, c := range online {
		if _, ok := owner[c]; !ok {
			return nil, nil, nil, sysfsErr("node/node*/cpulist", "online cpu%d is in no node", c)
		}
	}

	var keep []int // indexes into ids of nodes with online CPUs
	var dropped []int
	for i := range ids {
		if len(members[i]) > 0 {
			keep = append(keep, i)
		} else {
			dropped = append(dropped, ids[i])
		}
	}
	dist := make([][]int, len(keep))
	renumbered := false
	for a, i := range keep {
		if ids[i] != a {
			renumbered = true
		}
		for _, c := range members[i] {
			nodeOf[c] = a
		}
		dist[a] = make([]int, len(keep))
		for b, j := range keep {
			v := rows[i][j]
			file := fmt.Sprintf("node/node%d/distance", ids[i])
			if a == b && v != 10 {
				return nil, nil, nil, sysfsErr(file, "local distance is %d, not 10", v)
			}
			if a != b && (v <= 10 || v > 254) {
				return nil, nil, nil, sysfsErr(file, "distance %d to node%d out of range (11..254)", v, ids[j])
			}
			dist[a][b] = v
		}
	}
	var notes []string
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("NUMA nodes without online CPUs left out: %s", FormatCPUList(dropped)))
	}
	if renumbered {
		kept := make([]int, len(keep))
		for a, i := range keep {
			kept[a] = ids[i]
		}
		notes = append(notes, fmt.Sprintf("NUMA nodes %s renumbered 0-%d", FormatCPUList(kept), len(keep)-1))
	}
	return nodeOf, dist, notes, nil
}
