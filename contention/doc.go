// Package contention holds the memory that the emulated kernel shares
// between CPUs, and the accounting that prices it for the target machine.
//
// Where the kernel shares memory between CPUs, rqemu's CPU goroutines share
// real memory: each object here is real, padded host memory operated on
// with real atomics, so the host's cache lines really bounce.
//
//	Counter    tg->load_avg                         fair.c: update_tg_load_avg(), calc_group_shares()
//	SpinLock   rq->__lock + rq->nr_running (line 0)  core.c: raw_spin_rq_lock(), idle_cpu()
//	WakeList   call_single_queue + rq->ttwu_pending  core.c: __ttwu_queue_wakelist(), sched_ttwu_pending()
//	UclampRQ   rq->uclamp[] + uclamp_flags (2 lines) core.c: uclamp_rq_inc_id(), uclamp_rq_dec_id()
//	LLCShared  sd_llc_shared                         fair.c: select_idle_cpu(), __update_idle_core()
//	Removed    cfs_rq->removed                       fair.c: remove_entity_load_avg(), update_cfs_rq_load_avg()
//
// Every operation also appends (virtual time, line, op, site) to the calling
// modeled CPU's own weave.Log, against the lines its constructor registered
// in a weave.Space; at an epoch barrier the engine prices the logs there
// (package weave).
//
// # Physics and determinism
//
// What an operation logs depends only on the call, never on the host race:
// a Lock is logged once however long the host spun, a Push logs the same
// accesses whether or not its cmpxchg retried. So the weave, and everything
// the engine charges from it, is deterministic. The values the operations
// return (a Counter's new value, whether a wake list was empty, what a
// Drain or Take found) are physical and racy; the engine's decisions never
// depend on them (it reads the epoch snapshots of DESIGN.md). The only
// exception is SpinLock.TryLock, whose log follows its physical outcome.
//
// # Ownership
//
// A weave.Space and its set-up (the object constructors, NewPack) belong
// to the engine's goroutine. A weave.Log belongs to the goroutine running
// its CPU. The objects' operations are safe for concurrent use by
// the CPU goroutines, each with its own Log, with the guards each type
// documents (UclampRQ is guarded by the rq's SpinLock).
//
// # Layout
//
// Each object mirrors a kernel structure's modeled layout (which fields
// share a 64-byte line) and keeps its hot words on their own host lines:
// 128-byte aligned and padded (hostLinePad, for the adjacent-line
// prefetcher), apart from the object's read-only metadata. A Pack puts
// several objects on one line on purpose, to study false sharing.
//
// # Sampling
//
// With weave.Space.SetSampling(N), one operation in N per CPU is timed on
// the host (weave.Log.SampleDue), and the weave's WriteStats prints the
// host's ns per access beside the target's modeled ns.
//
// The package also holds the host probes (PingPong, Hammer, PipeRoundTrip),
// host pinning (PinCurrentThread, PlanPinning) and Calibrate.
package contention
