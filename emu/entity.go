package emu

import (
	"github.com/rqemu/rqemu/emu/eevdf"
	"github.com/rqemu/rqemu/emu/pelt"
)

// SchedEntity is struct sched_entity: the timeline part (eevdf.Entity:
// weight, vruntime, deadline, slice, vlag, tree links), PELT (se->avg),
// runtime accounting and the group hierarchy. A task's entity lives in its
// Task; a group's per-CPU entity in its TaskGroup. Owned by the CPU whose
// runqueue it is on.
type SchedEntity struct {
	eevdf.Entity

	Avg pelt.Avg // se->avg

	ExecStart          uint64 // exec_start: rq_clock_task when it last started running
	SumExecRuntime     uint64 // sum_exec_runtime
	PrevSumExecRuntime uint64 // prev_sum_exec_runtime, at the last pick

	parent *SchedEntity // se->parent: the group entity above, nil at the root
	cfsRq  *CfsRq       // se->cfs_rq: the queue it is (to be) queued on
	myQ    *CfsRq       // se->my_q: the group's queue, nil for a task
	depth  int          // se->depth
	task   *Task        // nil for a group entity

	// runnableWeight is se->runnable_weight: for a group entity, its
	// group queue's h_nr_running (se_update_runnable()).
	runnableWeight uint64

	// migrated is PLACE_MIGRATE's se->migrated (Tim Chen/PeterZ RFC):
	// 1 + the source's nr_running at migration, 0 when not migrated.
	migrated int

	// CFS relative vruntime: true while Vruntime holds an offset from a
	// queue's min_vruntime rather than an absolute value (between
	// dequeue/migrate_task_rq_fair() and enqueue_entity()'s renormalise).
	relative bool

	// schedstats: when the entity started waiting on its queue.
	waitStart int64
}

func (se *SchedEntity) isTask() bool { return se.task != nil }

// weightDown is se_weight(se): scale_load_down(se->load.weight).
func (se *SchedEntity) weightDown() uint64 { return eevdf.ScaleLoadDown(se.Load.Weight) }

// runnable is se_runnable(se).
func (se *SchedEntity) runnable() uint64 {
	if se.SchedDelayed { // 6.12.y: a delayed entity is not runnable
		return 0
	}
	if se.isTask() {
		if se.OnRQ {
			return 1
		}
		return 0
	}
	return se.runnableWeight
}

// seOf returns the SchedEntity of a timeline entity.
func seOf(e *eevdf.Entity) *SchedEntity {
	if e == nil {
		return nil
	}
	return e.Owner.(*SchedEntity)
}

// MinVruntimeOffset is the task's vruntime less the min_vruntime of the
// cfs_rq it is on (both as /proc/sched_debug prints them): under CFS its
// position in its queue, negative when it was placed left of min_vruntime
// (a sleeper credit from place_entity(), or one a migration carried). A
// task between dequeue_entity()'s normalisation and enqueue_entity()'s
// (in flight to another CPU) holds the offset itself. Read it when the
// run is stopped.
func (t *Task) MinVruntimeOffset() int64 {
	se := &t.se
	if se.relative {
		return int64(se.Vruntime)
	}
	return int64(se.Vruntime - se.cfsRq.q.MinVruntime)
}

// WaitStart is the schedstats wait_start of the task
// (update_stats_wait_start()): when it was last queued or preempted, on
// its CPU's clock. Meaningful while the task is runnable and not running.
// Read it when the run is stopped.
func (t *Task) WaitStart() int64 { return t.se.waitStart }
