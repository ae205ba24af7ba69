package emu

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// Config configures a Sim.
type Config struct {
	Machine  *hwmodel.Machine
	Features Features
	// Seed seeds every per-CPU and per-task PRNG.
	Seed uint64
	// Epoch is the epoch length in ns; 0 uses the lookahead (the IPI
	// delivery latency of the machine).
	Epoch int64
	// Check runs the conservation checks at every barrier (tasks,
	// tg->load_avg, queue sums) and panics on a broken invariant.
	Check bool
	// Driver is "serial" (one goroutine steps every CPU in CPU order) or
	// "parallel" (the default: goroutines step the CPUs concurrently).
	// Both give the same bytes.
	Driver string
	// Workers bounds the parallel driver's goroutines (0: one per
	// allowed host CPU, or one per modeled CPU when the host has enough).
	Workers int
	// Pin pins the parallel driver's goroutines to host CPUs.
	Pin bool
	// StartJitter > 0 delays each new task's fork by a seed-random time
	// in [0, StartJitter) ns: a real tool creates its tasks one after
	// another (pthread_create()/fork() in a loop), so the order and phase
	// in which they start vary from run to run. The task stays TaskNew
	// until its CPU runs the delayed wake_up_new_task() (evFork). 0: every
	// task is forked at once.
	StartJitter int64
	// Sched are the tunables set by name (-sched), over the defaults
	// NewTunables computes for the machine.
	Sched SchedSettings
}

// Sim is an emulated machine: its runqueues, task groups and tasks, the
// shared-memory space the CPUs contend on, and the driver that steps them.
//
// Ownership. Every CPU reads a Sim during an epoch; none writes it. Its
// fields are fixed once the machine is built (New, NewGroup, NewTask,
// before Run) or written only at the barrier, by the engine alone; each
// part says which, and the few fields a CPU does write during an epoch
// say so.
type Sim struct {
	// Fixed once built (New).
	m     *hwmodel.Machine
	feat  Features
	tun   Tunables
	space *weave.Space // its lines are the CPUs' shared state (atomic: contention/)
	cfg   Config
	// noSignalHold: signals are not held (hold.go: holdSignal). Set
	// before Run, only by tests, to show what the hold changes.
	noSignalHold bool

	// cpus, root, groups, tasks, parents: written only by New, NewGroup,
	// NewTask and NewForkParent (a workload's setup, before Run or
	// between runs); each RQ, group queue and task has its own owner.
	cpus    []*RQ
	root    *TaskGroup
	groups  []*TaskGroup // non-root groups, by id
	tasks   []*Task
	parents []*ForkParent // NewForkParent's, in order

	now   int64 // the time every CPU has reached (after Run): written only by the driver between epochs
	epoch int64 // the epoch length: fixed once built

	simLayout      // the machine's domains and LLCs: fixed once built
	simSymbols     // the profile's symbols and the weave's sites: fixed once built, but for user symbols added at setup
	rootDomain     // the root domain's globals: written only at the barrier
	published      // what the CPUs see of each other: written only at the barrier
	barrierScratch // the barrier's and the driver's working state: written only at the barrier
	RunStats       // counts about the run itself: written only at the barrier
	simHooks       // observers: set before Run
}

// simLayout is the machine's scheduling topology, fixed once built (New,
// buildDomains) but for forkView.
type simLayout struct {
	domains [][]*Domain // per CPU, lowest first; each Domain owned by its CPU (Domain)
	llc     []llcInfo   // per CPU
	// forkView is what a parent forking at setup sees of each CPU: the
	// tasks created there so far (fork.go). Written only by NewTask.
	forkView       []forkCPU
	allCPUs        []int        // 0..n-1 (publish)
	smtActive      bool         // some core has two threads (sched_smt_present)
	ipiDelay       int64        // an IPI's delivery
	pollDelay      int64        // a polling idle CPU noticing a write (idle exit)
	idlePolls      bool         // idle CPUs poll need_resched (x86's mwait idle), so a wakeup needs no IPI
	balanceRunning weave.LineID // sched_balance_running (the line)
	// uclampUsed is sched_uclamp_used: set by New and NewTask (setup).
	uclampUsed bool
}

