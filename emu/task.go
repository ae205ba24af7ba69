package emu

import (
	"fmt"
	"math/rand/v2"

	"github.com/rqemu/rqemu/hwmodel"
)

// TaskState is where a task is in its life, as an explicit state machine:
// every transition is checked (setState) and an illegal one panics with
// the task, its CPU and both states.
type TaskState uint8

const (
	TaskNew       TaskState = iota // created, not yet woken (wake_up_new_task)
	TaskRunnable                   // TASK_RUNNING, on a runqueue, waiting
	TaskRunning                    // TASK_RUNNING and rq->curr
	TaskSleeping                   // TASK_INTERRUPTIBLE, off the runqueue
	TaskWaking                     // TASK_WAKING: try_to_wake_up() chose a CPU, not yet enqueued
	TaskMigrating                  // TASK_ON_RQ_MIGRATING: detached by load balance, not yet attached
	TaskDead                       // exited
)

var taskStateNames = [...]string{"new", "runnable", "running", "sleeping", "waking", "migrating", "dead"}

func (s TaskState) String() string {
	if int(s) < len(taskStateNames) {
		return taskStateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// legalTransitions[from][to] is true for the transitions the kernel makes.
var legalTransitions = [7][7]bool{
	TaskNew:       {TaskRunnable: true},
	TaskRunnable:  {TaskRunning: true, TaskMigrating: true},
	TaskRunning:   {TaskRunnable: true, TaskSleeping: true, TaskDead: true},
	TaskSleeping:  {TaskWaking: true},
	TaskWaking:    {TaskRunnable: true},
	TaskMigrating: {TaskRunnable: true},
}

// Task is a task_struct: identity, state, its scheduling entity, the
// program it runs, and the counters /proc/<pid>/sched and
// /proc/<pid>/schedstat show.
//
// Ownership. A task is owned by its CPU, task_cpu(): the CPU whose
// runqueue it is on or, while it sleeps, the CPU it last ran on. During
// an epoch only that CPU's goroutine writes it, and other CPUs read only
// the fields written at barriers alone (cpu, affinity, pub: a remote
// waker decides from pub). At the barrier, with every goroutine stopped,
// the engine writes it too, as the kernel's other CPUs would:
//   - a remote wakeup's claim (claimWake, ttwu.go): state, the wakeup
//     fields (stamp, waitingOn, timer, recentUsedCPU, the wakeup
//     counters) and, if the waker chose another CPU, the migration
//     (set_task_cpu(): cpu and se);
//   - load balancing's pulls and pushes (pull.go): state, cpu, se, the
//     cfs_tasks links, sched_info and uclamp accounting;
//   - sched_setaffinity() (applyAffinity): affinity;
//   - the publication (snapshot.go): pub and isDirty.
//
// Fields set by NewTask and never written again are marked "fixed".
type Task struct {
	PID  int    // fixed
	Comm string // fixed
	Nice int    // fixed

	state TaskState   // barrier: claimWake, load balancing
	cpu   int         // task_cpu(p); barrier only (a wakeup migration, load balancing)
	se    SchedEntity // owned by the task's CPU; barrier: a migration there re-homes it (setTaskCPU)
	group *TaskGroup  // fixed

	prog   Program     // fixed
	parent *ForkParent // the tool's process that forked it (nil: none); fixed
	sym    Symbol      // the user symbol its compute is charged to; fixed
	rng    *rand.Rand  // fixed

	// uclamp requests (p->uclamp_req), set only when the workload asks.
	// fixed.
	uclampReq [2]uint32
	hasClamp  bool
	// uclampActive / uclampVal: the values uclamp_rq_inc() accounted
	// (uclamp_se.active and .value), undone by uclamp_rq_dec(). Owned by
	// the task's CPU; barrier: a pull's detach and attach (pull.go).
	uclampActive bool
	uclampVal    [2]uint32

	// Program execution: what is left of the current compute action, and
	// the run segment in progress while the task is in user mode. Owned
	// by the task's CPU.
	remaining int64
	segStart  int64
	// mm is TaskSpec.MM (0: none modeled). fixed.
	mm int
	// exitedAt is the CPU's clock when the task exited (-1 while it
	// lives). Owned by the task's CPU: written once, in exitTask.
	exitedAt int64
	// segRate is the speed of the current user segment, per mille of the
	// CPU's speed alone (SMT sharing, RQ.smtRate). Owned by the task's
	// CPU, with segGen and inUser.
	segRate int64
	segGen  uint64
	inUser  bool
	// waitingOn is the semaphore the task sleeps on (nil: a timed sleep,
	// or not sleeping); stamp is the stamp of the signal it consumed
	// last; sem is its own semaphore, what Block and Wake use (fixed).
	// barrier: claimWake delivers the stamp and clears waitingOn.
	waitingOn *Sem
	// waitCarry is the wait before the task's last dequeue while queued
	// (a migration): __update_stats_wait_end() keeps it for the next
	// sched_stat_wait. Owned by the task's CPU.
	waitCarry int64
	// sleptAt and offCPUAt are when the task's last sleep dequeued it
	// (p->on_rq = 0 in __schedule()'s deactivate_task()) and when the
	// switch away from it was done (finish_task_switch() clears
	// p->on_cpu), in its CPU's clock: what a wakeup completed at the
	// barrier compares its time with (ttwuRaced). Owned by the task's CPU.
	sleptAt, offCPUAt int64
	// queuedAt is when activate_task() last put the task on a runqueue
	// (a wakeup or a migration), in that CPU's clock: a balance applied
	// at the barrier does not take a task queued after it ran
	// (canMigrateTask). Owned by the task's CPU.
	queuedAt int64
	stamp    int64
	sem      *Sem
	// afterWait is the kernel work the task's current Wait runs once it
	// consumes a signal (Action.AfterWait). Owned by the task's CPU:
	// written and cleared in doAction.
	afterWait []hwmodel.KernelOp
	sim       *Sim // fixed
	// timer is the armed sleep timer, cancelled when the task is woken
	// some other way first (by the owner, or barrier: claimWake).
	timer *sleepTimer

	// record_wakee() state (p->last_wakee, wakee_flips,
	// wakee_flip_decay_ts), written by the task's CPU while it is curr
	// there and wakes someone, and p->recent_used_cpu (barrier: set by
	// claimWake from the waker's select_idle_sibling()).
	lastWakee        *Task
	wakeeFlips       uint
	wakeeFlipDecayTS int64
	recentUsedCPU    int

	// se.group_node: the links of rq->cfs_tasks (taskList). Owned by the
	// task's CPU, as its runqueue is.
	tlPrev, tlNext *Task
	onList         bool

	// affinity is p->cpus_ptr (nil: every CPU). Set by NewTask, then
	// barrier only (applyAffinity): any CPU may read it.
	affinity []bool

	// pub is what remote CPUs read of the task; barrier only (publish).
	// isDirty marks it for republication: set by the owner (markDirty)
	// and the barrier, cleared by the barrier.
	pub     taskSnap
	isDirty bool

	// sched_info: when the task last became runnable (sched_info_enqueue)
	// and last started running (sched_info_arrive); detachedAt, when a
	// queued task's last dequeue (a migration) ended its wait there, -1
	// once it is enqueued again. Owned by the task's CPU.
	lastQueued  int64
	lastArrival int64
	detachedAt  int64

	// Stats: the owner's, and barrier: the wakeup and migration counters
	// of a wakeup claimed there, a push's involuntary switch.
	Stats TaskStats
}

// TaskStats are the per-task counters of /proc/<pid>/sched and
// /proc/<pid>/schedstat (kernel names in the comments).
type TaskStats struct {
	RunDelay      int64 // sched_info.run_delay: total runnable wait, ns
	Pcount        int64 // sched_info.pcount: timeslices
	WaitMax       int64 // se.statistics.wait_max
	WaitSum       int64 // wait_sum
	WaitCount     int64 // wait_count
	NrWakeups     int64 // nr_wakeups
	NrWakeupsSync int64 // nr_wakeups_sync
	NrWakeupsMig  int64 // nr_wakeups_migrate
	NrWakeupsLoc  int64 // nr_wakeups_local
	NrWakeupsRem  int64 // nr_wakeups_remote
	NrMigrations  int64 // se.nr_migrations
	NrVolSwitch   int64 // nr_voluntary_switches
	NrInvolSwitch int64 // nr_involuntary_switches
	NrPreempted   int64 // times preempted by a wakeup (involuntary, from check_preempt_wakeup)
	SliceMax      int64 // slice_max

	// wake_affine()'s: nr_wakeups_affine_attempts, nr_wakeups_affine.
	NrWakeupsAffineAttempts, NrWakeupsAffine int64
}

// Now is the task's CPU's clock: the current time, from the task's own
// program.
func (t *Task) Now() int64 { return t.sim.cpus[t.cpu].now }

// ExitedAt is when the task exited, after the exit's own work, or -1
// while it lives.
func (t *Task) ExitedAt() int64 { return t.exitedAt }

// Stamp is the stamp of the last signal the task consumed (Wait).
func (t *Task) Stamp() int64 { return t.stamp }

// Rand is the task's own seeded PRNG.
func (t *Task) Rand() *rand.Rand { return t.rng }

// Sem is the task's own semaphore (what Block waits on and Wake signals).
func (t *Task) Sem() *Sem { return t.sem }

// State is the task's current state.
func (t *Task) State() TaskState { return t.state }

// CPU is task_cpu(p).
func (t *Task) CPU() int { return t.cpu }

// SumExecRuntime is se.sum_exec_runtime in ns.
func (t *Task) SumExecRuntime() int64 { return int64(t.se.SumExecRuntime) }

// Vruntime, Deadline and Vlag expose the entity for /proc/<pid>/sched.
func (t *Task) Vruntime() uint64 { return t.se.Vruntime }
func (t *Task) Deadline() uint64 { return t.se.Deadline }
func (t *Task) Vlag() int64      { return t.se.Vlag }

// Group is the task's task group.
func (t *Task) Group() *TaskGroup { return t.group }

func (t *Task) String() string {
	return fmt.Sprintf("%s/%d", t.Comm, t.PID)
}

// setState moves the task to state to, panicking on a transition the
// kernel never makes: that is a bug in the emulator, and the message says
// where.
func (t *Task) setState(to TaskState) {
	if !legalTransitions[t.state][to] {
		panic(fmt.Sprintf("emu: task %v on CPU %d: illegal transition %v -> %v (on_rq=%t, vruntime=%#x)",
			t, t.cpu, t.state, to, t.se.OnRQ, t.se.Vruntime))
	}
	t.state = to
}

// sleepTimer is an armed hrtimer for a timed sleep. It belongs to the CPU
// whose event queue holds it (the sleeping task's CPU, which cannot
// change while the task sleeps); cancelling it (a wakeup came first) is
// done by that CPU or at a barrier (claimWake).
type sleepTimer struct {
	task      *Task
	soft      int64 // the soft expiry (hrtimer.go); the event's time is the hard one
	cancelled bool
}
