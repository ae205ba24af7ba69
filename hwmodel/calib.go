package hwmodel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Calib is a calibration file: what `emu calibrate` measured on a host,
// which -calib applies to the host preset. Zero fields were not measured.
type Calib struct {
	// Host identifies where the figures were taken.
	Host string `yaml:"host" json:"host"`
	Date string `yaml:"date" json:"date"`
	// PingPongNS is the one-way line transfer latency (CAS ping-pong
	// median RTT/2) per distance class name ("smt", "llc", ...).
	PingPongNS map[string]float64 `yaml:"pingpong_ns" json:"pingpong_ns"`
	// RMWLocalNS is one writer's ns per atomic add on its own line.
	RMWLocalNS float64 `yaml:"rmw_local_ns" json:"rmw_local_ns"`
	// Hammer2 is two writers on two CPUs at class Hammer2Class: aggregate
	// ns per atomic add on one shared line and on padded private lines.
	Hammer2Class    string  `yaml:"hammer2_class,omitempty" json:"hammer2_class,omitempty"`
	Hammer2SharedNS float64 `yaml:"hammer2_shared_ns" json:"hammer2_shared_ns"`
	Hammer2PaddedNS float64 `yaml:"hammer2_padded_ns" json:"hammer2_padded_ns"`
	// PipeRTTUS is a 1-byte pipe round trip between two threads through
	// the real kernel, µs, on two CPUs (PipeRTTUS) and on one (PipeRTT1US).
	PipeRTTUS  float64 `yaml:"pipe_rtt_us" json:"pipe_rtt_us"`
	PipeRTT1US float64 `yaml:"pipe_rtt_1cpu_us,omitempty" json:"pipe_rtt_1cpu_us,omitempty"`
	// PageFaultUS is one user page fault that allocates and fills a
	// private page (the first write to an anonymous mapping), µs: it
	// prices costs_cycles.page_fault, and scales exit_mmap alike.
	PageFaultUS float64 `yaml:"page_fault_us,omitempty" json:"page_fault_us,omitempty"`
	// CoWFaultUS is one copy-on-write fault of a forked child
	// (do_wp_page() -> wp_page_copy(): a page allocated, 4 KiB copied,
	// ptep_clear_flush() of the old PTE), µs: where measured, it prices
	// costs_cycles.page_fault (the model's page_fault is the tools'
	// children's copy-on-write fault) in place of page_fault_us.
	CoWFaultUS float64 `yaml:"cow_fault_us,omitempty" json:"cow_fault_us,omitempty"`
	// ExitPathUS is, per tool binary (toolExitNames), a forked child's
	// exit path in µs: from its last system call before exit(3) to its
	// exit_group(2), i.e. __run_exit_handlers() and _dl_fini() running
	// every loaded library's destructors, binding their symbols lazily,
	// with the faults they take. A property of the tool's binary and
	// libraries on this host (Machine.ExitPathNS).
	ExitPathUS map[string]float64 `yaml:"exit_path_us,omitempty" json:"exit_path_us,omitempty"`
	// SyscallNS is one bare system call (getppid(2)) on this host, ns:
	// the entry and exit every modeled system call pays (costs_cycles.
	// syscall). On a VM with the speculation mitigations it is several
	// times a bare-metal one, which the pipe round trip alone cannot tell
	// from the scheduler's own costs.
	SyscallNS float64 `yaml:"syscall_ns,omitempty" json:"syscall_ns,omitempty"`
	// PipeMsgNS and UnixMsgNS are one 100-byte message written and read
	// back by one thread, through a pipe and an AF_UNIX stream socketpair,
	// ns: two system calls and the paths' own work with no wakeup and no
	// switch (pipe_write + pipe_read, unix_send + unix_recv).
	PipeMsgNS float64 `yaml:"pipe_msg_ns,omitempty" json:"pipe_msg_ns,omitempty"`
	UnixMsgNS float64 `yaml:"unix_msg_ns,omitempty" json:"unix_msg_ns,omitempty"`
	// PipeCrossScale further scales the cross-CPU costs (ipi_send,
	// ipi_deliver, ipi_recv, idle_exit) after the closed-form fit, so that
	// the engine's own two-CPU pipe round trip on this machine reproduces
	// pipe_rtt_us: the closed form (PredictPipeRTT) does not price what
	// the engine does on that path (its line transfers, the stall an idle
	// CPU absorbs, the wake-list poll). Fitted with the engine by emu
	// calibrate (study.FitPipeCross); 0 or absent: 1.
	PipeCrossScale float64 `yaml:"pipe_cross_scale,omitempty" json:"pipe_cross_scale,omitempty"`
}

