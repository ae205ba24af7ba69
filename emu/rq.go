package emu

import (
	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// cpuMode is what a CPU is doing between events.
type cpuMode uint8

const (
	modeIdle   cpuMode = iota // in the idle loop
	modeUser                  // curr runs its program's compute
	modeKernel                // inside a handler (transient)
)

// RQ is one modeled CPU: its identity, clock and event queue, and three
// named parts: the kernel's struct rq (rqKernel), what crosses to and
// from other CPUs at barriers (rqMailbox), and where its time goes
// (rqAccount). The parts are embedded, so rq.nrRunning, rq.outbox and
// rq.Stats read as fields of the RQ.
//
// Ownership. During an epoch an RQ is read and written only by its CPU's
// goroutine (the serial driver's one goroutine, or the parallel driver's
// worker for its shard). Other CPUs reach it through the physical shared
// objects of package contention (lock, wake, uclamp, the cfs_rqs'
// removed lines: real atomics, any CPU, logged and priced) and through
// the barrier. At the barrier every goroutine is stopped and the engine,
// one goroutine, may write any RQ: the fields below marked "barrier:" are
// the ones it writes as part of the cross-CPU protocol, and load
// balancing's pulls, pushes and idle balancing (pull.go, rebalance.go)
// change the kernel state of the CPUs involved as their owners would.
// Fields set at NewSim and never written again are marked "fixed".
type RQ struct {
	cpu  int              // fixed
	sim  *Sim             // fixed
	m    *hwmodel.Machine // fixed
	feat Features         // fixed
	tun  Tunables         // fixed

	// now is this CPU's virtual time, ns. barrier: catchUp() brings it to
	// the barrier's time before the engine works on the CPU's queues.
	now  int64
	mode cpuMode
	// nrRunningSince is the clock at nr_running's last change (the
	// start of Stats.NrRunningNS's open interval). Owned by the CPU.
	nrRunningSince int64
	// smtYield is Lat.SMTYield per mille (1000: no SMT sharing). fixed.
	smtYield int64

	// events is the CPU's event queue. barrier: messages are pushed
	// for their delivery time (ttwu.go, reschedCurr, active balance).
	events    eventQueue
	tickArmed bool
	// slackTimers is at least the number of pending sleep timers armed
	// with slack (hrtimer.go), 0 when there is none. Owned by the CPU.
	slackTimers int
	handled     int64 // events handled (stale ones excluded); owned by the CPU
	// lastEvent is the stamp of the last event handled. Owned by the
	// CPU; the barrier reads it to measure late messages.
	lastEvent int64
	// stepUntil is the end of the epoch step is in. Owned by the CPU.
	stepUntil int64
	// parked is curr's action held at its decision point (hold.go);
	// zero when none. Owned by the CPU; the barrier settles a held wait
	// (resolveHold).
	parked parkedAction

	// currLine and avgLine are the lines of rq->curr (read by
	// idle_cpu()) and rq->cfs.avg (read by cpu_load() and load
	// balancing) in the contention space. fixed.
	currLine weave.LineID
	avgLine  weave.LineID

	rqKernel
	rqMailbox
	rqAccount
}

// rqKernel is the kernel's struct rq of this CPU and the scheduler state
// around it. Owned by the CPU; the barrier writes it only through load
// balancing (pulls, active balance, NOHZ idle balancing on an idle CPU's
// behalf), a remote wakeup's migration (removed load, in the cfs_rqs) and
// a waker's try_to_wake_up() it completes (ttwuRaced, ttwu_runnable() in
// hold.go and ttwurunnable.go: atBarrierLogged).
type rqKernel struct {
	clock int64 // rq->clock as of the last update_rq_clock()
	// remoteAt, while another CPU works on this rq under its lock at its
	// own time (a balance's detach at the barrier, doPull; a waker's
	// enqueue, ttwuRemoteEnqueue), is that time (else 0): sched_info's
	// waits end and start there, not at this CPU's clock, which can be
	// ahead of it (its kernel work ran past the time), as the kernel's
	// rq clocks all read one time (update_rq_clock() under the lock).
	remoteAt int64
	// clockPelt and lostIdleTime are rq->clock_pelt and
	// rq->lost_idle_time (pelt.h): the PELT clock, which runs slower than
	// clock while a task runs below the reference frequency.
	clockPelt, lostIdleTime int64
	cfs                     *CfsRq   // rq->cfs, the root queue
	cfsTasks                taskList // rq->cfs_tasks, most recently picked first
	curr                    *Task    // rq->curr; nil is the idle task
	nrRunning               int      // rq->nr_running
	needResched             bool     // TIF_NEED_RESCHED of curr
	loadedMM                int      // the mm the CPU has loaded (rq->prev_mm / active_mm), 0: none yet

	// The physical shared objects of struct rq: real atomics on padded
	// lines, touched by any CPU (remote wakers, balancers), each access
	// logged for the weave. fixed (the pointers).
	lock   *contention.SpinLock // rq->__lock with nr_running on its line
	wake   *contention.WakeList // call_single_queue + ttwu_pending
	uclamp *contention.UclampRQ

	// sisRecent is p->recent_used_cpu = prev as select_idle_sibling()
	// sets it during one wakeup (-1: not set), posted with the wakeup.
	sisRecent int
	// affineFlags are wake_affine()'s schedstat bits (wfAffineTried,
	// wfAffine) of the last select_task_rq_fair(), for the wakee's stats.
	// Owned by CPU i.
	affineFlags int

	// newidleSD and newidleCost are the last domain a newidle balance
	// walked and what it cost: the work at once (and its pull's detach
	// and attach when the barrier carries the pull out), the coherence
	// stalls of all its accesses as the barriers' weaves report them (the
	// kernel's sched_clock() delta includes them). Simplified: every stall
	// goes to the last domain walked, the largest, and a stall reported
	// after the next newidle balance began goes to that one. inNewidle: a
	// newidle balance (or its pull, logOn) is running, and its accesses
	// log to Sim.newidleSites. barrier: the weave adds the stalls to
	// newidleCost.
	newidleSD   *Domain
	newidleCost int64
	inNewidle   bool
	// pulledStamp is idle_stamp as newidleBalance found it when it
	// decided a pull (and so cleared idle_stamp), for doPull to put back
	// if the pull moves nothing.
	pulledStamp int64

	// Load balancing state: the next periodic balance (jiffies), the
	// EWMA of idle periods and when the current one began (avg_idle,
	// idle_stamp). barrier: the idle load balancer balances a tickless
	// idle CPU on its behalf (nextBalance).
	nextBalance int64
	exited      int // tasks that exited on this CPU
	// switchedOut is the task whose sleep the last __schedule() switched
	// out to go idle, until the CPU runs something else (nil then).
	// Owned by CPU i; barrier: read by onCPUView.
	switchedOut *Task
	avgIdle     int64
	idleStamp   int64
	// wakeStamp (jiffies) and wakeAvgIdle (ns) are rq->wake_stamp and
	// rq->wake_avg_idle (v5.13 to v6.6): SIS_PROP's predicted idle time,
	// half of avg_idle at the last wakeup of this idle CPU, aged and spent
	// by its own scans (select_idle_cpu()).
	wakeStamp   int64
	wakeAvgIdle int64

	// wokeTo lists the CPUs this CPU queued or enqueued a remote
	// wakeup on during this epoch: the target's rq->ttwu_pending (or
	// nr_running) is then this CPU's own write, which it sees at once
	// although the snapshot shows it only after the barrier. Owned by
	// CPU i; barrier: emptied once the wakeups are delivered.
	wokeTo []int
	// affinityCPUs is the mask curr passed to sched_setaffinity() on
	// itself, for the stopper's move in the schedule() it calls
	// (affinity.go). Owned by this CPU.
	affinityCPUs []int
	// enqueuedTo lists the wakeups this CPU enqueued on another CPU's
	// runqueue by the direct path (ttwu_queue() under the target's rq
	// lock) that the published snapshots may not show yet: in the kernel
	// the target's nr_running and rd->overload are then this CPU's own
	// writes (view.go: ownEnqueues). Owned by CPU i.
	enqueuedTo []ownEnqueue
	// removedFrom lists this epoch's wakeup migrations away from this
	// CPU that it did itself (view.go: ownRemoval). Owned by CPU i.
	removedFrom []ownRemoval

	// Scratch sets of the balancing and wakeup scans.
	lbCores, lbSkip, sisSkip cpuSet
}

// rqMailbox is what crosses between this CPU and the others at barriers
// (message.go, snapshot.go, ttwu.go): written by the CPU during its epoch
// and emptied by the barrier, or the other way round.
type rqMailbox struct {
	// outbox holds the changes to other CPUs posted this epoch; opSeq
	// numbers them. Appended by the CPU; barrier: delivered and emptied.
	outbox []remoteOp
	opSeq  uint64
	// dirty holds the tasks to republish. Appended by the CPU (and
	// barrier: for a task it hands to this CPU); barrier: published and
	// emptied.
	dirty []*Task
	// llcWrites are the CPU's own writes to sd_llc_shared since the
	// barrier. barrier: emptied (the values are delivered as posts).
	llcWrites []llcWrite
	// tgDelta[g] is what this CPU added to task group g's tg->load_avg
	// since the last barrier: the deterministic reads see the published
	// value plus this CPU's own writes. barrier: folded into the
	// published value and zeroed.
	tgDelta []int64
	// tgSite is the kernel function whose load update is touching
	// tg->load_avg (tgsites.go). Owned by the CPU.
	tgSite tgSite
	// countDeltas are this CPU's changes of shared counts since the last
	// barrier (sharedcount.go). barrier: folded into the published values
	// and emptied.
	countDeltas []countDelta
	// wlBatch is the wake list: the batch the next drain takes, wlDrainAt
	// when that drain runs (0: no batch open) and wlCut the time of its
	// llist_del_all() (a late drain's is the last one's), and the
	// wakeups added after the cut, which wlNextAt's drain takes (0:
	// none; wlNextFrom sent its IPI). barrier: appended and set
	// (wakelistAdd); the CPU drains and resets them (schedTTWUPending),
	// and writes wlLastDrain, its last cut.
	wlBatch     []wlEntry
	wlDrainAt   int64
	wlCut       int64
	wlNextAt    int64
	wlNextFrom  int
	wlLastDrain int64
	// republish: this CPU's state changed since the last barrier (it
	// handled an event, or the barrier changed it). Set by the CPU and
	// the barrier; barrier: cleared when published.
	republish bool
}

// rqAccount is where this CPU's time goes and who pays for it: the
// access log the weave prices, the profile, the counters, the debt of
// time found at barriers, and the payer of the work running now.
type rqAccount struct {
	// log is this CPU's log of shared-line accesses. Appended by the
	// CPU, and by the engine for work it does at the barrier as this
	// CPU; barrier: woven and reset. fixed (the pointer).
	log *weave.Log
	// pay is who pays for the work the CPU's code does now (payer.go).
	// Owned by the CPU; set only by onBehalf and atBarrier, for one call.
	pay payer
	// scratch takes this CPU's accesses while its code does work whose
	// accesses are logged afterwards, some elsewhere or not at all
	// (toScratch). Owned by the CPU; made on first use.
	scratch *weave.Log

	// debt is weave stall and barrier-done work not yet charged to this
	// CPU's clock, with its breakdown by symbol. barrier: added to
	// (addDebt); the CPU pays it (payDebt).
	debt      int64
	debtSites []symCharge
	// weaveBehind: the weave has accesses of this CPU it has not yet
	// issued (they queue behind one waiting on a busy line, or lie past
	// the barrier: the CPU's clock ran ahead of it), so the CPU has not
	// physically reached its own clock: it handles no event until the
	// weave catches up. weaveStalled: one of its accesses waits at its
	// line (weave.Space.Stalled), which keeps the CPU where it is
	// for as long as the line takes; without it a CPU behind is only
	// ahead, and is physically where its clock says once it gets there.
	// Written only at the barrier.
	weaveBehind, weaveStalled bool

	// profile is ns per Symbol; Stats the CPU's counters (schedstat,
	// IPIs, wakeups). Written by the CPU; barrier: work done there on
	// the CPU's behalf is counted too (IPIs sent and received, ILB
	// kicks, pulls).
	profile []int64
	Stats   RQStats
	// calls is the call chains of what profile charges (chains.go).
	// Owned by the CPU; barrier: as profile.
	calls callTree

	// trace is this CPU's sched_switch/sched_wakeup records (with
	// Sim.EnableTrace), merged in (time, CPU) order when written.
	// barrier: a wakeup claimed there is recorded on its waker.
	trace []traceRec
}

// cpuSet is a set of CPUs that empties in O(1) (reset): scratch of one
// RQ's scans, which would otherwise allocate a map per call.
type cpuSet struct {
	stamp uint32
	mark  []uint32
}

func (s *cpuSet) reset(n int) {
	if len(s.mark) < n {
		s.mark = make([]uint32, n)
	}
	s.stamp++
	if s.stamp == 0 { // wrapped: clear the old marks
		clear(s.mark)
		s.stamp = 1
	}
}
func (s *cpuSet) add(c int)      { s.mark[c] = s.stamp }
func (s *cpuSet) has(c int) bool { return s.mark[c] == s.stamp }

// symCharge is whole ns of debt owed to one symbol; a CPU's charges sum
// to its debt.
type symCharge struct {
	sym Symbol
	ns  int64
}

func (rq *RQ) node() int { return rq.m.CPUs[rq.cpu].Node }

// CPU is the runqueue's CPU number.
func (rq *RQ) CPU() int { return rq.cpu }

// Now is the CPU's virtual time.
func (rq *RQ) Now() int64 { return rq.now }

// Curr is the running task, nil when idle.
func (rq *RQ) Curr() *Task { return rq.curr }

// NrRunning is rq->nr_running.
func (rq *RQ) NrRunning() int { return rq.nrRunning }
