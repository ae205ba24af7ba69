package hwmodel

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Build validates a spec and returns the machine it describes. Every
// problem is reported as a *SpecError naming the field.
func Build(s *Spec) (*Machine, error) {
	if s.Name == "" {
		return nil, specErr("name", "required")
	}
	for _, f := range []struct{ name, v string }{{"name", s.Name}, {"description", s.Description}, {"model", s.Model}} {
		if strings.IndexFunc(f.v, unicode.IsControl) >= 0 {
			return nil, specErr(f.name, "%q holds a control character (allowed: printable text on one line)", f.v)
		}
	}
	// Written so that NaN fails: every comparison with it is false. At
	// least 1 MHz keeps every cycles-to-ns conversion (CyclesToNS) of a
	// cost of at most MaxSourced cycles under 1e10 ns.
	if !(s.FreqMHz >= 1 && s.FreqMHz <= 10000) {
		return nil, specErr("freq_mhz", "%v out of range (allowed: 1 to 10000 MHz)", s.FreqMHz)
	}
	if !(s.FreqRefMHz == 0 || s.FreqRefMHz >= 1 && s.FreqRefMHz <= 10000) {
		return nil, specErr("freq_ref_mhz", "%v out of range (allowed: 1 to 10000 MHz, or 0: freq_mhz)", s.FreqRefMHz)
	}
	switch s.HZ {
	case 100, 250, 300, 1000:
	default:
		return nil, specErr("hz", "%d is not a CONFIG_HZ value (allowed: 100, 250, 300, 1000)", s.HZ)
	}
	switch s.Arch {
	case "x86_64", "arm64":
	default:
		return nil, specErr("arch", "%q unknown (allowed: x86_64, arm64)", s.Arch)
	}
	switch s.Vendor {
	case "intel", "amd", "arm", "other":
	default:
		return nil, specErr("vendor", "%q unknown (allowed: intel, amd, arm, other)", s.Vendor)
	}

	cpus := s.CPUs
	switch {
	case s.Layout != nil && len(s.CPUs) > 0:
		return nil, specErr("layout", "give either layout or cpus, not both")
	case s.Layout != nil:
		var err error
		if cpus, err = s.Layout.expand(); err != nil {
			return nil, err
		}
	case len(s.CPUs) == 0:
		return nil, specErr("cpus", "required (or layout)")
	}

	m := &Machine{
		Name: s.Name, Description: s.Description, Vendor: s.Vendor, Model: s.Model,
		Arch: s.Arch, FreqMHz: s.FreqMHz, HZ: s.HZ, Caches: s.Caches, Spec: s,
		FreqScale: freqScale(s.FreqMHz, s.FreqRefMHz),
	}
	if err := m.buildTopology(cpus); err != nil {
		return nil, err
	}
	if err := m.buildDistance(s.NUMADistance); err != nil {
		return nil, err
	}
	if err := checkCaches(&s.Caches); err != nil {
		return nil, err
	}
	if err := m.buildLatency(&s.Latency); err != nil {
		return nil, err
	}
	if err := m.buildCosts(&s.Costs); err != nil {
		return nil, err
	}
	return m, nil
}