// simSymbols are the profile's symbols and the contention sites their
// accesses are logged under. Fixed once built; userSymbol adds user
// symbols at setup (before Run).
type simSymbols struct {
	syms    *symbolTable
	sites   []weave.Site // per kernel symbol
	siteSym []Symbol     // by weave.Site: the kernel symbol a site's stall is charged to (0 for other sites)
	// newidleSites are the sites of the accesses a newidle balance makes,
	// per kernel symbol (RQ.site while RQ.inNewidle): charged to the same
	// symbols in the profile, but kept apart so that the stall they pay,
	// whenever the weave reports it, reaches the balance's measured cost
	// (update_newidle_cost()). They are the Sites newidleLo up to
	// newidleLo+numKernelSymbols.
	newidleSites []weave.Site
	newidleLo    weave.Site
}

// rootDomain is the machine-wide scheduler state the kernel keeps in the
// root domain and in nohz: written only at the barrier (the CPUs read it
// in their epochs).
type rootDomain struct {
	overloaded      bool  // rd->overload, recomputed at barriers
	nrOverloaded    int   // CPUs whose snapshot has nr_running >= 2 (setSnap)
	nohzIdle        int   // tickless idle CPUs (nohz.nr_cpus)
	nohzNextBalance int64 // nohz.next_balance, jiffies
	llcBusy         []int // nr_busy_cpus per LLC id
	ilbKicked       bool  // an ILB was kicked at this barrier
}

// published is what the CPUs see of each other between barriers
// (snapshot.go, view.go): written only at the barrier.
type published struct {
	snap []cpuSnap // per CPU
	// onCPU[c] is the task CPU c is still switching out (p->on_cpu: the
	// __schedule() that put it to sleep has not physically finished,
	// its stall unpaid) and until when.
	onCPU   []onCPUSnap
	llcSnap []llcSnap // by LLC id (its first CPU)
}

// barrierScratch is the barrier's working state (the driver sets the
// epoch's bounds before stepping it): written only at the barrier, or by
// the driver between epochs.
type barrierScratch struct {
	epochEnd   int64        // the end of the epoch being closed by the barrier
	epochStart int64        // and its start
	nextAt     []int64      // each CPU's nextStep() before the epoch (driver.go), kept for the CPUs not visited (visit.go)
	live       []uint64     // bit i: nextAt[i] >= 0 (setNextAt)
	need       []bool       // CPUs the next barrier visits (visit.go)
	needList   []int        // the same, in marking order
	visited    []bool       // the CPUs this barrier visits (visit.go)
	visit      []int        // the same, in CPU order
	stepped    []int        // the CPUs stepped in the epoch (driver.go)
	workers    *workers     // the parallel driver's, during a Run (driver.go)
	tune       shareTuner   // whether the parallel driver shares its rounds (driver_tune.go)
	logsBuf    []*weave.Log // the visited CPUs' logs, for the weave
	inBarrier  bool         // the barrier is running: changes to a CPU mark it (touch)
	inHooks    bool         // the barrier runs its hooks (OnBarrier, sharedcount.go)
	opsBuf     []remoteOp
	idleClaims []idleClaim // per CPU: this barrier's first wakeup onto it while idle (redirectClaimedIdle)
	// wakeQ[c]: waker c's claimed wakeups waiting for the weave to serve
	// their marked last access (deferredWake).
	wakeQ [][]deferredWake
	// racedQ: this barrier's raced wakeups, queued after its other
	// claims (flushRacedWakes).
	racedQ []racedWake
	// heldBuf and passBuf are settleHolds' scratch: the held CPUs, the
	// last pass's CPUs.
	heldBuf, passBuf []int
	// sigBuf and wonBuf are resolveSignalHolds' scratch: the held
	// signals, the tasks their first signals woke.
	sigBuf []int
	wonBuf []*Task
	// carried are the CPUs held at a wait whose dequeue falls after the
	// last barrier (hold.go: resolveHold), in CPU order: the next
	// barrier settles them. Written only at the barrier.
	carried []int
	// until is RunUntil's end: a held wait is not carried past it.
	until int64
}

