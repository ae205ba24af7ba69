package emu

import "math/bits"

// Flags of enqueue_task()/dequeue_task() (kernel/sched/sched.h).
const (
	enqueueWakeup   = 0x01 // ENQUEUE_WAKEUP
	enqueueRestore  = 0x02 // ENQUEUE_RESTORE
	enqueueMigrated = 0x40 // ENQUEUE_MIGRATED
	enqueueInitial  = 0x80 // ENQUEUE_INITIAL

	dequeueSleep = 0x01 // DEQUEUE_SLEEP
	dequeueSave  = 0x02 // DEQUEUE_SAVE
	dequeueMove  = 0x04 // DEQUEUE_MOVE
)

// Flags of update_load_avg() (fair.c).
const (
	updateTG    = 0x1 // UPDATE_TG
	skipAgeLoad = 0x2 // SKIP_AGE_LOAD
	doAttach    = 0x4 // DO_ATTACH
	doDetach    = 0x8 // DO_DETACH
)

// Wake flags (sched.h WF_*).
const (
	wfSync     = 0x10 // WF_SYNC: the waker is about to sleep
	wfMigrated = 0x20 // WF_MIGRATED
	wfTTWU     = 0x08 // WF_TTWU
	// wfAffinity (the model's own) marks the "wakeup" that ends a task's
	// sched_setaffinity() move: in the kernel move_queued_task(), which
	// dequeues and enqueues without DEQUEUE_SLEEP / ENQUEUE_WAKEUP.
	wfAffinity = 0x40
)

const (
	nsecPerMsec = 1_000_000
	nsecPerSec  = 1_000_000_000

	// minShares / maxShares are fair.c MIN_SHARES and MAX_SHARES
	// (unscaled).
	minShares = 2
	maxShares = 1 << 18
)

// Tunables are the scheduler's sysctls as the kernel sets them for a
// machine (fair.c: update_sysctl(), sched_init_granularity()): the
// normalized values times the tunable-scaling factor 1 + ilog2(min(ncpus,
// 8)) (SCHED_TUNABLESCALING_LOG, the default), so 4 on any machine with 8
// or more CPUs.
type Tunables struct {
	Factor            uint64
	Latency           uint64 // sysctl_sched_latency (CFS)
	MinGranularity    uint64 // sysctl_sched_min_granularity (CFS)
	WakeupGranularity uint64 // sysctl_sched_wakeup_granularity (CFS)
	NrLatency         uint64 // sched_nr_latency
	BaseSlice         uint64 // sysctl_sched_base_slice (EEVDF r_i)
	MigrationCost     int64  // sysctl_sched_migration_cost
	NrMigrate         int    // sysctl_sched_nr_migrate
	TickNsec          int64  // TICK_NSEC = NSEC_PER_SEC / HZ
}

// NewTunables computes the tunables for ncpus CPUs and the given HZ.
func NewTunables(ncpus, hz int) Tunables {
	f := uint64(1 + bits.Len(uint(min(max(ncpus, 1), 8))) - 1)
	t := Tunables{
		Factor:            f,
		Latency:           6_000_000 * f,
		MinGranularity:    750_000 * f,
		WakeupGranularity: 1_000_000 * f,
		BaseSlice:         750_000 * f,
		MigrationCost:     500_000,
		NrMigrate:         32,
		TickNsec:          int64(nsecPerSec / hz),
	}
	t.NrLatency = t.Latency / t.MinGranularity
	return t
}
