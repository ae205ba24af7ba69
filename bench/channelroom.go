package bench

import (
	"fmt"

	"github.com/rqemu/rqemu/emu"
)

// chanRoom is the room of a channel that several writers share, as the
// kernel keeps it: a pipe's ring of page buffers (fs/pipe.c, v6.6) or the
// sending socket's sk_sndbuf (net/unix/af_unix.c, net/core/sock.c, v6.6).
// A writer sees the channel's fill (every writer's messages less those
// read: emu.SharedCount, the value published at the last barrier plus its
// CPU's own changes), sleeps on its own semaphore when the channel is
// full, and is woken by the kernel's rule:
//   - pipe: pipe_write() merges a message into the last page buffer while
//     it fits, else takes a new buffer unless pipe_full() (16 buffers in
//     use), else sleeps on pipe->wr_wait (exclusive); after a wakeup it
//     tests pipe_writable() (!pipe_full()) again, with no merge. v6.6's
//     pipe_read() wakes one writer after every read that found the pipe
//     full (was_full, tested before the read; v6.14's "pipe_read: don't
//     wake up the writer if the pipe is still full" wakes only when the
//     read frees a buffer of a full pipe), and a writer that slept wakes
//     the next one when it leaves the pipe not full (wake_next_writer).
//   - socket: unix_stream_sendmsg() -> sock_alloc_send_pskb() sleeps in
//     sock_wait_for_wmem() (non-exclusive) while sk_wmem_alloc >=
//     sk_sndbuf, each queued skb charging its truesize; the reader's
//     consume_skb() -> sock_wfree() -> unix_write_space() wakes every
//     sleeper once unix_writable() (sk_wmem_alloc << 2 <= sk_sndbuf).
//
// Every wakeup is a sync one (wake_up_interruptible_sync_poll()).
//
// Simplifications: a pipe's pages are counted from the channel's first
// message, perPage messages each (the kernel starts a new page when a
// write finds the pipe empty or follows a sleep, so its pages can hold
// fewer); a message over a page waits for all its buffers at once. The
// exclusive wakeup goes to the next sleeper in writer order after the
// last one the waker woke (the kernel's wr_wait is FIFO). Across CPUs a
// writer does not see the other CPUs' writes and reads of the same epoch,
// so a channel can take a few messages more than its room (as sockets
// can: sk_wmem_alloc is read without a lock) and a writer can sleep on a
// room another CPU freed; the reader, which does not see it asleep until
// the next barrier, may then not wake it. repair, at the barrier, wakes
// such a sleeper as the kernel's order would have: a sleeper on a pipe
// that is not full, or on a writable socket, while no wakeup of the
// channel's is decided and not yet given and (pipe) no woken writer is
// still to test the pipe. On one CPU it never fires (TestSharedRoomOneCPU).
type chanRoom struct {
	name     string
	pipe     bool
	perPage  int64 // pipe: messages per page buffer (0: over a page)
	pages    int64 // pipe: buffers a message over a page takes
	truesize int64 // socket: an skb's truesize
	// written and read count the channel's messages; waiting the writers
	// in the wait for room.
	written, read, waiting *emu.SharedCount
	writers                []*emu.Task // fixed once the tasks exist
	space                  []*emu.Sem  // writer i's wait for room; fixed
	reader                 *emu.Task   // fixed once the tasks exist
	// inWait[i]: writer i is in its wait for room (asleep or woken and
	// not yet past its test). Owned by writer i's task; read at the
	// barrier.
	inWait []bool
	// next is the reader's exclusive-wakeup cursor; toWake the wakeups
	// its last read decided and it has not yet given. Owned by the
	// reader; toWake read at the barrier.
	next, toWake int
	// wakingNext[i]: writer i decided to wake the next writer
	// (wake_next_writer) and has not yet. Owned by writer i's task; read
	// at the barrier.
	wakingNext []bool
	// seen is the barrier pass that checked the room last. barrier.
	seen int64
}

func newChanRoom(s *emu.Sim, name string, pipe bool, datasize int, space []*emu.Sem) *chanRoom {
	r := &chanRoom{name: name, pipe: pipe, space: space,
		inWait: make([]bool, len(space)), wakingNext: make([]bool, len(space)),
		written: s.NewSharedCount(name + ".written"), read: s.NewSharedCount(name + ".read"),
		waiting: s.NewSharedCount(name + ".waiting")}
	switch {
	case !pipe:
		r.truesize = skbTruesize(datasize)
	case datasize <= pageSize:
		r.perPage = int64(pageSize / datasize)
	default:
		r.pages = int64((datasize + pageSize - 1) / pageSize)
	}
	return r
}

// slots is how many page buffers a pipe holding messages [rd, w) uses
// (pipe->head - pipe->tail).
func (r *chanRoom) slots(w, rd int64) int64 {
	switch {
	case w <= rd:
		return 0
	case r.perPage == 0:
		return (w - rd) * r.pages
	}
	return (w-1)/r.perPage - rd/r.perPage + 1
}

// pipeFull is pipe_full(): no buffer free for a new one (for a message
// over a page, not enough for all of it).
func (r *chanRoom) pipeFull(w, rd int64) bool {
	need := int64(1)
	if r.perPage == 0 {
		need = r.pages
	}
	return r.slots(w, rd)+need > pipeBuffers
}