// expand turns a regular layout into per-CPU records.
func (l *Layout) expand() ([]CPUSpec, error) {
	for _, f := range []struct {
		name string
		v    int
		max  int
	}{
		{"sockets", l.Sockets, 64},
		{"llcs_per_socket", l.LLCsPerSocket, 256},
		{"cores_per_llc", l.CoresPerLLC, 1024},
		{"cores_per_l2", l.CoresPerL2, 1024},
		{"threads_per_core", l.ThreadsPerCore, 8},
		{"nodes_per_socket", l.NodesPerSocket, 64},
	} {
		if f.v < 1 || f.v > f.max {
			return nil, specErr("layout."+f.name, "%d out of range [1, %d]", f.v, f.max)
		}
	}
	if l.CoresPerLLC%l.CoresPerL2 != 0 {
		return nil, specErr("layout.cores_per_l2", "%d does not divide cores_per_llc %d", l.CoresPerL2, l.CoresPerLLC)
	}
	if l.LLCsPerSocket%l.NodesPerSocket != 0 {
		return nil, specErr("layout.nodes_per_socket", "%d does not divide llcs_per_socket %d (a node holds whole LLCs)", l.NodesPerSocket, l.LLCsPerSocket)
	}
	coresPerSocket := l.LLCsPerSocket * l.CoresPerLLC
	ncores := l.Sockets * coresPerSocket
	n := ncores * l.ThreadsPerCore
	if n > 8192 {
		return nil, specErr("layout", "%d CPUs is more than the 8192 supported", n)
	}
	// cpuOf returns the Linux CPU number of thread t of global core c.
	var cpuOf func(c, t int) int
	switch l.Numbering {
	case "linux":
		cpuOf = func(c, t int) int { return t*ncores + c }
	case "adjacent":
		cpuOf = func(c, t int) int { return c*l.ThreadsPerCore + t }
	default:
		return nil, specErr("layout.numbering", "%q unknown (allowed: linux, adjacent)", l.Numbering)
	}
	threadsOf := func(cores ...int) string {
		var list []int
		for _, c := range cores {
			for t := 0; t < l.ThreadsPerCore; t++ {
				list = append(list, cpuOf(c, t))
			}
		}
		return FormatCPUList(list)
	}
	span := func(first, count int) []int {
		r := make([]int, count)
		for i := range r {
			r[i] = first + i
		}
		return r
	}
	out := make([]CPUSpec, n)
	for c := 0; c < ncores; c++ {
		socket := c / coresPerSocket
		inSocket := c % coresPerSocket
		llc := c / l.CoresPerLLC
		l2 := c / l.CoresPerL2
		llcInSocket := inSocket / l.CoresPerLLC
		node := socket*l.NodesPerSocket + llcInSocket/(l.LLCsPerSocket/l.NodesPerSocket)
		sib := threadsOf(c)
		l2s := threadsOf(span(l2*l.CoresPerL2, l.CoresPerL2)...)
		llcs := threadsOf(span(llc*l.CoresPerLLC, l.CoresPerLLC)...)
		for t := 0; t < l.ThreadsPerCore; t++ {
			id := cpuOf(c, t)
			out[id] = CPUSpec{CPU: id, Package: socket, Core: inSocket, Siblings: sib, L2: l2s, LLC: llcs, Node: node}
		}
	}
	return out, nil
}