// RunStats are counts about the run itself: barriers, and cross-CPU
// changes that reached a CPU whose clock had already passed them (how
// many, by how much in total). Written only at the barrier.
type RunStats struct {
	Epochs   int64
	LateMsgs int64
	LateNS   int64
	// HoldPasses counts the barrier's extra passes that stepped CPUs
	// held at a wait (hold.go).
	HoldPasses int64
	visits     int64 // the visits of all barriers so far (visit_test.go)
}

// simHooks are the run's observers, set before Run.
type simHooks struct {
	// onRunDelay, when set, is told each runnable wait as it ends
	// (sched_info_arrive()), on the task's CPU's goroutine.
	onRunDelay func(t *Task, delay int64)
	tracer     *tracer // set by EnableTrace before Run; its cpu[i] owned by CPU i, the rest written only at the barrier
	// barrierHooks run at every barrier (OnBarrier, sharedcount.go).
	barrierHooks []func(cpus []int)
}

// OnRunDelay registers f to be called with every runnable wait (the time
// from enqueue to running, what sched_info's run_delay sums) as it ends.
// f runs on the goroutine of the task's CPU, which owns the task then: it
// may update per-task state (a histogram per task) without locking, but
// must not touch other tasks' state. Set it before Run.
func (s *Sim) OnRunDelay(f func(t *Task, delay int64)) { s.onRunDelay = f }

func (s *Sim) recordWait(p *Task, d int64) {
	if s.onRunDelay != nil {
		s.onRunDelay(p, d)
	}
}

