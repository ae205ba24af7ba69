package emu

// Flags of enqueue_task()/dequeue_task() (kernel/sched/sched.h).
const (
	enqueueWakeup   = 0x01  // ENQUEUE_WAKEUP
	enqueueRestore  = 0x02  // ENQUEUE_RESTORE
	enqueueMigrated = 0x40  // ENQUEUE_MIGRATED
	enqueueInitial  = 0x80  // ENQUEUE_INITIAL
	enqueueDelayed  = 0x200 // ENQUEUE_DELAYED (v6.12)

	dequeueSleep   = 0x01  // DEQUEUE_SLEEP
	dequeueSave    = 0x02  // DEQUEUE_SAVE
	dequeueMove    = 0x04  // DEQUEUE_MOVE
	dequeueSpecial = 0x10  // DEQUEUE_SPECIAL (v6.12): never delayed
	dequeueDelayed = 0x200 // DEQUEUE_DELAYED (v6.12)
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
	// wfAffineTried and wfAffine (the model's own) carry wake_affine()'s
	// per-task schedstats to the wakee's owner, which counts them with
	// the rest of ttwu_stat()'s (ttwuStatTask): fair.c wake_affine()
	// (v6.6) increments p->stats.nr_wakeups_affine_attempts on every
	// call and nr_wakeups_affine when it picks this_cpu.
	wfAffineTried = 0x100
	wfAffine      = 0x200
)

const (
	nsecPerMsec = 1_000_000
	nsecPerSec  = 1_000_000_000

	// minShares / maxShares are fair.c MIN_SHARES and MAX_SHARES
	// (unscaled).
	minShares = 2
	maxShares = 1 << 18
)