// buildTopology validates per-CPU records and derives the groups.
func (m *Machine) buildTopology(cpus []CPUSpec) error {
	n := len(cpus)
	if n > 8192 {
		return specErr("cpus", "%d CPUs is more than the 8192 supported", n)
	}
	byID := make([]int, n) // CPU id -> index in cpus
	for i := range byID {
		byID[i] = -1
	}
	for i, c := range cpus {
		if c.CPU < 0 || c.CPU >= n {
			return specErr(fmt.Sprintf("cpus[%d].cpu", i), "%d out of range: CPUs must be numbered 0..%d", c.CPU, n-1)
		}
		if byID[c.CPU] >= 0 {
			return specErr(fmt.Sprintf("cpus[%d].cpu", i), "CPU %d listed twice (also cpus[%d])", c.CPU, byID[c.CPU])
		}
		byID[c.CPU] = i
		if c.Package < 0 || c.Core < 0 || c.Node < 0 {
			return specErr(fmt.Sprintf("cpus[%d]", i), "package, core and node must be non-negative")
		}
	}
	// Parse and check each sharing list: it must contain the CPU itself,
	// name only existing CPUs, and be identical for every member
	// (symmetric), which also rules out a CPU in two groups.
	type level struct {
		name string
		get  func(*CPUSpec) string
	}
	levels := []level{
		{"siblings", func(c *CPUSpec) string { return c.Siblings }},
		{"l2", func(c *CPUSpec) string {
			if c.L2 == "" {
				return c.Siblings
			}
			return c.L2
		}},
		{"llc", func(c *CPUSpec) string { return c.LLC }},
	}
	// Each distinct list is parsed and stored once, whatever the number
	// of CPUs naming it, and a new set claims its members: a CPU already
	// claimed by another set is in two groups (an 8192-CPU spec whose
	// every CPU lists "0-8191" is one set, not 8192 copies of it).
	sets := make([][][]int, len(levels)) // level -> cpu -> set
	setIdx := make([][]int, len(levels)) // level -> cpu -> distinct set
	for li, lv := range levels {
		sets[li] = make([][]int, n)
		setIdx[li] = make([]int, n)
		byText, byKey := map[string]int{}, map[string]int{}
		var distinct [][]int
		var creator []int // distinct set -> the CPU whose list made it
		owner := make([]int, n)
		for i := range owner {
			owner[i] = -1
		}
		for i := range cpus {
			c := &cpus[i]
			field := fmt.Sprintf("cpus[%d].%s", i, lv.name)
			text := lv.get(c)
			k, ok := byText[text]
			if !ok {
				set, err := ParseCPUList(text)
				if err != nil {
					return specErr(field, "%v", err)
				}
				if len(set) == 0 {
					return specErr(field, "required")
				}
				if last := set[len(set)-1]; last >= n {
					return specErr(field, "names CPU %d but the machine has CPUs 0..%d", last, n-1)
				}
				key := FormatCPUList(set)
				if k, ok = byKey[key]; !ok {
					k = len(distinct)
					for _, o := range set {
						if t := owner[o]; t >= 0 {
							if lv.name == "siblings" {
								return specErr(fmt.Sprintf("cpus[%d].siblings", byID[creator[t]]), "sibling list %q of CPU %d is not symmetric: CPU %d lists %q",
									FormatCPUList(distinct[t]), creator[t], c.CPU, key)
							}
							return specErr(field, "CPU %d is in two %s domains: %q (CPU %d's) and %q (CPU %d's)",
								o, lv.name, key, c.CPU, FormatCPUList(distinct[t]), creator[t])
						}
						owner[o] = k
					}
					distinct = append(distinct, set)
					creator = append(creator, c.CPU)
					byKey[key] = k
				}
				byText[text] = k
			}
			set := distinct[k]
			if _, ok := slices.BinarySearch(set, c.CPU); !ok {
				return specErr(field, "%q does not contain CPU %d itself", text, c.CPU)
			}
			sets[li][c.CPU], setIdx[li][c.CPU] = set, k
		}
		if li == 0 {
			continue
		}
		checked := map[[2]int]bool{} // (inner set, this set) pairs
		for id := 0; id < n; id++ {
			pair := [2]int{setIdx[li-1][id], setIdx[li][id]}
			if checked[pair] {
				continue
			}
			checked[pair] = true
			if !isSubset(sets[li-1][id], sets[li][id]) {
				return specErr(fmt.Sprintf("cpus[%d].%s", byID[id], lv.name),
					"%q must contain the CPU's %s %q", FormatCPUList(sets[li][id]), levels[li-1].name, FormatCPUList(sets[li-1][id]))
			}
		}
	}
	for id := 0; id < n; id++ {
		c := &cpus[byID[id]]
		for _, o := range sets[0][id] {
			oc := &cpus[byID[o]]
			if oc.Package != c.Package || oc.Core != c.Core {
				return specErr(fmt.Sprintf("cpus[%d].siblings", byID[id]),
					"SMT siblings %d and %d differ in package/core (%d/%d vs %d/%d)", id, o, c.Package, c.Core, oc.Package, oc.Core)
			}
		}
		for _, o := range sets[2][id] {
			if oc := &cpus[byID[o]]; oc.Package != c.Package {
				return specErr(fmt.Sprintf("cpus[%d].llc", byID[id]),
					"LLC spans packages %d and %d; an LLC must lie within one package", c.Package, oc.Package)
			}
		}
	}

	// Groups, numbered in order of their lowest CPU.
	groupIndex := func(li int) ([][]int, []int) {
		var groups [][]int
		idx := make([]int, n)
		seen := map[int]int{} // lowest cpu -> group
		for id := 0; id < n; id++ {
			set := sets[li][id]
			g, ok := seen[set[0]]
			if !ok {
				g = len(groups)
				seen[set[0]] = g
				groups = append(groups, set)
			}
			idx[id] = g
		}
		return groups, idx
	}
	var coreIdx, l2Idx, llcIdx []int
	m.Cores, coreIdx = groupIndex(0)
	m.L2s, l2Idx = groupIndex(1)
	m.LLCs, llcIdx = groupIndex(2)

	pkgIndex := map[int]int{}
	var pkgIDs []int
	maxNode := 0
	for id := 0; id < n; id++ {
		c := &cpus[byID[id]]
		if _, ok := pkgIndex[c.Package]; !ok {
			pkgIndex[c.Package] = len(pkgIDs)
			pkgIDs = append(pkgIDs, c.Package)
		}
		maxNode = max(maxNode, c.Node)
	}
	m.Packages = make([][]int, len(pkgIDs))
	m.Nodes = make([][]int, maxNode+1)
	m.CPUs = make([]CPU, n)
	for id := 0; id < n; id++ {
		c := &cpus[byID[id]]
		p := pkgIndex[c.Package]
		m.Packages[p] = append(m.Packages[p], id)
		m.Nodes[c.Node] = append(m.Nodes[c.Node], id)
		m.CPUs[id] = CPU{
			ID: id, Core: coreIdx[id], Thread: slices.Index(sets[0][id], id),
			L2: l2Idx[id], LLC: llcIdx[id], Package: p, Node: c.Node, CoreID: c.Core,
		}
	}
	for node, list := range m.Nodes {
		if len(list) == 0 {
			return specErr("cpus", "NUMA node %d has no CPUs (node ids must be 0..%d without gaps)", node, maxNode)
		}
	}
	m.initTables()
	return nil
}