// LoadCalibFile reads a calibration file strictly.
func LoadCalibFile(path string) (*Calib, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCalibBytes+1))
	if err != nil {
		return nil, err
	}
	c, err := DecodeCalib(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// maxCalibBytes bounds a calibration file (emu calibrate writes ~300 B).
const maxCalibBytes = 1 << 20

// DecodeCalib decodes and validates a calibration file's contents.
func DecodeCalib(data []byte) (*Calib, error) {
	if len(data) > maxCalibBytes {
		return nil, fmt.Errorf("longer than %d MiB: not a calibration file", maxCalibBytes>>20)
	}
	if err := checkYAMLBounds(data, specBounds); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c Calib
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty calibration file")
		}
		return nil, errors.New(cleanYAMLError(err))
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, errors.New("more than one YAML document")
	case !errors.Is(err, io.EOF):
		return nil, errors.New("text after the end of the document: " + cleanYAMLError(err))
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// validate checks every figure: a measured value is a positive number of
// at most MaxSourced (ns, or µs for the pipe round trips); 0 (or absent)
// means not measured, except in pingpong_ns, which lists only what was.
func (c *Calib) validate() error {
	const classes = "smt, l2, llc, socket, remote"
	for _, f := range []struct{ name, v string }{{"host", c.Host}, {"date", c.Date}} {
		if strings.IndexFunc(f.v, unicode.IsControl) >= 0 {
			return fmt.Errorf("%s: %q holds a control character (allowed: printable text on one line)", f.name, f.v)
		}
	}
	names := make([]string, 0, len(c.PingPongNS))
	for name := range c.PingPongNS {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := c.PingPongNS[name]
		if _, ok := classByName(name); !ok || name == "self" {
			return fmt.Errorf("pingpong_ns.%s: unknown class (allowed: %s)", name, classes)
		}
		if !(v >= MinSourced && v <= MaxSourced) {
			return fmt.Errorf("pingpong_ns.%s: must be a number of ns from %g to %g, got %v", name, MinSourced, float64(MaxSourced), v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"rmw_local_ns", c.RMWLocalNS}, {"hammer2_shared_ns", c.Hammer2SharedNS}, {"hammer2_padded_ns", c.Hammer2PaddedNS},
		{"pipe_rtt_us", c.PipeRTTUS}, {"pipe_rtt_1cpu_us", c.PipeRTT1US}, {"page_fault_us", c.PageFaultUS}, {"cow_fault_us", c.CoWFaultUS},
		{"pipe_cross_scale", c.PipeCrossScale}, {"syscall_ns", c.SyscallNS}, {"pipe_msg_ns", c.PipeMsgNS}, {"unix_msg_ns", c.UnixMsgNS},
	} {
		if !(f.v == 0 || f.v >= MinSourced && f.v <= MaxSourced) {
			return fmt.Errorf("%s: must be a number from %g to %g (0: not measured), got %v", f.name, MinSourced, float64(MaxSourced), f.v)
		}
	}
	tools := make([]string, 0, len(c.ExitPathUS))
	for name := range c.ExitPathUS {
		tools = append(tools, name)
	}
	slices.Sort(tools)
	for _, name := range tools {
		if !slices.Contains(toolExitNames, name) {
			return fmt.Errorf("exit_path_us.%s: unknown tool (allowed: %s)", name, strings.Join(toolExitNames, ", "))
		}
		if v := c.ExitPathUS[name]; !(v >= MinSourced && v <= MaxSourced) {
			return fmt.Errorf("exit_path_us.%s: must be a number of us from %g to %g, got %v", name, MinSourced, float64(MaxSourced), v)
		}
	}
	if c.Hammer2Class != "" {
		if cl, ok := classByName(c.Hammer2Class); !ok || cl == ClassSelf {
			return fmt.Errorf("hammer2_class: %q is not a distance class (allowed: %s)", c.Hammer2Class, classes)
		}
	}
	if c.Hammer2SharedNS > 0 && c.Hammer2Class == "" {
		return fmt.Errorf("hammer2_class: required with hammer2_shared_ns (the class of the two writers' CPUs: %s)", classes)
	}
	return nil
}

// Write saves the calibration as YAML.
func (c *Calib) Write(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return err
	}
	return enc.Close()
}

func classByName(name string) (Class, bool) {
	for c := ClassSelf; c < NumClasses; c++ {
		if c.String() == name {
			return c, true
		}
	}
	return 0, false
}

// Apply returns a copy of m with the calibration's measurements in place
// of the preset's estimates: the transfer latency of each measured class,
// the uncontended RMW, the burst length that best reproduces the measured
// two-writer hammer, and one scale on every kernel-operation cost that
// makes the predicted pipe round trip match the measured one. Sources are
// rewritten to say so.
// The burst is fitted with hammer, the weave's prediction of the
// aggregate ns per atomic add (weave.PredictHammer: the replay is not
// hwmodel's).
func (c *Calib) Apply(m *Machine, hammer HammerFunc) (*Machine, error) {
	s := cloneSpec(m.Spec)
	src := func(what string) string {
		return fmt.Sprintf("[C] %s measured by emu calibrate on %s, %s", what, c.Host, c.Date)
	}
	present := m.ClassesPresent()
	for name, v := range c.PingPongNS {
		cl, _ := classByName(name)
		if !present[cl] {
			return nil, specErr("-calib", "pingpong_ns.%s: the machine has no CPU pair of that class (present: %s)", name, presentNames(present))
		}
		*latField(&s.Latency, cl) = &Sourced{Value: v, Source: src("CAS ping-pong median RTT/2")}
	}
	if c.RMWLocalNS > 0 {
		s.Latency.RMWLocal = &Sourced{Value: c.RMWLocalNS, Source: src("one writer's atomic add")}
	}
	m2, err := Build(s)
	if err != nil {
		return nil, specErr("-calib", "%v", err)
	}
	if c.Hammer2SharedNS > 0 && c.Hammer2Class != "" {
		cl, ok := classByName(c.Hammer2Class)
		a, b, found := m2.PairOf(cl)
		if !ok || !found {
			return nil, specErr("-calib", "hammer2_class: %q: no such CPU pair on this machine (present: %s)", c.Hammer2Class, presentNames(present))
		}
		best, bestErr := 1, math.Inf(1)
		for burst := 1; burst <= 64; burst++ {
			m2.Lat.Burst = burst
			if e := math.Abs(hammer(m2, []int{a, b}, true) - c.Hammer2SharedNS); e < bestErr {
				best, bestErr = burst, e
			}
		}
		s.Latency.Burst = &Sourced{Value: float64(best), Source: src(fmt.Sprintf("burst fitted to 2 writers on one line, %.2f ns/op aggregate", c.Hammer2SharedNS))}
	}
	if err := c.fitKernelCosts(m2, s, src); err != nil {
		return nil, err
	}
	c.applyPageFault(m2, s, src)
	m3, err := Build(s)
	if err != nil {
		return nil, specErr("-calib", "the fitted costs are out of range: %v", err)
	}
	for name, us := range c.ExitPathUS {
		if m3.ExitPathNS == nil {
			m3.ExitPathNS = map[string]float64{}
		}
		m3.ExitPathNS[name] = 1000 * us
	}
	return m3, nil
}

// toolExitNames are the tool binaries whose children's exit path a
// calibration may give (the DSO names of bench's perf bench and hackbench
// workloads).
var toolExitNames = []string{"hackbench", "perf"}

// presentNames lists the distance classes a machine has (self excluded).
func presentNames(present [NumClasses]bool) string {
	var n []string
	for c := ClassSMT; c < NumClasses; c++ {
		if present[c] {
			n = append(n, c.String())
		}
	}
	return strings.Join(n, ", ")
}

// crossCPUOps are the costs a wakeup across CPUs adds to a local one.
var crossCPUOps = []KernelOp{OpIPISend, OpIPIDeliver, OpIPIRecv, OpIdleExit}

// fitKernelCosts prices the kernel-operation costs in s from the measured
// figures. The stream probes, where measured, set the system call's
// entry and exit (syscall_ns) and the pipe's and the AF_UNIX socket's own
// paths (a message's write and read back less two system calls, shared
// out in the preset's write:read ratio): those costs are then fixed. One
// scale on the rest of the local path (wakeup, enqueue, dequeue, switch)
// makes the closed-form one-CPU pipe round trip match the measured one;
// then one on the cross-CPU additions (IPI send/delivery/receive, idle
// exit) the two-CPU round trip. In a VM the second is dominated by VM
// exits for the IPI and HLT, which is why one scale cannot fit both; and
// the first alone would price a VM's system calls, several times a
// bare-metal one, as scheduler work (the stream probes split them).
func (c *Calib) fitKernelCosts(m *Machine, s *Spec, src func(string) string) error {
	isCross := func(op KernelOp) bool {
		for _, x := range crossCPUOps {
			if x == op {
				return true
			}
		}
		return false
	}
	rescale := func(op KernelOp, scale float64, why string) {
		f := kernelOps[op].field(&s.Costs)
		old := *f
		if old == nil {
			return // an optional cost the spec leaves out stays 0
		}
		*f = &Sourced{Value: math.Max(1, math.Round(old.Value*scale*10)/10),
			Source: src(fmt.Sprintf("x%.3f %s", scale, why)) + "; was " + old.Source}
	}
	// ns is what the fitted costs come to so far (m's until set).
	ns := m.Costs.NS
	fixed := map[KernelOp]bool{}
	setNS := func(op KernelOp, v float64, why string) {
		f := kernelOps[op].field(&s.Costs)
		was := "was the preset's " + kernelOps[opFallbackOf(op)].name
		if *f != nil {
			was = "was " + (*f).Source
		}
		*f = &Sourced{Value: math.Max(1, math.Round(m.NSToCycles(v)*10)/10), Source: src(why) + "; " + was}
		ns[op] = m.CyclesToNS((*f).Value)
		fixed[op] = true
	}
	if c.SyscallNS > 0 {
		setNS(OpSyscall, c.SyscallNS, fmt.Sprintf("one getppid(2), %.0f ns,", c.SyscallNS))
	}
	for _, p := range []struct {
		msg         float64
		name        string
		write, read KernelOp
	}{{c.PipeMsgNS, "pipe", OpPipeWrite, OpPipeRead}, {c.UnixMsgNS, "AF_UNIX stream", OpUnixSend, OpUnixRecv}} {
		if p.msg <= 0 {
			continue
		}
		work := p.msg - 2*ns[OpSyscall]
		if work <= 0 {
			return specErr("-calib", "a 100-byte %s message costs %.0f ns, no more than its two system calls (%.0f ns each): the stream figures contradict each other", p.name, p.msg, ns[OpSyscall])
		}
		w := ns[p.write] / (ns[p.write] + ns[p.read])
		why := fmt.Sprintf("a 100-byte %s message written and read back by one thread, %.0f ns, less two system calls, in the preset's write:read ratio,", p.name, p.msg)
		setNS(p.write, work*w, why)
		setNS(p.read, work*(1-w), why)
	}
	// partsOf splits a closed form, linear in the costs, into what the
	// fixed costs, the other costs and the rest (line transfers) add.
	partsOf := func(pred func(*Machine) float64) (fixedPart, free, rest float64) {
		z := *m
		z.Costs.NS = ns
		all := pred(&z)
		for op := range NumKernelOps {
			if !fixed[op] {
				z.Costs.NS[op] = 0
			}
		}
		withFixed := pred(&z)
		z.Costs.NS = [NumKernelOps]float64{}
		rest = pred(&z)
		return withFixed - rest, all - withFixed, rest
	}
	local := 1.0
	if c.PipeRTT1US > 0 {
		f, free, rest := partsOf(func(x *Machine) float64 { return x.PredictPipeRTT(0, 0) })
		local = math.Max((c.PipeRTT1US*1000-f-rest)/free, 0.05)
		for op := KernelOp(0); op < NumKernelOps; op++ {
			if !isCross(op) && !fixed[op] {
				rescale(op, local, fmt.Sprintf("so the one-CPU pipe round trip matches %.2f us", c.PipeRTT1US))
			}
		}
	}
	a, b, ok := m.PairOf(ClassLLC)
	if !ok {
		a, b, ok = m.PairOf(ClassSMT)
	}
	if c.PipeRTTUS > 0 && ok {
		// The two-CPU round trip is 2 x (local part + cross part).
		f, free, rest := partsOf(func(x *Machine) float64 { return x.PredictPipeRTT(a, b) })
		cross := 0.0
		for _, op := range crossCPUOps {
			cross += 2 * ns[op]
		}
		want := c.PipeRTTUS*1000 - f - rest - (free-cross)*local
		scale := math.Max(want/cross, 0.05)
		why := fmt.Sprintf("so the two-CPU pipe round trip matches %.2f us", c.PipeRTTUS)
		if c.PipeCrossScale > 0 {
			scale *= c.PipeCrossScale
			why = fmt.Sprintf("(x%.3f pipe_cross_scale) so the engine's two-CPU pipe round trip matches %.2f us", c.PipeCrossScale, c.PipeRTTUS)
		}
		for _, op := range crossCPUOps {
			rescale(op, scale, why)
		}
	}
	return nil
}

// opFallbackOf is the op whose cost op takes when the spec leaves it out
// (opFallback), else op itself.
func opFallbackOf(op KernelOp) KernelOp {
	if from, ok := opFallback[op]; ok {
		return from
	}
	return op
}

// applyPageFault prices costs_cycles.page_fault from the measured fault
// (after fitKernelCosts, which scaled it with the local path): the
// copy-on-write fault after fork() where measured, else the first-touch
// fault, which does the same work with a zeroing for the copy and no TLB
// flush (do_anonymous_page()). It scales exit_mmap by the same factor:
// both are mm work that a hypervisor's nested paging slows alike [E].
func (c *Calib) applyPageFault(m *Machine, s *Spec, src func(string) string) {
	pf := s.Costs.PageFault
	us, what := c.CoWFaultUS, "copy-on-write fault after fork()"
	if us <= 0 {
		us, what = c.PageFaultUS, "first-touch page fault"
	}
	if us <= 0 || pf == nil || pf.Value <= 0 {
		return
	}
	cycles := math.Max(1, math.Round(us*m.FreqMHz))
	scale := cycles / pf.Value
	s.Costs.PageFault = &Sourced{Value: cycles, Source: src(fmt.Sprintf("%s %.2f us (at %.0f MHz)", what, us, m.FreqMHz)) + "; was " + pf.Source}
	if ex := s.Costs.ExitMMAP; ex != nil {
		s.Costs.ExitMMAP = &Sourced{Value: math.Max(1, math.Round(ex.Value*scale)),
			Source: src(fmt.Sprintf("x%.3f, the page fault's ratio to its previous cost", scale)) + "; was " + ex.Source}
	}
}

func latField(l *LatencySpec, c Class) **Sourced {
	switch c {
	case ClassSMT:
		return &l.SMT
	case ClassL2:
		return &l.L2
	case ClassLLC:
		return &l.LLC
	case ClassSocket:
		return &l.Socket
	case ClassRemote:
		return &l.Remote
	}
	panic("hwmodel: no latency field for class " + c.String())
}

// cloneSpec deep-copies a spec through its YAML form.
func cloneSpec(s *Spec) *Spec {
	var buf bytes.Buffer
	if err := s.Encode(&buf); err != nil {
		panic(err)
	}
	c, err := DecodeSpec(&buf)
	if err != nil {
		panic(fmt.Sprintf("hwmodel: spec does not round-trip: %v", err))
	}
	return c
}

// PredictCoWShootdown is the model's copy-on-write fault, in ns, taken on
// CPU a while the faulting mm runs on CPU b: the fault (page_fault) and
// ptep_clear_flush() -> flush_tlb_mm_range() -> native_flush_tlb_multi()
// (arch/x86/mm/tlb.c, v6.6), which IPIs b (smp_call_function_many_cond(),
// kernel/smp.c) and, with wait set, spins in csd_lock_wait() until b's
// flush_tlb_func() has run and released the csd's line. Only a check of
// the IPI's price: no modeled workload faults while its mm runs on
// another CPU (a tool's children are single-threaded; its threads take
// no copy-on-write faults).
func (m *Machine) PredictCoWShootdown(a, b int) float64 {
	c := m.Costs.NS
	return c[OpPageFault] + c[OpIPISend] + c[OpIPIDeliver] + c[OpIPIRecv] + m.TransferNS(b, a, m.CPUs[a].Node)
}

// HammerFunc is the weave's prediction of the aggregate ns per atomic add
// of writers on cpus hammering one shared line (shared) or each its own
// (weave.PredictHammer).
type HammerFunc func(m *Machine, cpus []int, shared bool) float64

// PredictStreamMsg is the model's price, in ns, of a 100-byte message
// written and read back by one thread (the stream probe's pipe_msg_ns,
// unix=false, and unix_msg_ns): two system calls and the path's write and
// read, from the base costs alone.
func (m *Machine) PredictStreamMsg(unix bool) float64 {
	w, r := OpPipeWrite, OpPipeRead
	if unix {
		w, r = OpUnixSend, OpUnixRecv
	}
	return 2*m.Costs.NS[OpSyscall] + m.Costs.NS[w] + m.Costs.NS[r]
}

// PredictPipeRTT is the model's round trip, in ns, of a 1-byte message
// through two pipes between threads on CPUs a and b (`perf bench sched
// pipe`), from the base costs alone. On one CPU each half-trip runs the
// writer's write() (with the wakeup), then its read() that blocks and
// switches to the reader. On two CPUs the critical path of a half-trip is
// the write() with a remote wakeup of an idle CPU through the wake list
// and an IPI (ttwu_queue_cond: the target is idle), then the target's idle
// exit, enqueue, switch and read() return; the sleeper's dequeue and
// switch to idle run off the critical path. This is the closed form that
// calibration fits the host's kernel costs with; the engine's own pipe
// workload runs the full model.
func (m *Machine) PredictPipeRTT(a, b int) float64 {
	c := func(ops ...KernelOp) float64 {
		t := 0.0
		for _, op := range ops {
			t += m.Costs.NS[op]
		}
		return t
	}
	write := c(OpSyscall, OpPipeWrite, OpTTWU, OpSelectRQ)
	if a == b {
		half := write + c(OpEnqueue, OpUpdateLoadAvg, OpUpdateCurr) +
			c(OpSyscall, OpPipeRead, OpDequeue, OpUpdateLoadAvg, OpUpdateCurr, OpSchedule, OpPickNext)
		return 2 * half
	}
	half := write + c(OpIPISend, OpIPIDeliver, OpIPIRecv, OpIdleExit, OpEnqueue, OpUpdateLoadAvg,
		OpSchedule, OpPickNext, OpPipeRead) +
		// the waker's wake-list push and the wakee reading its pending
		// flag are cross-CPU line transfers
		2*m.TransferNS(b, a, m.CPUs[a].Node)
	return 2 * half
}
