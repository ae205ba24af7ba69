package emu

import "github.com/rqemu/rqemu/emu/pelt"

// setTaskCPU is core.c: set_task_cpu() with fair.c:
// migrate_task_rq_fair(): the task's entity leaves its CPU's hierarchy
// for dst's. Called with the task off every queue: waking (a wakeup
// migration, TASK_WAKING) or detached by load balance
// (TASK_ON_RQ_MIGRATING), by the engine (at a barrier, or by a caller that
// owns both CPUs).
func (s *Sim) setTaskCPU(p *Task, dst int) {
	s.setTaskCPUFrom(p, dst, s.cpus[p.cpu], s.cpus[p.cpu].now)
}

// setTaskCPUFrom is setTaskCPU done by CPU actor at time t: a wakeup
// migration's remove_entity_load_avg() writes the old CPU's removed line
// from the waker.
func (s *Sim) setTaskCPUFrom(p *Task, dst int, actor *RQ, t int64) {
	src := s.cpus[p.cpu]
	se := &p.se
	if p.state == TaskWaking && !src.eevdf() && !se.relative {
		// As blocked tasks retain absolute vruntime the migration
		// needs to deal with this by subtracting the old and adding
		// the new min_vruntime (v6.5 and before).
		se.Vruntime -= se.cfsRq.q.MinVruntime
		se.relative = true
	}
	if p.state == TaskWaking {
		// remove_entity_load_avg(): the waker writes the previous
		// CPU's removed line; the model applies it deterministically.
		src.removeEntityLoadAvg(se, actor, t)
	}
	// Tell new CPU we are migrated.
	se.Avg.LastUpdateTime = 0
	if s.feat.Has(PLACE_MIGRATE) {
		// se->migrated = nr_running of the old queue + !on_rq, for
		// every level (the RFC's loop over the old hierarchy).
		for e := se; e != nil; e = e.parent {
			n := e.cfsRq.q.NrRunning
			if !e.OnRQ {
				n++
			}
			e.migrated = n
		}
	} else {
		// We have migrated, no longer consider this task hot.
		se.ExecStart = 0
	}
	p.Stats.NrMigrations++
	if s.feat.Has(RT_GROUP_SCHED) && p.group != s.root {
		// sched.h: set_task_rq() with CONFIG_RT_GROUP_SCHED reads
		// tg->rt_rq and tg->rt_se of the task's group, which share
		// tg->load_avg's line (struct task_group, v5.15 and v6.6:
		// load_avg ____cacheline_aligned, then rt_se, rt_rq): the
		// migrating CPU (the waker, or the balancer) pays a read of
		// the line every CPU of the group keeps writing.
		p.group.loadAvg.Load(actor.log, actor.stampAt(t), actor.site(SymSetTaskCPU))
		actor.Stats.TgLineRTReads++
	}
	s.setTaskRQ(p, dst)
}

// removeEntityLoadAvg is fair.c: remove_entity_load_avg(): sync the
// sleeping entity to its old queue's last update and queue its averages
// for removal there.
func (rq *RQ) removeEntityLoadAvg(se *SchedEntity, actor *RQ, t int64) {
	cfs := se.cfsRq
	// sync_entity_load_avg(): decay the entity to the queue's last
	// update (read locklessly in the kernel).
	pelt.UpdateBlockedSE(cfs.avg.LastUpdateTime, &se.Avg, se.weightDown())
	cfs.removedModel.Add(&se.Avg)
	cfs.removed.Add(actor.log, actor.stampAt(t), actor.site(SymRemoveEntityLoadAvg), se.Avg.LoadAvg, se.Avg.UtilAvg, se.Avg.RunnableAvg)
}

// moveQueuedTask is fair.c: detach_task() + attach_task(): a runnable
// (not running) task moves from its CPU's queue to dst's, as load
// balancing does it. Both runqueues must be owned by the caller (tests,
// and the engine's balancer under both rq locks).
func (s *Sim) moveQueuedTask(p *Task, dst int) {
	src, d := s.cpus[p.cpu], s.cpus[dst]
	if p.state != TaskRunnable || src.curr == p {
		panic("emu: moveQueuedTask of a task that is not queued and waiting: " + p.String())
	}
	src.lockRQ(SymLoadBalance)
	src.updateRQClock()
	p.setState(TaskMigrating)
	src.deactivateTask(p, 0)
	src.unlockRQ(SymLoadBalance)
	s.setTaskCPU(p, dst)
	d.lockRQ(SymLoadBalance)
	d.updateRQClock()
	d.activateTask(p, 0)
	p.setState(TaskRunnable)
	d.wakeupPreempt(p, 0)
	d.unlockRQ(SymLoadBalance)
}
