package bench

import (
	"github.com/rqemu/rqemu/emu"
)

// channel is a pipe or a socket from its writers to one reader, as the
// workloads model it (doc.go): data, a semaphore the reader owns, holds a
// signal per message queued; where a writer can find the channel full,
// space holds, per writer, a semaphore that writer owns with the messages
// it may still queue, given back by the reader as it reads. hackbench's
// pipes and socketpairs, perf bench sched pipe's pipes and netperf's
// sockets are channels; how each kind is written and read (its kernel
// path, whether the wakeup is WF_SYNC) is its chanPath.
type channel struct {
	data  *emu.Sem
	space []*emu.Sem // per writer; nil: writers never block
	path  *chanPath
}

// chanPath is a kind of channel: its four actions with the semaphore
// left unset, built once (their kernel op lists too) and copied by the
// channel's builders with the semaphore filled in.
type chanPath struct {
	write emu.Action // the write's wakeup of the reader (a Signal)
	read  emu.Action // the reader's wait for a message
	full  emu.Action // a writer's wait for room
	room  emu.Action // the reader's return of room to a writer
}

// open makes a channel of this kind: its data semaphore named name, and
// a space semaphore per spaceNames entry, each holding credits signals.
func (p *chanPath) open(name string, credits int, spaceNames ...string) channel {
	c := channel{data: emu.NewSem(name, 0), path: p}
	for _, n := range spaceNames {
		c.space = append(c.space, emu.NewSem(n, credits))
	}
	return c
}

// on is action template a on sem.
func on(a emu.Action, sem *emu.Sem) emu.Action {
	a.Sem = sem
	return a
}

// send is a write's wakeup of the reader, stamped with the writer's
// clock.
func (c channel) send() emu.Action { return on(c.path.write, c.data) }

// sendStamp is a write's wakeup of the reader carrying v (the writer's
// index, say), which the reader gets as its Stamp.
func (c channel) sendStamp(v int64) emu.Action {
	a := on(c.path.write, c.data)
	a.NS, a.HasStamp = v, true
	return a
}

// recv is the reader's wait for the next message.
func (c channel) recv() emu.Action { return on(c.path.read, c.data) }

// waitRoom is writer i's wait for room.
func (c channel) waitRoom(i int) emu.Action { return on(c.path.full, c.space[i]) }

// giveRoom is the reader's return of room to writer i.
func (c channel) giveRoom(i int) emu.Action { return on(c.path.room, c.space[i]) }

// cycle is the position in a program of n steps run in turn, round and
// round: the shape of the tools' request/response and stream loops
// (netperf's), whose programs switch on next().
type cycle struct{ at, n int }

// next returns the step to run and moves on to the one after it.
func (c *cycle) next() int {
	i := c.at
	c.at = (i + 1) % c.n
	return i
}