func isSubset(a, b []int) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// buildDistance checks the SLIT: one row per node, 10 on the diagonal and
// more than 10 elsewhere (drivers/acpi/numa/srat.c: slit_valid()).
func (m *Machine) buildDistance(d [][]int) error {
	nodes := len(m.Nodes)
	if len(d) != nodes {
		return specErr("numa_distance", "has %d rows but the machine has %d NUMA nodes (need a %dx%d matrix)", len(d), nodes, nodes, nodes)
	}
	for i, row := range d {
		if len(row) != nodes {
			return specErr(fmt.Sprintf("numa_distance[%d]", i), "has %d entries, need %d", len(row), nodes)
		}
		for j, v := range row {
			if i == j && v != 10 {
				return specErr(fmt.Sprintf("numa_distance[%d][%d]", i, j), "local distance must be 10, got %d", v)
			}
			if i != j && (v <= 10 || v > 254) {
				return specErr(fmt.Sprintf("numa_distance[%d][%d]", i, j), "remote distance %d out of range (11..254)", v)
			}
		}
	}
	m.Distance = d
	return nil
}

func checkCaches(c *CacheSpec) error {
	if c.LineBytes < 16 || c.LineBytes > 1024 || c.LineBytes&(c.LineBytes-1) != 0 {
		return specErr("caches.line_bytes", "%d is not a power of two in [16, 1024]", c.LineBytes)
	}
	if c.L1dKiB <= 0 {
		return specErr("caches.l1d_kib", "must be positive")
	}
	if c.L2KiB <= 0 {
		return specErr("caches.l2_kib", "must be positive")
	}
	if c.L3KiB < 0 {
		return specErr("caches.l3_kib", "must not be negative (0: no L3)")
	}
	switch c.LLCInclusion {
	case "", LLCInclusive, LLCNonInclusive:
	default:
		return specErr("caches.llc_inclusion", "%q is not a policy (allowed: %s, %s)", c.LLCInclusion, LLCInclusive, LLCNonInclusive)
	}
	return nil
}

func checkSourced(field string, v *Sourced, required bool) (float64, error) {
	if v == nil {
		if required {
			return 0, specErr(field, "required")
		}
		return 0, nil
	}
	if !(v.Value >= MinSourced && v.Value <= MaxSourced) {
		return 0, specErr(field+".value", "must be a number from %g to %g, got %v", MinSourced, float64(MaxSourced), v.Value)
	}
	if v.Source == "" {
		return 0, specErr(field+".source", "required: say where the number comes from")
	}
	if !hasSourceTag(v.Source) {
		return 0, specErr(field+".source", "%q must start with its kind, one of %s ([V] verified, [D] derived, [M] measured, [E] estimate, [R] recalled, [C] calibrated)", v.Source, strings.Join(SourceTags, " "))
	}
	return v.Value, nil
}

// MaxSourced bounds every latency (ns) and cost (cycles) of a spec: 1e7,
// ten milliseconds of transfer or ten million cycles of kernel work, far
// above any machine's and far from float overflow in the sums that use
// them.
const MaxSourced = 1e7

// MinSourced is the smallest figure a spec or calibration file may give
// (a thousandth of a ns or cycle, or of a fraction): below it a value is
// a typo or a denormal, not a measurement.
const MinSourced = 1e-3

// SourceTags are the kinds of source a spec number may cite, the first
// thing in its source.
var SourceTags = []string{"[V]", "[D]", "[M]", "[E]", "[R]", "[C]"}

func hasSourceTag(src string) bool {
	for _, t := range SourceTags {
		if strings.HasPrefix(src, t) {
			return true
		}
	}
	return false
}