// New builds the machine's runqueues.
func New(cfg Config) (*Sim, error) {
	if cfg.Machine == nil {
		return nil, fmt.Errorf("emu: Config.Machine is required")
	}
	switch cfg.Driver {
	case "":
		cfg.Driver = "parallel"
	case "serial", "parallel":
	default:
		return nil, fmt.Errorf("driver %q unknown (allowed: serial, parallel)", cfg.Driver)
	}
	if err := cfg.Sched.Check(cfg.Features); err != nil {
		return nil, err
	}
	m := cfg.Machine
	s := &Sim{
		m: m, feat: cfg.Features, cfg: cfg,
		tun:   NewTunables(m.NumCPUs(), m.HZ, cfg.Sched),
		space: weave.NewSpace(m),
	}
	s.syms = newSymbolTable()
	s.epoch = cfg.Epoch
	if s.epoch <= 0 {
		s.epoch = s.Lookahead()
	}
	for sym := Symbol(0); sym < numKernelSymbols; sym++ {
		site := s.space.Site(kernelSymbolNames[sym])
		s.sites = append(s.sites, site)
		s.setSiteSym(site, sym)
	}
	// A wait for a held pipe mutex is mutex_optimistic_spin()'s.
	s.space.SetLockSpin(weave.LockSpin{Lock: s.sites[SymMutexLock], OnOwner: s.sites[SymMutexSpinOnOwner], Queued: s.sites[SymOSQLock]})
	for sym := Symbol(0); sym < numKernelSymbols; sym++ {
		site := s.space.Site(kernelSymbolNames[sym] + " (newidle)")
		if sym == 0 {
			s.newidleLo = site
		} else if site != s.newidleLo+weave.Site(sym) {
			panic(fmt.Sprintf("emu: newidle site of %s is %d, not %d", kernelSymbolNames[sym], site, s.newidleLo+weave.Site(sym)))
		}
		s.newidleSites = append(s.newidleSites, site)
		s.setSiteSym(site, sym)
	}
	s.root = &TaskGroup{Name: "root", id: -1, shares: eevdf.Nice0Load,
		cfsRq: make([]*CfsRq, m.NumCPUs()), se: make([]*SchedEntity, m.NumCPUs())}
	for cpu := 0; cpu < m.NumCPUs(); cpu++ {
		home := m.CPUs[cpu].Node
		rq := &RQ{
			cpu: cpu, sim: s, m: m, feat: cfg.Features, tun: s.tun,
			smtYield: int64(math.Round(m.Lat.SMTYield * 1000)),
			rqAccount: rqAccount{
				log:     s.space.NewLog(cpu),
				profile: make([]int64, len(s.syms.names)),
				calls:   newCallTree(len(s.syms.names)),
			},
			rqKernel: rqKernel{
				sisRecent: -1,
				avgIdle:   2 * s.tun.MigrationCost,
				// sched_init(): wake_avg_idle = avg_idle.
				wakeAvgIdle: 2 * s.tun.MigrationCost,
				lock:        contention.NewSpinLock(s.space, "rq"+itoa(cpu)+".lock", home),
				wake:        contention.NewWakeList(s.space, "rq"+itoa(cpu)+".wake_list", home),
				uclamp:      contention.NewUclampRQ(s.space, "rq"+itoa(cpu)+".uclamp", home),
			},
		}
		rq.cfs = newCfsRq(rq, s.root, s.tun)
		rq.currLine = s.space.NewLine("rq"+itoa(cpu)+".curr", home)
		rq.avgLine = s.space.NewLine("rq"+itoa(cpu)+".cfs.avg", home)
		s.root.cfsRq[cpu] = rq.cfs
		s.cpus = append(s.cpus, rq)
	}
	// core.c: sysctl_sched_uclamp_handler(): a write that changes a
	// system default clamp enables sched_uclamp_used.
	s.uclampUsed = cfg.Features.Has(UCLAMP) || s.tun.UclampUtilMin != contention.SchedCapacityScale || s.tun.UclampUtilMax != contention.SchedCapacityScale
	s.llcSnap = make([]llcSnap, m.NumCPUs())
	s.buildDomains()
	s.forkView = make([]forkCPU, len(s.cpus))
	s.phaseBalanceTimers()
	s.balanceRunning = s.space.NewLine("sched_balance_running", 0)
	s.llcBusy = make([]int, m.NumCPUs())
	s.snap = make([]cpuSnap, m.NumCPUs())
	s.idleClaims = make([]idleClaim, m.NumCPUs())
	for i := range s.snap {
		s.snapCounts(i, 1) // the zero snapshots: busy, one task or none
	}
	s.onCPU = make([]onCPUSnap, m.NumCPUs())
	for _, c := range m.Cores {
		if len(c) > 1 {
			s.smtActive = true
		}
	}
	s.ipiDelay = max(1, m.Cost(hwmodel.OpIPIDeliver))
	s.pollDelay = max(1, m.Cost(hwmodel.OpIdleExit))
	// x86's idle drivers (intel_idle, acpi_idle's FFH MWAIT) monitor the
	// thread's flags with TIF_POLLING_NRFLAG set; arm64's cpu_do_idle()
	// is a WFI that only an interrupt ends (simplified: the host preset,
	// a guest halting in default_idle(), is taken as polling too).
	s.idlePolls = m.Arch != "arm64"
	s.allCPUs = seq(len(s.cpus))
	for _, rq := range s.cpus {
		rq.republish = true
	}
	s.publish()
	return s, nil
}

// Lookahead is the smallest delay between one CPU's action and another
// CPU acting on it: an IPI's delivery, or a polling idle CPU waking
// (DESIGN.md).
func (s *Sim) Lookahead() int64 { return MachineLookahead(s.m) }

// MachineLookahead is Lookahead of a Sim on m, without one.
func MachineLookahead(m *hwmodel.Machine) int64 {
	return max(1, min(m.Cost(hwmodel.OpIPIDeliver), m.Cost(hwmodel.OpIdleExit)))
}

// Seed is the run's seed (Config.Seed).
func (s *Sim) Seed() uint64 { return s.cfg.Seed }

