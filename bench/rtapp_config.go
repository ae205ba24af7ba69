package bench

import (
	"slices"
)

// The description of an rt-app load (rtapp.go), as the grammar
// (rtapp_grammar.go) builds it from the JSON and the threads
// (rtapp_thread.go) run it, and the checks that need a whole task or the
// whole description: mutexes held and released in order, a thread that
// uses time, a description that ends.

type rtEvKind uint8

const (
	rtRun rtEvKind = iota
	rtRuntime
	rtSleep
	rtTimer
	rtLock
	rtUnlock
	rtSignal
	rtBroad
	rtWait
	rtSync
	rtYield
)

type rtEvent struct {
	kind  rtEvKind
	ns    int64 // run, runtime, sleep: duration; timer: period
	res   int   // timer index in the task; mutex id (lock, unlock); condition id
	mutex int   // wait, sync: the mutex id
	abs   bool  // timer: this use says "mode": "absolute"
	node  *jnode
	path  string
}

type rtPhase struct {
	name   string
	loop   int   // -1: forever
	cpus   []int // nil: the task's
	events []rtEvent
	node   *jnode
	path   string
}

type rtTask struct {
	name      string
	instances int
	delay     int64 // ns
	loop      int   // -1: forever
	cpus      []int // nil: every CPU
	nice      int
	taskgroup string
	clamp     *[2]uint32
	phases    []rtPhase
	timers    []string
	timerAbs  []bool // per timer: absolute (any use says so, as rt-app's timer resource)
	path      string
}

type rtConfig struct {
	duration int64 // ns; 0: until every thread ends
	tasks    []*rtTask
	mutexes  []string
	conds    []string
	// mutexUsers counts the threads (instances) using each mutex.
	mutexUsers []int
}

func (c *rtConfig) mutexID(name string) int {
	if i := slices.Index(c.mutexes, name); i >= 0 {
		return i
	}
	c.mutexes = append(c.mutexes, name)
	c.mutexUsers = append(c.mutexUsers, 0)
	return len(c.mutexes) - 1
}

func (c *rtConfig) condID(name string) int {
	if i := slices.Index(c.conds, name); i >= 0 {
		return i
	}
	c.conds = append(c.conds, name)
	return len(c.conds) - 1
}

// managed reports whether a mutex has a lock manager (more than one
// thread uses it).
func (c *rtConfig) managed(mutex int) bool { return c.mutexUsers[mutex] > 1 }

// checkTask replays a thread's events in order: a mutex is unlocked (or
// waited with) only when held, never locked twice, and released by the
// end of the phases (or a loop would relock it); the thread must use
// time somewhere, or it would spin.
func (p *rtParse) checkTask(t *rtTask) error {
	held := map[int]bool{}
	timed := false
	for _, ph := range t.phases {
		phTimed := false
		iters := 1
		if ph.loop != 1 {
			iters = 2 // a second iteration catches a lock left held
		}
		for range iters {
			for _, e := range ph.events {
				switch e.kind {
				case rtRun, rtRuntime, rtSleep:
					if e.ns > 0 {
						phTimed = true
					}
				case rtTimer:
					phTimed = true
				case rtLock:
					if held[e.res] {
						return p.errf(e.node, e.path, "mutex %q is already held here (rt-app mutexes are not recursive; unlock it first)", p.cfg.mutexes[e.res])
					}
					held[e.res] = true
				case rtUnlock:
					if !held[e.res] {
						return p.errf(e.node, e.path, "mutex %q is not held here (lock it earlier in the phase order)", p.cfg.mutexes[e.res])
					}
					delete(held, e.res)
				case rtWait, rtSync:
					if !held[e.mutex] {
						return p.errf(e.node, e.path, "mutex %q must be held around the wait (lock it before, as pthread_cond_wait() requires)", p.cfg.mutexes[e.mutex])
					}
				}
			}
		}
		if ph.loop < 0 && !phTimed {
			return p.errf(ph.node, ph.path, "loops forever without a run, runtime, sleep or timer event: it would spin without using time")
		}
		timed = timed || phTimed
	}
	for m := range held {
		return p.errf(t.phases[len(t.phases)-1].node, t.path, "mutex %q is still held at the end of the phases (unlock it in the phase order)", p.cfg.mutexes[m])
	}
	if !timed {
		return p.errf(t.phases[0].node, t.path, "no run, runtime, sleep or timer event with a duration: the thread would spin without using time")
	}
	return nil
}

// checkEnds rejects a description that never ends: a thread looping
// forever needs a duration.
func (c *rtConfig) checkEnds(file string) error {
	if c.duration > 0 {
		return nil
	}
	for _, t := range c.tasks {
		if t.loop < 0 {
			return flagErr("-f", "%s: %s.loop: -1 (forever, the default with phases) needs global.duration > 0 or -d SECONDS; or give the task a loop count", file, t.path)
		}
		for _, ph := range t.phases {
			if ph.loop < 0 {
				return flagErr("-f", "%s: %s.loop: -1 (forever) needs global.duration > 0 or -d SECONDS", file, ph.path)
			}
		}
	}
	return nil
}
