// Package weave prices the accesses of the emulated kernel's shared lines
// on the target machine. Every operation of contention's objects (and the
// emulator's own Log.Record calls) appends (virtual time, line, op, site)
// to the calling modeled CPU's Log. At an epoch barrier the engine calls
// Space.WeaveUntil, which replays all CPUs' logs through the hwmodel
// coherence model of the target machine (Replayer: transfers by
// distance class, serialization of RMWs on a line, invalidations,
// queued-spinlock hand-over, the burst effect, overlapping independent
// loads, the store buffer) up to the epoch's end and returns, per CPU and per calling site (a
// kernel symbol), the stall beyond the uncontended cost the CPU charged
// itself.
//
// The weave's queues are the machine's, not the epoch's (the bound and
// weave of DESIGN.md, after ZSim). The Space keeps every line's whole state
// from one weave to the next: its coherence state, the time it is busy
// until, the requests it has not yet served and a held lock with its
// queue; and every CPU's place: a request still waiting at the barrier
// keeps waiting, its wait so far is charged at that barrier (the CPU does
// not run on) and the rest when it is served, to the site that made it;
// its CPU's later accesses are issued only after it. So over any window a
// line serves at most that window's worth of transactions, however the
// engine cuts time into epochs (hwmodel's TestReplayCutEqualsWhole, emu's
// TestSaturatedLineCapacity). A weave that started every line free at each
// barrier let a saturated line serve its backlog and the next epoch's
// requests at once, and priced tg->load_avg on 224 CPUs several times too
// cheaply. The Space also keeps the sub-ns remainder of each CPU's stall
// and cumulative per-line, per-site and per-kind statistics (Stats,
// WriteStats).
//
// # Files
//
//	log.go, sample.go    a CPU's Log of accesses; host-time sampling
//	space.go             the lines, sites and kinds of one target machine
//	weave.go, stats.go   WeaveUntil: logs to the replay, charges; statistics
//	replay.go            the Replayer: its state, Advance, what it reports
//	replay_cpu.go        the CPU side: issue, MLP, blocking, resume, stalls
//	replay_line.go       the line side: its queue, the draw, locks, serving
//	replay_store.go      the CPU's store buffer (x86 TSO): drains, forwarding
//	events.go            the replay's event queue (internal/heap)
//	predict.go           the replay's closed scenarios for calibration
package weave