// Machine is the emulated machine.
func (s *Sim) Machine() *hwmodel.Machine { return s.m }

// Features is the feature set.
func (s *Sim) Features() Features { return s.feat }

// Tunables are the scheduler tunables in force.
func (s *Sim) Tunables() Tunables { return s.tun }

// RQ returns CPU cpu's runqueue.
func (s *Sim) RQ(cpu int) *RQ { return s.cpus[cpu] }

// Root is the root task group.
func (s *Sim) Root() *TaskGroup { return s.root }

// Space is the shared-memory space (for line statistics).
func (s *Sim) Space() *weave.Space { return s.space }

// Tasks lists the tasks in creation order.
func (s *Sim) Tasks() []*Task { return s.tasks }

// Now is the time the run has reached.
func (s *Sim) Now() int64 { return s.now }

// TaskSpec describes a task to create.
type TaskSpec struct {
	Comm string
	// UserSym and DSO are the function the task's user time is charged
	// to and its program, as perf report names them ("": the comm).
	UserSym, DSO string
	// Parent, when set, is the tool's process that forks the task: the
	// trace logs the fork in its context on its CPU.
	Parent *ForkParent
	Nice   int
	CPU    int
	Group  *TaskGroup // nil: the root group
	Prog   Program
	// CPUs, when set, is the task's affinity (sched_setaffinity()): the
	// only CPUs it may run on. CPU must be one of them.
	CPUs []int
	// Sems are the semaphores the task waits on (a pipe's data, its
	// socket's receive queue), bound to it as their owner.
	Sems []*Sem
	// Clamp, when set, is the task's uclamp request [min, max]
	// (sched_setattr() with SCHED_FLAG_UTIL_CLAMP); it turns the uclamp
	// static key on.
	Clamp *[2]uint32
	// MM names the task's address space: tasks with the same MM are
	// threads of one process; a switch to a task of another MM pays
	// context_switch()'s switch_mm (hwmodel.OpSwitchMM). 0: no mm is
	// modeled for the task (it never pays it).
	MM int
	// Slice, when set, is sched_attr.sched_runtime (ns) as v6.12's
	// __setscheduler_params() takes it for a fair task: se->slice,
	// clamped to [0.1 ms, 100 ms], with se->custom_slice set. It needs
	// an EEVDF profile; the model applies it under any (v6.6 and v6.7
	// ignore sched_runtime for SCHED_OTHER: use it with v6.11-eevdf and
	// later).
	Slice uint64
}

// ForkParent is a tool's process that forks a workload's tasks at setup:
// it is no task of the run (fork.go), but the trace names it.
type ForkParent struct {
	Comm string
	PID  int
	CPU  int
}

// NewForkParent names the process, on CPU cpu, that forks tasks
// (TaskSpec.Parent). Its pid is below the tasks' (which start at 1000).
func (s *Sim) NewForkParent(comm string, cpu int) (*ForkParent, error) {
	if cpu < 0 || cpu >= len(s.cpus) {
		return nil, fmt.Errorf("fork parent %q: cpu %d out of range [0, %d)", comm, cpu, len(s.cpus))
	}
	if len(s.parents) >= 100 {
		return nil, fmt.Errorf("fork parent %q: at most 100 parents", comm)
	}
	p := &ForkParent{Comm: comm, PID: 900 + len(s.parents), CPU: cpu}
	s.parents = append(s.parents, p)
	return p, nil
}

