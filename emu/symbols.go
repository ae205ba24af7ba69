package emu

import (
	"fmt"

	"github.com/rqemu/rqemu/hwmodel"
)

// Symbol is what a virtual nanosecond is charged to: a kernel function, a
// workload's user code, or idle. The profile (-profile) is a table of
// nanoseconds per symbol, printed like `perf report`.
type Symbol uint16

// Kernel symbols, named as perf report would name them. Inlined helpers are
// charged to the function perf sees: update_tg_load_avg() to
// update_load_avg(), calc_group_shares() to update_cfs_group() (which is
// how Aaron Lu's profile attributes the tg->load_avg traffic).
const (
	SymIdle Symbol = iota
	SymSchedule
	SymPickNextTaskFair
	SymEnqueueTaskFair
	SymDequeueTaskFair
	SymUpdateCurr
	SymUpdateLoadAvg
	SymUpdateCfsGroup
	SymReweightEntity
	SymTryToWakeUp
	SymSelectTaskRQFair
	SymSelectIdleSibling
	SymTTWUQueueWakelist
	SymSchedTTWUPending
	SymSendIPI
	SymIPIHandler
	SymIdleExit
	SymSchedTick
	SymTaskTickFair
	SymLoadBalance
	SymNewidleBalance
	SymUpdateBlockedAverages
	SymSetTaskCPU
	SymRemoveEntityLoadAvg
	SymUclampRQInc
	SymUclampRQDec
	SymSyscall
	SymPipeWrite
	SymPipeRead
	SymSockSend
	SymSockRecv
	SymSwitchMM
	SymMutexLock
	SymMutexUnlock
	SymRawSpinLockIrqsave
	SymHandleMMFault
	SymExitMMAP
	SymMigrationCPUStop
	SymSetCPUsAllowedPtr
	SymVFSWrite
	SymVFSRead
	SymFileUpdateTime
	SymTouchAtime
	SymMutexSpinOnOwner
	SymOSQLock
	SymHrtimerInterrupt
	SymHrtimerStart
	SymFgetLight
	SymFput
	numKernelSymbols
)

var kernelSymbolNames = [numKernelSymbols]string{
	SymIdle:                  "do_idle",
	SymSchedule:              "__schedule",
	SymPickNextTaskFair:      "pick_next_task_fair",
	SymEnqueueTaskFair:       "enqueue_task_fair",
	SymDequeueTaskFair:       "dequeue_task_fair",
	SymUpdateCurr:            "update_curr",
	SymUpdateLoadAvg:         "update_load_avg",
	SymUpdateCfsGroup:        "update_cfs_group",
	SymReweightEntity:        "reweight_entity",
	SymTryToWakeUp:           "try_to_wake_up",
	SymSelectTaskRQFair:      "select_task_rq_fair",
	SymSelectIdleSibling:     "select_idle_sibling",
	SymTTWUQueueWakelist:     "__ttwu_queue_wakelist",
	SymSchedTTWUPending:      "sched_ttwu_pending",
	SymSendIPI:               "native_send_call_func_single_ipi",
	SymIPIHandler:            "sysvec_call_function_single",
	SymIdleExit:              "intel_idle", // named per vendor and arch: idleExitName, arm64Names
	SymSchedTick:             "sched_tick",
	SymTaskTickFair:          "task_tick_fair",
	SymLoadBalance:           "sched_balance_rq",
	SymNewidleBalance:        "sched_balance_newidle",
	SymUpdateBlockedAverages: "sched_balance_update_blocked_averages",
	SymSetTaskCPU:            "set_task_cpu",
	SymRemoveEntityLoadAvg:   "remove_entity_load_avg",
	SymUclampRQInc:           "uclamp_rq_inc",
	SymUclampRQDec:           "uclamp_rq_dec",
	SymSyscall:               "entry_SYSCALL_64",
	SymPipeWrite:             "pipe_write",
	SymPipeRead:              "pipe_read",
	SymSockSend:              "udp_sendmsg",
	SymSockRecv:              "udp_recvmsg",
	SymSwitchMM:              "switch_mm_irqs_off",
	// The pipe's mutex and wait queues (pipe.go). mutex_lock is the fast
	// path's cmpxchg and the transfer that takes the lock; a wait for a
	// held mutex is the optimistic spin (kernel/locking/mutex.c,
	// mutex_optimistic_spin(), v6.6), which perf shows as
	// mutex_spin_on_owner (the queue's head) and osq_lock (behind it)
	// under __mutex_lock (weave.LockSpin; simplified: no __mutex_lock
	// frame of its own). spin_lock_irq() and spin_lock_irqsave() are both
	// _raw_spin_lock_irqsave's.
	SymMutexLock:          "mutex_lock",
	SymMutexUnlock:        "mutex_unlock",
	SymRawSpinLockIrqsave: "_raw_spin_lock_irqsave",
	// A forked child's copy-on-write faults (hwmodel.OpPageFault) are
	// handle_mm_fault()'s, the exception entry and do_wp_page() included;
	// a process's teardown at exit (hwmodel.OpExitMMAP) is exit_mmap()'s.
	SymHandleMMFault: "handle_mm_fault",
	SymExitMMAP:      "exit_mmap",
	// The stopper's half of a sched_setaffinity() move (affinity.go).
	SymMigrationCPUStop:  "migration_cpu_stop",
	SymSetCPUsAllowedPtr: "__set_cpus_allowed_ptr",
	// A pipe write()'s or read()'s work around the pipe's mutex
	// (pipe.go, pipeCostBefore): the VFS layer before __pipe_lock(),
	// the timestamps after __pipe_unlock().
	SymVFSWrite:         "vfs_write",
	SymVFSRead:          "vfs_read",
	SymFileUpdateTime:   "file_update_time",
	SymTouchAtime:       "touch_atime",
	SymMutexSpinOnOwner: "mutex_spin_on_owner",
	SymOSQLock:          "osq_lock",
	// A sleeper's hrtimer (hrtimer.go): armed by hrtimer_start_range_ns(),
	// expired in the local timer interrupt, charged to hrtimer_interrupt()
	// with the interrupt's entry and exit (simplified: no
	// sysvec_apic_timer_interrupt / irq entry frames of their own).
	SymHrtimerInterrupt: "hrtimer_interrupt",
	SymHrtimerStart:     "hrtimer_start_range_ns",
	// A shared struct file's reference (file.go): taken by
	// __fget_light() (get_file_rcu() inlined), dropped by fput().
	SymFgetLight: "__fget_light",
	SymFput:      "fput",
}

