package hwmodel

// Latencies are the coherence fabric's costs in ns, from the spec.
type Latencies struct {
	// Transfer is the one-way line transfer latency per distance class
	// (0 for ClassSelf and for classes the machine lacks).
	Transfer   [NumClasses]float64
	HomeRemote float64
	MemLocal   float64
	MemRemote  float64
	RMWLocal   float64
	Burst      int
	// MLP is how many independent load misses a core keeps in flight
	// (L1D fill buffers); Window is how far, in ns of its own timeline,
	// it runs past the oldest one before its reorder buffer is full.
	// MLP 1 and Window 0: every access blocks.
	MLP    int
	Window float64
	// StoreBuffer is a core's store buffer entries (0: none, every store
	// blocks); its hardware threads share it out (weave's Replayer).
	StoreBuffer int
	// SMTYield is a hardware thread's speed while its SMT sibling is
	// busy, as a fraction of its speed alone (1: no sharing).
	SMTYield float64
	// L2Hit and LLCHit: a hit in the L2 and in the LLC beyond an L1 hit
	// (0: no capacity model; Machine.Capacity).
	L2Hit, LLCHit float64
}

// KernelOp names a kernel operation whose base cost a preset gives.
type KernelOp uint8

// The kernel operations with base costs; names are the spec's keys.
const (
	OpSchedule KernelOp = iota
	OpPickNext
	OpEnqueue
	OpDequeue
	OpUpdateCurr
	OpUpdateLoadAvg
	OpCfsGroup
	OpReweight
	OpTTWU
	OpSelectRQ
	OpSISProbe
	OpIPISend
	OpIPIDeliver
	OpIPIRecv
	OpIdleExit
	OpTick
	OpBalanceRQ
	OpMigrate
	OpSyscall
	OpPipeWrite
	OpPipeRead
	OpSockSend
	OpSockRecv
	OpUclamp
	OpSwitchMM
	OpPageFault
	OpExitMMAP
	OpUnixSend
	OpUnixRecv
	OpHrtimerIRQ
	OpHrtimerStart
	NumKernelOps
)

// kernelOps maps each op to its spec key and field.
var kernelOps = [NumKernelOps]struct {
	name  string
	field func(*CostSpec) **Sourced
}{
	OpSchedule:      {"schedule", func(c *CostSpec) **Sourced { return &c.Schedule }},
	OpPickNext:      {"pick_next", func(c *CostSpec) **Sourced { return &c.PickNext }},
	OpEnqueue:       {"enqueue", func(c *CostSpec) **Sourced { return &c.Enqueue }},
	OpDequeue:       {"dequeue", func(c *CostSpec) **Sourced { return &c.Dequeue }},
	OpUpdateCurr:    {"update_curr", func(c *CostSpec) **Sourced { return &c.UpdateCurr }},
	OpUpdateLoadAvg: {"update_load_avg", func(c *CostSpec) **Sourced { return &c.UpdateLoadAvg }},
	OpCfsGroup:      {"update_cfs_group", func(c *CostSpec) **Sourced { return &c.CfsGroup }},
	OpReweight:      {"reweight", func(c *CostSpec) **Sourced { return &c.Reweight }},
	OpTTWU:          {"ttwu", func(c *CostSpec) **Sourced { return &c.TTWU }},
	OpSelectRQ:      {"select_rq", func(c *CostSpec) **Sourced { return &c.SelectRQ }},
	OpSISProbe:      {"sis_probe", func(c *CostSpec) **Sourced { return &c.SISProbe }},
	OpIPISend:       {"ipi_send", func(c *CostSpec) **Sourced { return &c.IPISend }},
	OpIPIDeliver:    {"ipi_deliver", func(c *CostSpec) **Sourced { return &c.IPIDeliver }},
	OpIPIRecv:       {"ipi_recv", func(c *CostSpec) **Sourced { return &c.IPIRecv }},
	OpIdleExit:      {"idle_exit", func(c *CostSpec) **Sourced { return &c.IdleExit }},
	OpTick:          {"tick", func(c *CostSpec) **Sourced { return &c.Tick }},
	OpBalanceRQ:     {"balance_rq", func(c *CostSpec) **Sourced { return &c.BalanceRQ }},
	OpMigrate:       {"migrate", func(c *CostSpec) **Sourced { return &c.Migrate }},
	OpSyscall:       {"syscall", func(c *CostSpec) **Sourced { return &c.Syscall }},
	OpPipeWrite:     {"pipe_write", func(c *CostSpec) **Sourced { return &c.PipeWrite }},
	OpPipeRead:      {"pipe_read", func(c *CostSpec) **Sourced { return &c.PipeRead }},
	OpSockSend:      {"sock_send", func(c *CostSpec) **Sourced { return &c.SockSend }},
	OpSockRecv:      {"sock_recv", func(c *CostSpec) **Sourced { return &c.SockRecv }},
	OpUclamp:        {"uclamp", func(c *CostSpec) **Sourced { return &c.Uclamp }},
	OpSwitchMM:      {"switch_mm", func(c *CostSpec) **Sourced { return &c.SwitchMM }},
	OpPageFault:     {"page_fault", func(c *CostSpec) **Sourced { return &c.PageFault }},
	OpExitMMAP:      {"exit_mmap", func(c *CostSpec) **Sourced { return &c.ExitMMAP }},
	OpUnixSend:      {"unix_send", func(c *CostSpec) **Sourced { return &c.UnixSend }},
	OpUnixRecv:      {"unix_recv", func(c *CostSpec) **Sourced { return &c.UnixRecv }},
	OpHrtimerIRQ:    {"hrtimer_irq", func(c *CostSpec) **Sourced { return &c.HrtimerIRQ }},
	OpHrtimerStart:  {"hrtimer_start", func(c *CostSpec) **Sourced { return &c.HrtimerStart }},
}

// optionalOps may be left out of a spec: added after the first spec
// files, which must keep working. Left out, an op costs 0, except the
// AF_UNIX stream paths, which cost what the spec's sock_send and
// sock_recv do (opFallback).
var optionalOps = [NumKernelOps]bool{OpSwitchMM: true, OpPageFault: true, OpExitMMAP: true, OpUnixSend: true, OpUnixRecv: true,
	OpHrtimerIRQ: true, OpHrtimerStart: true}

// opFallback is the op whose cost an optional op left out of a spec takes
// (the spec files before unix_send and unix_recv priced AF_UNIX streams
// as sock_send and sock_recv).
var opFallback = map[KernelOp]KernelOp{OpUnixSend: OpSockSend, OpUnixRecv: OpSockRecv}

func (op KernelOp) String() string {
	if op < NumKernelOps {
		return kernelOps[op].name
	}
	return "op?"
}

// Costs are the base costs of kernel operations, in cycles and in ns at
// the machine's clock.
type Costs struct {
	Cycles [NumKernelOps]float64
	NS     [NumKernelOps]float64
}

// Cost returns the base cost of op in virtual ns, rounded to an integer
// (virtual time is integer ns).
func (m *Machine) Cost(op KernelOp) int64 { return int64(m.Costs.NS[op] + 0.5) }
