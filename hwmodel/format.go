package hwmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ClassSummary describes one distance class of a machine: how many CPU
// pairs are that far apart, an example pair, and the transfer latency.
type ClassSummary struct {
	Class   string  `json:"class"`
	Meaning string  `json:"meaning"`
	Pairs   int     `json:"pairs"` // unordered CPU pairs
	Example [2]int  `json:"example"`
	NS      float64 `json:"ns"`
	Source  string  `json:"source"`
}

// Classes summarizes the distance-class latency matrix: one row per class
// present, in order of distance.
func (m *Machine) Classes() []ClassSummary {
	var count [NumClasses]int
	var example [NumClasses][2]int
	var seen [NumClasses]bool
	for a := range m.CPUs {
		for b := a + 1; b < len(m.CPUs); b++ {
			c := m.Class(a, b)
			count[c]++
			if !seen[c] {
				seen[c] = true
				example[c] = [2]int{a, b}
			}
		}
	}
	var out []ClassSummary
	for c := ClassSMT; c < NumClasses; c++ {
		if count[c] == 0 {
			continue
		}
		src := ""
		if f := *latField(&m.Spec.Latency, c); f != nil {
			src = f.Source
		}
		out = append(out, ClassSummary{Class: c.String(), Meaning: c.Describe(), Pairs: count[c],
			Example: example[c], NS: m.Lat.Transfer[c], Source: src})
	}
	return out
}

// threadsPerCore returns the SMT width, or 0 if cores differ.
func (m *Machine) threadsPerCore() int {
	n := len(m.Cores[0])
	for _, c := range m.Cores {
		if len(c) != n {
			return 0
		}
	}
	return n
}

func uniformSize(groups [][]int) string {
	n := len(groups[0])
	for _, g := range groups {
		if len(g) != n {
			return "mixed sizes"
		}
	}
	return fmt.Sprintf("%d CPUs each", n)
}