// opSymbol is the symbol each hwmodel base cost is charged to.
var opSymbol = [hwmodel.NumKernelOps]Symbol{
	hwmodel.OpSchedule:      SymSchedule,
	hwmodel.OpPickNext:      SymPickNextTaskFair,
	hwmodel.OpEnqueue:       SymEnqueueTaskFair,
	hwmodel.OpDequeue:       SymDequeueTaskFair,
	hwmodel.OpUpdateCurr:    SymUpdateCurr,
	hwmodel.OpUpdateLoadAvg: SymUpdateLoadAvg,
	hwmodel.OpCfsGroup:      SymUpdateCfsGroup,
	hwmodel.OpReweight:      SymReweightEntity,
	hwmodel.OpTTWU:          SymTryToWakeUp,
	hwmodel.OpSelectRQ:      SymSelectTaskRQFair,
	hwmodel.OpSISProbe:      SymSelectIdleSibling,
	hwmodel.OpIPISend:       SymSendIPI,
	hwmodel.OpIPIDeliver:    SymSendIPI, // not CPU time; see ipiDelay
	hwmodel.OpIPIRecv:       SymIPIHandler,
	hwmodel.OpIdleExit:      SymIdleExit,
	hwmodel.OpTick:          SymSchedTick,
	hwmodel.OpBalanceRQ:     SymLoadBalance,
	hwmodel.OpMigrate:       SymSetTaskCPU,
	hwmodel.OpSyscall:       SymSyscall,
	hwmodel.OpPipeWrite:     SymPipeWrite,
	hwmodel.OpPipeRead:      SymPipeRead,
	hwmodel.OpSockSend:      SymSockSend,
	hwmodel.OpSockRecv:      SymSockRecv,
	hwmodel.OpSwitchMM:      SymSwitchMM,
	hwmodel.OpPageFault:     SymHandleMMFault,
	hwmodel.OpExitMMAP:      SymExitMMAP,
	hwmodel.OpUnixSend:      SymSockSend,
	hwmodel.OpUnixRecv:      SymSockRecv,
	hwmodel.OpHrtimerIRQ:    SymHrtimerInterrupt,
	hwmodel.OpHrtimerStart:  SymHrtimerStart,
}

// The names perf shows differ from the identities above by kernel
// version, architecture and socket family; the profile prints these
// (symbolName), the engine keeps the identities.

// pre610Names are the v5.15-v6.9 names of the functions v6.10 renamed
// (commits "sched/balance: Rename ..." by Ingo Molnar, 2024): every kernel
// profile rqemu models (v5.15-cfs ... v6.7-eevdf) predates them.
var pre610Names = map[Symbol]string{
	SymLoadBalance:           "load_balance",
	SymNewidleBalance:        "newidle_balance",
	SymUpdateBlockedAverages: "update_blocked_averages",
	SymSchedTick:             "scheduler_tick",
}