// blocked is a writer's first test of its write: pipe_write()'s merge
// into the last buffer, else !pipe_full(); sock_alloc_send_pskb()'s
// sk_wmem_alloc < sk_sndbuf.
func (r *chanRoom) blocked(w, rd int64) bool {
	if !r.pipe {
		return (w-rd)*r.truesize >= sockSndbuf
	}
	if r.perPage > 0 && w > rd && w%r.perPage != 0 {
		return false // "we try to merge new data into the last buffer"
	}
	return r.pipeFull(w, rd)
}

// stillBlocked is a woken writer's test: pipe_writable() for a pipe (no
// merge after a sleep), sock_wait_for_wmem()'s for a socket.
func (r *chanRoom) stillBlocked(w, rd int64) bool {
	if !r.pipe {
		return (w-rd)*r.truesize >= sockSndbuf
	}
	return r.pipeFull(w, rd)
}

// writable is unix_writable() with [rd, w) queued.
func (r *chanRoom) writable(w, rd int64) bool { return 4*(w-rd)*r.truesize <= sockSndbuf }

// seenSleepers appends to buf the writers that t (the waker) sees asleep
// for room, from writer `from` on in writer order, but skip.
func (r *chanRoom) seenSleepers(t *emu.Task, from, skip int, all bool, buf []int) []int {
	if r.waiting.Read(t) <= 0 {
		return buf
	}
	n := len(r.writers)
	for k := 0; k < n; k++ {
		i := (from + k) % n
		if i != skip && t.SeesAsleepOn(r.writers[i], r.space[i]) {
			buf = append(buf, i)
			if !all {
				break
			}
		}
	}
	return buf
}

// afterRead is what the reader's read of one message does to the room,
// and the writers it wakes (appended to buf): pipe_read()'s was_full
// wakeup of one writer, unix_write_space()'s of all.
func (r *chanRoom) afterRead(t *emu.Task, buf []int) []int {
	w, rd := r.written.Read(t), r.read.Read(t)
	r.read.Add(t, 1)
	if r.pipe {
		if !r.pipeFull(w, rd) {
			return buf // !was_full
		}
		buf = r.seenSleepers(t, r.next, -1, false, buf)
		if len(buf) > 0 {
			r.next = (buf[len(buf)-1] + 1) % len(r.writers)
		}
		return buf
	}
	if !r.writable(w, rd+1) {
		return buf
	}
	return r.seenSleepers(t, 0, -1, true, buf)
}

// repair is the barrier's check of the room (chanRoom's doc): it wakes
// the sleepers the kernel would have woken by now, as the reader.
func (r *chanRoom) repair(s *emu.Sim) int {
	if r.waiting.Value() <= 0 {
		return 0
	}
	w, rd := r.written.Value(), r.read.Value()
	if r.pipe && r.pipeFull(w, rd) || !r.pipe && !r.writable(w, rd) || r.toWake > 0 {
		return 0 // full, or the reader is giving its wakeups
	}
	var sleepers []int
	for i, wr := range r.writers {
		switch {
		case r.wakingNext[i]:
			return 0 // a writer is giving its wake_next_writer
		case s.AsleepOn(wr, r.space[i]):
			sleepers = append(sleepers, i)
		case r.inWait[i] && r.pipe:
			return 0 // a woken writer will test the pipe and go on
		}
	}
	if r.pipe && len(sleepers) > 1 {
		sleepers = sleepers[:1]
	}
	for _, i := range sleepers {
		s.SignalAtBarrier(r.reader, r.space[i], true)
	}
	return len(sleepers)
}

// roomRepairs watches a workload's rooms: each CPU lists the rooms its
// tasks changed (owned by that CPU), and the barrier hook checks them.
type roomRepairs struct {
	s       *emu.Sim
	touched [][]*chanRoom
	pass    int64
	woken   int64 // wakeups the repair gave: 0 on one CPU
}

func newRoomRepairs(s *emu.Sim) *roomRepairs {
	rr := &roomRepairs{s: s, touched: make([][]*chanRoom, len(s.Machine().CPUs))}
	s.OnBarrier(rr.check)
	return rr
}

// touch notes that t changed room r.
func (rr *roomRepairs) touch(t *emu.Task, r *chanRoom) {
	l := rr.touched[t.CPU()]
	if n := len(l); n > 0 && l[n-1] == r {
		return
	}
	rr.touched[t.CPU()] = append(l, r)
}

// touchIfWaiting notes that t changed room r if t sees a writer in its
// wait for room: the change can matter to the repair only then (a writer
// that starts waiting touches it itself, and others see it waiting from
// the next barrier on).
func (rr *roomRepairs) touchIfWaiting(t *emu.Task, r *chanRoom) {
	if r.waiting.Read(t) > 0 {
		rr.touch(t, r)
	}
}

func (rr *roomRepairs) check(cpus []int) {
	rr.pass++
	for _, c := range cpus {
		l := rr.touched[c]
		for _, r := range l {
			if r.seen != rr.pass {
				r.seen = rr.pass
				rr.woken += int64(r.repair(rr.s))
			}
		}
		clear(l)
		rr.touched[c] = l[:0]
	}
}

func (r *chanRoom) String() string { return fmt.Sprintf("room(%s)", r.name) }
