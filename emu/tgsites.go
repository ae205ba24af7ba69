package emu

// The call sites of tg->load_avg: which kernel function's
// update_load_avg() reached update_tg_load_avg(), or whose
// update_cfs_group() read the line in calc_group_shares() (fair.c, v6.6;
// kernel-mechanisms.md 4.5). RQStats' totals split by site, for asking
// where a workload's tg traffic comes from.

// tgSite is the caller that is updating a cfs_rq's load when it touches
// tg->load_avg.
type tgSite uint8

const (
	tgSiteOther         tgSite = iota // none of the below (a new task's attach)
	tgSiteEnqueue                     // enqueue_entity(): UPDATE_TG on decay, and its update_cfs_group()
	tgSiteEnqueueAttach               // enqueue_entity()'s DO_ATTACH: a migrated task joins
	tgSiteDequeue                     // dequeue_entity(): UPDATE_TG on decay, and its update_cfs_group()
	tgSiteDequeueDetach               // dequeue_entity()'s DO_DETACH: a queued task leaves (TASK_ON_RQ_MIGRATING)
	tgSiteEnqueueTask                 // enqueue_task_fair()'s loop over the ancestors already queued
	tgSiteDequeueTask                 // dequeue_task_fair()'s (v6.12 dequeue_entities()') loop over those left queued
	tgSiteSetNext                     // set_next_entity()
	tgSiteTick                        // entity_tick()
	tgSiteBlocked                     // __update_blocked_fair(), both its updates
	numTgSites
)

// tgSiteNames are the sites' counter names (Counters: "sched.TgLoadAvgWrites.NAME").
var tgSiteNames = [numTgSites]string{"other", "enqueue_entity", "enqueue_entity.attach", "dequeue_entity",
	"dequeue_entity.detach", "enqueue_task_fair", "dequeue_task_fair", "set_next_entity", "entity_tick",
	"__update_blocked_fair"}

// tgSiteCounts are one site's share of the RQStats tg counters.
type tgSiteCounts struct {
	writes, reads, ratelimitSkips, thresholdSkips int64
}

// atTgSite makes site the caller of the tg->load_avg accesses that follow
// and returns the one it replaces, for the caller to put back.
func (rq *RQ) atTgSite(site tgSite) tgSite {
	prev := rq.tgSite
	rq.tgSite = site
	return prev
}

// tgSiteCounters adds the per-site counters summed over the CPUs to c.
func (s *Sim) tgSiteCounters(c map[string]float64) {
	for site, name := range tgSiteNames {
		var n tgSiteCounts
		for _, rq := range s.cpus {
			t := rq.Stats.tgSites[site]
			n.writes += t.writes
			n.reads += t.reads
			n.ratelimitSkips += t.ratelimitSkips
			n.thresholdSkips += t.thresholdSkips
		}
		c["sched.TgLoadAvgWrites."+name] = float64(n.writes)
		c["sched.TgLoadAvgReads."+name] = float64(n.reads)
		c["sched.TgRatelimitSkips."+name] = float64(n.ratelimitSkips)
		c["sched.TgThresholdSkips."+name] = float64(n.thresholdSkips)
	}
}