// NewTask creates a task and wakes it on its CPU (wake_up_new_task()):
// at that CPU's current time, or, with a start delay d > 0
// (Config.StartJitter), at d later, when the CPU handles the task's
// evFork. A delayed start is a delayed fork, not a fork followed by a
// sleep: the kernel's tools do not sleep their threads before they run,
// and the wakeup of such a sleep would give the task CFS's sleeper
// credit (place_entity(initial=0)) instead of the fork placement
// (task_fork_fair(): place_entity(initial=1), START_DEBIT).
func (s *Sim) NewTask(spec TaskSpec) (*Task, error) {
	if spec.CPU < 0 || spec.CPU >= len(s.cpus) {
		return nil, fmt.Errorf("task %q: cpu %d out of range [0, %d)", spec.Comm, spec.CPU, len(s.cpus))
	}
	if spec.Nice < eevdf.MinNice || spec.Nice > eevdf.MaxNice {
		return nil, fmt.Errorf("task %q: nice %d out of range [%d, %d]", spec.Comm, spec.Nice, eevdf.MinNice, eevdf.MaxNice)
	}
	if spec.Prog == nil {
		return nil, fmt.Errorf("task %q: no program", spec.Comm)
	}
	g := spec.Group
	if g == nil {
		g = s.root
	}
	pid := len(s.tasks) + 1000
	t := &Task{
		PID: pid, Comm: spec.Comm, Nice: spec.Nice, cpu: spec.CPU, group: g, prog: spec.Prog, mm: spec.MM, exitedAt: -1,
		sym:           s.userSymbol(cmp.Or(spec.UserSym, spec.Comm), cmp.Or(spec.DSO, spec.Comm)),
		parent:        spec.Parent,
		rng:           rand.New(rand.NewPCG(s.cfg.Seed, uint64(pid))),
		lastQueued:    -1,
		detachedAt:    -1,
		recentUsedCPU: spec.CPU,
		sim:           s,
	}
	var delay int64 // the fork's start delay
	if s.cfg.StartJitter > 0 {
		j := rand.New(rand.NewPCG(s.cfg.Seed^0x7374617274, uint64(pid))) // "start"
		delay = j.Int64N(s.cfg.StartJitter)
	}
	t.sem = &Sem{Name: spec.Comm + ".wait", owner: t}
	for _, sem := range spec.Sems {
		if sem.owner != nil {
			return nil, fmt.Errorf("task %q: %v already belongs to %v", spec.Comm, sem, sem.owner)
		}
		sem.owner = t
	}
	if spec.CPUs != nil {
		t.affinity = make([]bool, len(s.cpus))
		for _, c := range spec.CPUs {
			if c < 0 || c >= len(s.cpus) {
				return nil, fmt.Errorf("task %q: affinity CPU %d out of range [0, %d)", spec.Comm, c, len(s.cpus))
			}
			t.affinity[c] = true
		}
		if !t.affinity[spec.CPU] {
			return nil, fmt.Errorf("task %q: cpu %d is not in its affinity %v", spec.Comm, spec.CPU, spec.CPUs)
		}
	}
	if spec.Clamp != nil {
		lo, hi := spec.Clamp[0], spec.Clamp[1]
		if lo > hi || hi > contention.SchedCapacityScale {
			return nil, fmt.Errorf("task %q: uclamp [%d, %d] invalid (need 0 <= min <= max <= %d)", spec.Comm, lo, hi, contention.SchedCapacityScale)
		}
		t.uclampReq = [2]uint32{lo, hi}
		t.hasClamp = true
		s.uclampUsed = true // static_branch_enable(&sched_uclamp_used)
	}
	se := &t.se
	se.Owner = se
	se.task = t
	se.Load.SetNice(spec.Nice)
	if spec.Slice != 0 {
		if !s.feat.Has(EEVDF) {
			return nil, fmt.Errorf("task %q: slice %d needs an EEVDF profile (sched_runtime sets se->slice from v6.12)", spec.Comm, spec.Slice)
		}
		se.Slice = min(max(spec.Slice, nsecPerMsec/10), nsecPerMsec*100)
		se.CustomSlice = true
	}
	s.setTaskRQ(t, spec.CPU)
	rq := s.cpus[spec.CPU]
	s.tasks = append(s.tasks, t)
	s.noteFork(t, spec.CPU)
	if delay > 0 {
		// kernel/fork.c: kernel_clone() -> copy_process() (sched_fork())
		// and wake_up_new_task(), later by delay. Until then the task
		// is TASK_NEW: no runqueue holds it and a wakeup leaves its
		// signal pending (asleepOn).
		rq.events.push(event{t: rq.now + delay, kind: evFork, task: t})
		rq.markDirty(t)
		rq.republish = true
		s.publish()
		return t, nil
	}
	rq.enterKernel()
	rq.forkTask(t)
	rq.events.push(event{t: rq.now, kind: evStart})
	s.publish()
	return t, nil
}