// arm64Names are the arm64 paths (arch/arm64/kernel/entry-common.c,
// smp.c; drivers/irqchip/irq-gic*.c) of the x86 entry and IPI symbols.
var arm64Names = map[Symbol]string{
	SymSyscall:    "el0_svc",
	SymSendIPI:    "gic_ipi_send_mask",
	SymIPIHandler: "do_handle_IPI",
	SymSwitchMM:   "__switch_mm", // arch/arm64/mm/context.c: check_and_switch_context() via switch_mm()
	SymIdleExit:   "cpu_do_idle", // arch/arm64/kernel/idle.c: WFI, returned from on the wakeup
}

// idleExitName is where a CPU leaving idle spends its exit latency, in
// the idle driver the vendor's servers use: intel_idle's MWAIT
// (drivers/idle/intel_idle.c: intel_idle()) on Intel, acpi_idle's FFH
// MWAIT or I/O-port C-states on AMD (drivers/acpi/processor_idle.c:
// acpi_idle_do_entry()); arm64 is arm64Names'. A guest without a cpuidle
// driver halts in default_idle() (simplified: the host preset names its
// vendor's driver).
func idleExitName(vendor string) string {
	if vendor == "amd" {
		return "acpi_idle_do_entry"
	}
	return "intel_idle"
}

// IdleLoopSymbols are the names under which a profile charges a CPU's
// time in the idle task on any modeled machine: do_idle() itself (the
// halted time) and the idle driver's exit latency (idleExitName, and
// arm64's cpu_do_idle). Their sum is the idle time perf stat's task-clock
// leaves out.
func IdleLoopSymbols() []string {
	return []string{kernelSymbolNames[SymIdle], idleExitName("intel"), idleExitName("amd"), arm64Names[SymIdleExit]}
}

// sockNames are the socket layer's send and receive functions per family
// (net/unix/af_unix.c, net/ipv4/udp.c, net/ipv4/tcp.c).
var sockNames = map[string][2]string{
	"unix": {"unix_stream_sendmsg", "unix_stream_recvmsg"},
	"udp":  {"udp_sendmsg", "udp_recvmsg"},
	"tcp":  {"tcp_sendmsg", "tcp_recvmsg"},
}

// SetSocketFamily names the socket layer in this Sim's profile after the
// workload's sockets: "unix" (AF_UNIX stream: hackbench, perf bench
// messaging), "udp" (the default) or "tcp". Output only.
func (s *Sim) SetSocketFamily(family string) error {
	if _, ok := sockNames[family]; !ok {
		return fmt.Errorf("socket family %q unknown (allowed: unix, udp, tcp)", family)
	}
	s.syms.family = family
	return nil
}

// symbolName is the name perf report shows for sym on this Sim's machine
// and kernel.
func (s *Sim) symbolName(sym Symbol) string {
	if s.syms.user[sym] {
		return s.syms.names[sym]
	}
	if f, ok := sockNames[s.syms.family]; ok && (sym == SymSockSend || sym == SymSockRecv) {
		return f[sym-SymSockSend]
	}
	if s.m.Arch == "arm64" {
		if n, ok := arm64Names[sym]; ok {
			return n
		}
	} else if sym == SymIdleExit {
		return idleExitName(s.m.Vendor)
	}
	if n, ok := pre610Names[sym]; ok {
		return n
	}
	return s.syms.names[sym]
}

// symbolTable names the symbols of one Sim: the kernel's, then the user
// symbols workloads register (one per program, like perf's [.] lines).
type symbolTable struct {
	names  []string
	user   []bool
	dso    []string // a user symbol's program (perf's Shared Object)
	family string   // the socket family SetSocketFamily chose ("": udp)
	// byName finds a user symbol (a workload of many threads registers
	// one per comm: a scan would make setup quadratic).
	byName map[string]Symbol
}

func newSymbolTable() *symbolTable {
	t := &symbolTable{}
	for _, n := range kernelSymbolNames {
		t.names = append(t.names, n)
		t.user = append(t.user, false)
		t.dso = append(t.dso, "")
	}
	return t
}

// userSymbol interns a user-space function name of program dso.
func (t *symbolTable) userSymbol(name, dso string) Symbol {
	key := dso + "\x00" + name
	if sym, ok := t.byName[key]; ok {
		return sym
	}
	if t.byName == nil {
		t.byName = map[string]Symbol{}
	}
	t.names = append(t.names, name)
	t.user = append(t.user, true)
	t.dso = append(t.dso, dso)
	sym := Symbol(len(t.names) - 1)
	t.byName[key] = sym
	return sym
}
