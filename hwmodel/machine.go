package hwmodel

import "fmt"

// Machine is a validated machine: the topology as the scheduler sees it,
// the coherence fabric's latencies and the base costs of kernel work. It is
// immutable after Build and safe to share between goroutines.
type Machine struct {
	Name        string
	Description string
	Vendor      string
	Model       string
	Arch        string
	FreqMHz     float64
	HZ          int
	// FreqScale is arch_scale_freq_capacity() of every CPU (1024 =
	// running at the frequency-invariance reference): the engine runs its
	// CPUs at one sustained clock, FreqMHz, so the scale is constant.
	FreqScale uint64

	// CPUs is indexed by Linux CPU number.
	CPUs []CPU
	// Groups of CPUs at each level, each sorted by lowest CPU, CPU lists
	// sorted. Cores are SMT sibling sets; L2s are the CPUs behind one L2
	// (a cluster on arm64, one core on SPR and Zen 4); LLCs the last-level
	// cache domains (what sd_llc spans); Packages the sockets; Nodes the
	// NUMA nodes, indexed by node id.
	Cores    [][]int
	L2s      [][]int
	LLCs     [][]int
	Packages [][]int
	Nodes    [][]int
	// Distance is the SLIT, indexed by node id.
	Distance [][]int

	Caches CacheSpec
	Lat    Latencies
	Costs  Costs

	// ExitPathNS is, per tool binary ("perf", "hackbench"), the user-space
	// exit path of its forked children on the host, measured (Calib's
	// exit_path_us; nil on the presets and an uncalibrated host).
	ExitPathNS map[string]float64

	// Spec is the normalised spec the machine was built from (explicit
	// per-CPU form), for printing and -json.
	Spec *Spec

	// topo builds the coherence model's topology lookups once
	// (coherence_tables.go); nil for a Machine not built by Build.
	topo func() *topoTables
}

// CPU is one logical CPU's place in the topology. All fields index the
// Machine's group slices except CoreID, which is sysfs core_id.
type CPU struct {
	ID      int `json:"cpu"`
	Core    int `json:"core"`    // index into Machine.Cores
	Thread  int `json:"thread"`  // position among its SMT siblings
	L2      int `json:"l2"`      // index into Machine.L2s
	LLC     int `json:"llc"`     // index into Machine.LLCs
	Package int `json:"package"` // index into Machine.Packages
	Node    int `json:"node"`    // NUMA node id
	CoreID  int `json:"core_id"` // sysfs core_id (restarts per package on x86, per cluster on arm64 DT boards)
}

// NumCPUs is the number of logical CPUs.
func (m *Machine) NumCPUs() int { return len(m.CPUs) }

// Class is the distance class of a pair of CPUs: how far a cache line
// travels between them. It is what the coherence model prices and what
// the scheduler's domain flags (SD_SHARE_CPUCAPACITY, SD_CLUSTER,
// SD_SHARE_LLC, SD_NUMA) separate.
type Class uint8

const (
	ClassSelf   Class = iota // the same logical CPU
	ClassSMT                 // SMT siblings of one core (share L1 and L2)
	ClassL2                  // different cores behind one L2 (a cluster)
	ClassLLC                 // one LLC, different L2s
	ClassSocket              // one package, different LLCs (EPYC cross-CCX)
	ClassRemote              // different packages
	NumClasses
)

var classNames = [NumClasses]string{"self", "smt", "l2", "llc", "socket", "remote"}

func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// Describe is the human name of the class, as `emu topo` prints it.
func (c Class) Describe() string {
	switch c {
	case ClassSelf:
		return "same CPU"
	case ClassSMT:
		return "SMT sibling"
	case ClassL2:
		return "same L2, other core"
	case ClassLLC:
		return "same LLC, other L2"
	case ClassSocket:
		return "same socket, other LLC"
	case ClassRemote:
		return "other socket"
	}
	return c.String()
}

// Class returns the distance class between CPUs a and b.
func (m *Machine) Class(a, b int) Class {
	ca, cb := &m.CPUs[a], &m.CPUs[b]
	switch {
	case a == b:
		return ClassSelf
	case ca.Core == cb.Core:
		return ClassSMT
	case ca.L2 == cb.L2:
		return ClassL2
	case ca.LLC == cb.LLC:
		return ClassLLC
	case ca.Package == cb.Package:
		return ClassSocket
	}
	return ClassRemote
}

// ClassesPresent reports which classes occur between some pair of CPUs.
func (m *Machine) ClassesPresent() [NumClasses]bool {
	var p [NumClasses]bool
	p[ClassSelf] = true
	for _, core := range m.Cores {
		if len(core) > 1 {
			p[ClassSMT] = true
		}
	}
	for _, l2 := range m.L2s {
		if m.countDistinct(l2, func(c *CPU) int { return c.Core }) > 1 {
			p[ClassL2] = true
		}
	}
	for _, llc := range m.LLCs {
		if m.countDistinct(llc, func(c *CPU) int { return c.L2 }) > 1 {
			p[ClassLLC] = true
		}
	}
	for _, pkg := range m.Packages {
		if m.countDistinct(pkg, func(c *CPU) int { return c.LLC }) > 1 {
			p[ClassSocket] = true
		}
	}
	p[ClassRemote] = len(m.Packages) > 1
	return p
}

func (m *Machine) countDistinct(cpus []int, key func(*CPU) int) int {
	seen := map[int]bool{}
	for _, c := range cpus {
		seen[key(&m.CPUs[c])] = true
	}
	return len(seen)
}

// PairOf returns a representative pair of CPUs at the given class (the
// lowest-numbered such pair from CPU 0's point of view, else any), and
// false when the class does not occur on this machine.
func (m *Machine) PairOf(c Class) (a, b int, ok bool) {
	for a := range m.CPUs {
		for b := range m.CPUs {
			if m.Class(a, b) == c {
				return a, b, true
			}
		}
		if c == ClassSelf {
			break
		}
	}
	return 0, 0, false
}

// SMTSiblings returns the CPUs of cpu's core, cpu included.
func (m *Machine) SMTSiblings(cpu int) []int { return m.Cores[m.CPUs[cpu].Core] }

// LLCSpan returns the CPUs sharing cpu's last-level cache, cpu included.
func (m *Machine) LLCSpan(cpu int) []int { return m.LLCs[m.CPUs[cpu].LLC] }

// CyclesToNS converts core cycles at the machine's clock to ns.
func (m *Machine) CyclesToNS(cycles float64) float64 { return cycles * 1000 / m.FreqMHz }

// NSToCycles converts ns to core cycles at the machine's clock.
func (m *Machine) NSToCycles(ns float64) float64 { return ns * m.FreqMHz / 1000 }