// isNewidleSite reports whether site is one of the newidle sites.
func (s *Sim) isNewidleSite(site weave.Site) bool {
	return site >= s.newidleLo && site < s.newidleLo+weave.Site(numKernelSymbols)
}

// forkTask is the scheduler's part of kernel/fork.c: kernel_clone() for
// t on this CPU, now: core.c: sched_fork()'s init_entity_runnable_average()
// (fair.c), then wake_up_new_task(), whose post_init_entity_util_avg()
// reads the cfs_rq's util_avg as it is at the fork. Simplified: the PELT
// init runs before wake_up_new_task()'s update_rq_clock(), and
// task_fork_fair() runs inside wakeUpNewTask, on the child's CPU (the
// kernel runs it in sched_fork() on the parent's CPU; every task of a
// workload is created on its own CPU here).
func (rq *RQ) forkTask(t *Task) {
	se := &t.se
	pelt.InitEntityRunnableAverage(&se.Avg, true, se.weightDown())
	pelt.PostInitEntityUtilAvg(&se.Avg, &se.cfsRq.avg, se.weightDown(), 1024)
	rq.wakeUpNewTask(t)
	rq.markDirty(t)
	rq.republish = true
}

// setTaskRQ is sched.h: set_task_rq(): point the task's entity at its
// group's queue and entity on cpu.
func (s *Sim) setTaskRQ(t *Task, cpu int) {
	t.cpu = cpu
	t.se.cfsRq = t.group.cfsRq[cpu]
	t.se.parent = t.group.se[cpu]
	t.se.depth = 0
	if t.se.parent != nil {
		t.se.depth = t.se.parent.depth + 1
	}
}

func (s *Sim) userSymbol(name, dso string) Symbol {
	sym := s.syms.userSymbol(name, dso)
	for _, rq := range s.cpus {
		for len(rq.profile) < len(s.syms.names) {
			rq.profile = append(rq.profile, 0)
			rq.calls.last = append(rq.calls.last, 0)
		}
	}
	return sym
}

// phaseBalanceTimers sets each domain's sd->last_balance, and so each
// CPU's rq->next_balance, at a random phase of its idle balance interval,
// from the seed. The kernel sets last_balance = jiffies when it builds the
// domains at boot; a benchmark starts on a machine that has been up, when
// each CPU's periodic balance of each level is somewhere in its interval.
// Starting them all at 0 would delay every CPU's first LLC-level balance,
// and with it the first update of sd_llc_shared->nr_idle_scan from the
// load (update_idle_cpu_scan()), by a whole interval (112 ms on spr-2s).
func (s *Sim) phaseBalanceTimers() {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, 0x62616c616e6365)) // "balance"
	for cpu, doms := range s.domains {
		rq := s.cpus[cpu]
		next := int64(1) << 62
		for _, sd := range doms {
			iv := rq.balanceInterval(sd, false)
			sd.lastBalance = -rng.Int64N(iv)
			next = min(next, sd.lastBalance+iv)
		}
		if len(doms) > 0 {
			rq.nextBalance = next
		}
	}
}

// setSiteSym charges site's stall to sym.
func (s *Sim) setSiteSym(site weave.Site, sym Symbol) {
	for int(site) >= len(s.siteSym) {
		s.siteSym = append(s.siteSym, 0)
	}
	s.siteSym[site] = sym
}

// symOfSite is the symbol site's stall is charged to (0 for a site no
// kernel symbol owns).
func (s *Sim) symOfSite(site weave.Site) Symbol {
	if int(site) < len(s.siteSym) {
		return s.siteSym[site]
	}
	return 0
}