func (m *Machine) buildLatency(l *LatencySpec) error {
	present := m.ClassesPresent()
	why := [NumClasses]string{
		ClassSMT:    "the machine has SMT siblings",
		ClassL2:     "some L2 is shared by several cores",
		ClassLLC:    "some LLC spans several L2s",
		ClassSocket: "some package has several LLCs",
		ClassRemote: "the machine has several packages",
	}
	fields := [NumClasses]struct {
		name string
		v    *Sourced
	}{
		ClassSMT: {"smt", l.SMT}, ClassL2: {"l2", l.L2}, ClassLLC: {"llc", l.LLC},
		ClassSocket: {"socket", l.Socket}, ClassRemote: {"remote", l.Remote},
	}
	for c := ClassSMT; c < NumClasses; c++ {
		f := fields[c]
		if present[c] && f.v == nil {
			return specErr("latency_ns."+f.name, "required because %s", why[c])
		}
		v, err := checkSourced("latency_ns."+f.name, f.v, false)
		if err != nil {
			return err
		}
		m.Lat.Transfer[c] = v
	}
	var err error
	if m.Lat.HomeRemote, err = checkSourced("latency_ns.home_remote", l.HomeRemote, len(m.Packages) > 1); err != nil {
		return err
	}
	if m.Lat.MemLocal, err = checkSourced("latency_ns.mem_local", l.MemLocal, true); err != nil {
		return err
	}
	if m.Lat.MemRemote, err = checkSourced("latency_ns.mem_remote", l.MemRemote, len(m.Nodes) > 1); err != nil {
		return err
	}
	if m.Lat.RMWLocal, err = checkSourced("latency_ns.rmw_local", l.RMWLocal, true); err != nil {
		return err
	}
	b, err := checkSourced("latency_ns.burst", l.Burst, true)
	if err != nil {
		return err
	}
	if b != math.Trunc(b) || b < 1 || b > 256 {
		return specErr("latency_ns.burst.value", "must be a whole number of RMWs in [1, 256], got %v", b)
	}
	m.Lat.Burst = int(b)
	m.Lat.MLP = 1
	if l.MLP != nil {
		v, err := checkSourced("latency_ns.mlp", l.MLP, false)
		if err != nil {
			return err
		}
		if v != math.Trunc(v) || v > 256 {
			return specErr("latency_ns.mlp.value", "must be a whole number of outstanding misses in [1, 256], got %v", v)
		}
		m.Lat.MLP = int(v)
	}
	if m.Lat.Window, err = checkSourced("latency_ns.ooo_window", l.OOOWindow, false); err != nil {
		return err
	}
	if l.StoreBuffer != nil {
		v, err := checkSourced("latency_ns.store_buffer", l.StoreBuffer, false)
		if err != nil {
			return err
		}
		if v != math.Trunc(v) || v > 1024 {
			return specErr("latency_ns.store_buffer.value", "must be a whole number of store buffer entries in [1, 1024], got %v", v)
		}
		m.Lat.StoreBuffer = int(v)
	}
	m.Lat.SMTYield = 1
	if l.SMTYield != nil {
		v, err := checkSourced("latency_ns.smt_yield", l.SMTYield, false)
		if err != nil {
			return err
		}
		if v > 1 {
			return specErr("latency_ns.smt_yield.value", "must be a fraction in (0, 1], got %v", v)
		}
		m.Lat.SMTYield = v
	}
	if m.Lat.L2Hit, err = checkSourced("latency_ns.l2_hit", l.L2Hit, false); err != nil {
		return err
	}
	if m.Lat.LLCHit, err = checkSourced("latency_ns.llc_hit", l.LLCHit, l.L2Hit != nil && m.Caches.L3KiB > 0); err != nil {
		return err
	}
	if l.LLCHit != nil && l.L2Hit == nil {
		return specErr("latency_ns.llc_hit", "needs latency_ns.l2_hit: the capacity model ages lines through the L2 first")
	}
	return nil
}

func (m *Machine) buildCosts(c *CostSpec) error {
	for op := KernelOp(0); op < NumKernelOps; op++ {
		v, err := checkSourced("costs_cycles."+kernelOps[op].name, *kernelOps[op].field(c), !optionalOps[op])
		if err != nil {
			return err
		}
		m.Costs.Cycles[op] = v
		m.Costs.NS[op] = m.CyclesToNS(v)
	}
	for op, from := range opFallback {
		if *kernelOps[op].field(c) == nil {
			m.Costs.Cycles[op], m.Costs.NS[op] = m.Costs.Cycles[from], m.Costs.NS[from]
		}
	}
	return nil
}

// freqScale is arch_scale_freq_capacity() of a CPU running at freq against
// the reference ref (aperfmperf.c scale_freq_tick(): acnt / (mcnt x
// arch_max_freq_ratio), capped at SCHED_CAPACITY_SCALE).
func freqScale(freq, ref float64) uint64 {
	if ref <= 0 || freq >= ref {
		return 1024
	}
	return uint64(1024 * freq / ref)
}