// WriteTopo prints the machine as lscpu and lstopo would summarize it:
// counts, the package / LLC / L2 / core tree with CPU lists, NUMA nodes
// and distances, and the distance-class latency matrix by class.
func (m *Machine) WriteTopo(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	all := make([]int, len(m.CPUs))
	for i := range all {
		all[i] = i
	}
	p("Machine:             %s\n", m.Name)
	p("Description:         %s\n", m.Description)
	p("Architecture:        %s\n", m.Arch)
	p("Vendor / model:      %s / %s\n", m.Vendor, m.Model)
	p("Clock:               %g MHz (HZ=%d)\n", m.FreqMHz, m.HZ)
	if m.FreqScale != 1024 {
		p("Freq invariance:     %g MHz reference, arch_scale_freq_capacity %d\n", m.Spec.FreqRefMHz, m.FreqScale)
	}
	p("CPU(s):              %d\n", len(m.CPUs))
	p("On-line CPU(s) list: %s\n", FormatCPUList(all))
	if t := m.threadsPerCore(); t > 0 {
		p("Thread(s) per core:  %d\n", t)
	} else {
		p("Thread(s) per core:  mixed\n")
	}
	p("Core(s):             %d\n", len(m.Cores))
	if len(m.Cores)%len(m.Packages) == 0 {
		p("Core(s) per socket:  %d\n", len(m.Cores)/len(m.Packages))
	}
	p("Socket(s):           %d\n", len(m.Packages))
	p("L2 domain(s):        %d (%s)\n", len(m.L2s), uniformSize(m.L2s))
	if len(m.L2s) < len(m.Cores) {
		p("Cluster(s):          %d (cores sharing an L2)\n", len(m.L2s))
	}
	p("LLC domain(s):       %d (%s)\n", len(m.LLCs), uniformSize(m.LLCs))
	p("NUMA node(s):        %d\n", len(m.Nodes))
	c := m.Caches
	l3 := "none"
	if c.L3KiB > 0 {
		l3 = fmt.Sprintf("%d KiB per LLC", c.L3KiB)
	}
	incl := ""
	if c.LLCInclusion != "" {
		incl = "; " + c.LLCInclusion + " LLC"
	}
	p("Caches:              L1d %d KiB, L2 %d KiB, L3 %s; %d-byte lines%s\n", c.L1dKiB, c.L2KiB, l3, c.LineBytes, incl)

	p("\nTopology (lstopo-style):\n")
	for pi, pkg := range m.Packages {
		p("  Package P#%d: CPUs %s\n", pi, FormatCPUList(pkg))
		for li, llc := range m.LLCs {
			if m.CPUs[llc[0]].Package != pi {
				continue
			}
			p("    LLC L#%d (%s): CPUs %s\n", li, sizeKiB(c.L3KiB, c.L2KiB), FormatCPUList(llc))
			for l2i, l2 := range m.L2s {
				if m.CPUs[l2[0]].LLC != li {
					continue
				}
				cores := m.coresIn(l2)
				if len(m.L2s) > 64 && len(cores) == 1 {
					// One L2 per core on a big machine: one line per
					// LLC is enough.
					continue
				}
				p("      L2 L#%d: CPUs %s (%d cores)\n", l2i, FormatCPUList(l2), len(cores))
			}
			cores := m.coresIn(llc)
			p("      %d cores: %s\n", len(cores), m.coreList(cores))
		}
	}
	p("\nNUMA:\n")
	for n, cpus := range m.Nodes {
		p("  node%d: CPUs %s\n", n, FormatCPUList(cpus))
	}
	p("  distances:")
	for n := range m.Nodes {
		p(" node%d", n)
	}
	p("\n")
	for i, row := range m.Distance {
		p("    node%d:  ", i)
		for _, d := range row {
			p(" %5d", d)
		}
		p("\n")
	}

	p("\nLine transfer latency by distance class (one-way, ns):\n")
	p("  %-7s %-24s %9s %-10s %8s  %s\n", "class", "meaning", "pairs", "example", "ns", "source")
	for _, s := range m.Classes() {
		p("  %-7s %-24s %9d %-10s %8.1f  %s\n", s.Class, s.Meaning, s.Pairs,
			fmt.Sprintf("%d-%d", s.Example[0], s.Example[1]), s.NS, s.Source)
	}
	p("  home-remote penalty %.1f ns; DRAM %.1f ns local", m.Lat.HomeRemote, m.Lat.MemLocal)
	if m.Lat.MemRemote > 0 {
		p(", %.1f ns remote", m.Lat.MemRemote)
	}
	p("; uncontended RMW %.1f ns; burst %d RMWs per ownership\n", m.Lat.RMWLocal, m.Lat.Burst)
	if m.Lat.SMTYield < 1 {
		p("  SMT: a thread runs at %.2f of its speed while its sibling is busy\n", m.Lat.SMTYield)
	}
	if m.Lat.MLP > 1 {
		p("  independent loads: %d misses in flight, %.0f ns out-of-order window\n", m.Lat.MLP, m.Lat.Window)
	}
	if m.Lat.StoreBuffer > 0 {
		p("  store buffer: %d entries per core (a store that misses does not stall until a locked op drains it)\n", m.Lat.StoreBuffer)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sizeKiB(l3, l2 int) string {
	k := l3
	if k == 0 {
		k = l2
	}
	if k%1024 == 0 {
		return fmt.Sprintf("%d MiB", k/1024)
	}
	return fmt.Sprintf("%d KiB", k)
}

func (m *Machine) coresIn(cpus []int) []int {
	var cores []int
	for _, c := range cpus {
		cores = append(cores, m.CPUs[c].Core)
	}
	slices.Sort(cores)
	return slices.Compact(cores)
}

// coreList prints cores as "[0,112] [1,113] ...", eliding the middle of
// long lists.
func (m *Machine) coreList(cores []int) string {
	var parts []string
	for i, c := range cores {
		if len(cores) > 8 && i == 3 {
			parts = append(parts, "...")
		}
		if len(cores) > 8 && i >= 3 && i < len(cores)-3 {
			continue
		}
		parts = append(parts, "["+FormatCPUList(m.Cores[c])+"]")
	}
	return strings.Join(parts, " ")
}

// TopoJSON is the -json form of `emu topo`.
type TopoJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Vendor      string         `json:"vendor"`
	Model       string         `json:"model"`
	Arch        string         `json:"arch"`
	FreqMHz     float64        `json:"freq_mhz"`
	HZ          int            `json:"hz"`
	NumCPUs     int            `json:"cpus"`
	Cores       []string       `json:"cores"`
	L2s         []string       `json:"l2"`
	LLCs        []string       `json:"llcs"`
	Packages    []string       `json:"packages"`
	Nodes       []string       `json:"nodes"`
	Distance    [][]int        `json:"numa_distance"`
	Caches      CacheSpec      `json:"caches"`
	Classes     []ClassSummary `json:"classes"`
	Latency     LatencySpec    `json:"latency_ns"`
	Costs       CostSpec       `json:"costs_cycles"`
	CPUList     []CPU          `json:"cpu_list"`
}

// WriteTopoJSON prints the machine as one JSON object.
func (m *Machine) WriteTopoJSON(w io.Writer) error {
	lists := func(groups [][]int) []string {
		out := make([]string, len(groups))
		for i, g := range groups {
			out[i] = FormatCPUList(g)
		}
		return out
	}
	t := TopoJSON{
		Name: m.Name, Description: m.Description, Vendor: m.Vendor, Model: m.Model, Arch: m.Arch,
		FreqMHz: m.FreqMHz, HZ: m.HZ, NumCPUs: len(m.CPUs),
		Cores: lists(m.Cores), L2s: lists(m.L2s), LLCs: lists(m.LLCs), Packages: lists(m.Packages), Nodes: lists(m.Nodes),
		Distance: m.Distance, Caches: m.Caches, Classes: m.Classes(),
		Latency: m.Spec.Latency, Costs: m.Spec.Costs, CPUList: m.CPUs,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(t)
}
