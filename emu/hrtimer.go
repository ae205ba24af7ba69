package emu

import (
	"fmt"
	"slices"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/internal/heap"
)

// A timed sleep with the task's timer slack, after kernel/time/hrtimer.c
// (v6.6). hrtimer_nanosleep() arms the sleeper's timer with
// hrtimer_set_expires_range_ns(&t.timer, rqtp, current->timer_slack_ns):
// a soft expiry at the requested time and a hard one slack later
// (timer_slack_ns is 50 µs for a SCHED_OTHER task: init_task's
// .timer_slack_ns; 0 for an RT task). The clock event is programmed for
// the earliest hard expiry (hrtimer_reprogram()), and when it fires
// __hrtimer_run_queues() runs the CPU's timers in hard-expiry order until
// the first whose soft expiry is still ahead: a sleeper whose soft expiry
// has passed wakes at the next hrtimer interrupt of its CPU, another
// sleeper's hard expiry or the tick, and a lone one at its own hard
// expiry. So nanosleep(0) (usleep(0)) sleeps until the next such
// interrupt, up to the slack.
//
// Simplified: the timer interrupts are the CPU's sleep timers and its
// tick (other hrtimers, such as the hrtick or a perf sampling timer, are
// not modeled); a timer stays on the CPU the task slept on.

// SleepRange sleeps ns ns with slack ns of timer slack (hrtimer_nanosleep()):
// the task wakes at the first timer interrupt of its CPU at or after ns
// and at the latest at ns+slack. ns may be 0 (nanosleep(0)) when slack is
// positive.
func SleepRange(ns, slack int64) Action { return Action{Op: ActSleep, NS: ns, Slack: slack} }

// sleepRange puts curr to sleep on an hrtimer with the soft expiry now+ns
// and the hard one slack later (the queue holds the hard one).
func (rq *RQ) sleepRange(t *Task, ns, slack int64) {
	if slack < 0 || ns < 0 || ns+slack <= 0 {
		panic(fmt.Sprintf("emu: task %v: Sleep(%d, slack %d): duration must be positive", t, ns, slack))
	}
	// hrtimer_nanosleep() -> do_nanosleep() -> hrtimer_sleeper_start_expires()
	// -> hrtimer_start_range_ns() (kernel/time/hrtimer.c v6.6).
	rq.cost(hwmodel.OpHrtimerStart)
	t.timer = &sleepTimer{task: t, soft: rq.now + ns}
	if slack > 0 {
		rq.slackTimers++
	}
	rq.events.push(event{t: rq.now + ns + slack, kind: evTimer, tm: t.timer})
	rq.schedule(true)
}

// hrtimerRunQueues is the rest of __hrtimer_run_queues() after the timer
// interrupt's own timer (a sleeper's hard expiry, or the tick): the
// pending sleep timers, in hard-expiry order, each woken while its soft
// expiry has passed, up to the first that has not. Only timers armed with
// slack can have a soft expiry before their hard one, so a CPU without
// any skips the scan.
func (rq *RQ) hrtimerRunQueues() {
	if rq.slackTimers == 0 {
		return
	}
	var pending []queued
	for _, q := range rq.events.h {
		if q.V.kind == evTimer && !q.V.tm.cancelled {
			pending = append(pending, q)
		}
	}
	slices.SortFunc(pending, func(a, b queued) int {
		if heap.Less(&a, &b) {
			return -1
		}
		return 1
	})
	live := 0
	for i, q := range pending {
		e := q.V
		if e.tm.soft > rq.now {
			for _, r := range pending[i:] {
				if r.V.t > r.V.tm.soft {
					live++
				}
			}
			break
		}
		// hrtimer_wakeup(), as for the timer's own expiry.
		e.tm.cancelled = true
		rq.tryToWakeUp(e.tm.task, nil, rq.now, 0)
	}
	rq.slackTimers = live
}
