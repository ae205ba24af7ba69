package emu

import (
	"fmt"
	"strconv"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// A pipe's shared memory, after fs/pipe.c (v6.6): pipe_write() and
// pipe_read(), with the wait queues of include/linux/wait.h and the
// layout of include/linux/pipe_fs_i.h.
//
// A workload's semaphores carry what a pipe does to its tasks (a write
// wakes the reader, a read gives a writer room); a Pipe adds what the pipe
// costs the CPUs that share it. Its writers and its reader take the lines
// of struct pipe_inode_info, of its bufs[] ring and of the data pages in
// turn, under the pipe's mutex: in hackbench every sender of a group
// writes to every receiver's pipe, so 20 writers and a reader on 21 CPUs
// pass each pipe's lines around. The steps below (PipeOp) log those
// accesses on the task's CPU in the kernel's order, inside
// __pipe_lock() ... __pipe_unlock() where the kernel holds the mutex, and
// the weave prices them: a line another CPU wrote last is a transfer, and
// the mutex is the weave's lock on its line, so a writer that comes while
// another holds it waits (its CPU stalls, charged to mutex_lock). The
// cross-CPU effects of the pipe's state go through the semaphores and the
// barrier, so the lines need no host atomics: only logged accesses on
// lines of the Sim's contention Space, homed on the node of the CPU that
// creates the pipe (kzalloc() of pipe_inode_info, kcalloc() of bufs[]).
//
// Layout on x86-64 (no lockdep; CONFIG_MUTEX_SPIN_ON_OWNER and
// CONFIG_WATCH_QUEUE, as distribution kernels build), struct
// pipe_inode_info, 176 bytes from kmalloc-192, so 64-byte aligned:
//
//	line 0 [0,64):    mutex (owner 0, wait_lock 8, osq 12, wait_list 16-31),
//	                  rd_wait (lock 32, head 40-55), wr_wait.lock 56
//	line 1 [64,128):  wr_wait.head 64-79, head 80, tail 84, max_usage 88,
//	                  ring_size 92, note_loss 96, nr_accounted 100,
//	                  readers 104, writers 108, files 112, r_counter 116,
//	                  w_counter 120, poll_usage 124
//	line 2 [128,176): tmp_page 128, fasync_readers 136, fasync_writers 144,
//	                  bufs 152, user 160, watch_queue 168
//
// bufs[] is PIPE_DEF_BUFFERS (16) struct pipe_buffer of 40 bytes (page 0,
// offset 8, len 12, ops 16, flags 24, private 32) from kmalloc-1k: 640
// bytes, ten lines, slot k at byte 40k. The mutex, rd_wait.lock and
// wr_wait.lock share line 0, and pipe_write() takes rd_wait.lock inside
// the mutex to move head (pipe_read() to move tail): the mutex is the
// line's lock in the weave (a weave line has one), the wait-queue
// spinlocks are logged as their RMW and store, so their traffic is priced
// and their short holds are not.
//
// Simplifications, each said where it applies:
//   - The mutex is a spinning lock. mutex_lock() spins in
//     mutex_optimistic_spin() while the owner runs, on the osq (a queue) and
//     then on the owner, and nothing in the pipe's critical section sleeps
//     (the copies are of small, resident buffers), so a waiter spins rather
//     than sleeps: the weave's first-come-first-served lock is a fair
//     simplification. The spinners' reads of lock->owner are not logged:
//     the weave prices the head spinner's copy of the line (its release
//     invalidates the copy, and the handover is a read and a cmpxchg:
//     weave.Replayer.spinnerRead, TestPipeSpinnerReadsOwner).
//   - Where a message lands in the ring depends on the pipe's state when
//     its writer takes the mutex, which writers on different CPUs in one
//     epoch cannot share without the barrier. So the place is decided from
//     what each side owns: writer i's k-th message is the pipe's
//     (k*W+i)-th (the W writers take turns, as hackbench's senders, which
//     loop over the receivers in step, roughly do), and the reader knows
//     a message's writer from its stamp and counts that writer's
//     messages. A write that finds the pipe empty starts a new buffer at
//     offset 0 of the recycled page (pipe->tmp_page, the page the reader
//     released last); the stamp tells the reader. Whether it is empty,
//     pipe_empty(head, tail) under the mutex, is the pipe's count of
//     messages written and not yet copied out (queued, a SharedCount:
//     the writer sees it as published at the last barrier plus its own
//     CPU's writes, so a copy-out on another CPU in the same epoch is not
//     seen). Other writes merge into the page of
//     their turn at its offset, PAGE_SIZE/size messages a page. Every
//     page is the one recycled frame (pipe->tmp_page is a one-page cache,
//     so a pipe the reader keeps up with reuses one page): with more than
//     a page in flight a write's lines alias the older page's, which
//     changes whose copy it takes but not that it takes one (two frames
//     measured the same hackbench throughput over three seeds, for twice
//     the lines). A message over a page takes buffers of its own, one
//     frame each (the remainder that the kernel merges into a non-empty
//     pipe's last buffer is not merged).
//   - Not modeled: struct page (page_count() in anon_pipe_buf_release(),
//     alloc_page() when tmp_page is empty), the once-a-jiffy timestamp
//     store of file_update_time() and touch_atime() (their reads of the
//     inode are logged), the wait-queue entries on the waiters' stacks.
type Pipe struct {
	name    string // fixed
	data    *Sem   // the reader's semaphore; fixed
	writers int    // fixed
	size    int    // bytes per write() and read(); fixed
	// perPage is how many messages a page holds (PAGE_SIZE/size), 0 for
	// a message over a page; pages is how many buffers a message takes.
	// fixed.
	perPage, pages int

	info   [3]weave.LineID             // struct pipe_inode_info; fixed
	bufs   [pipeBufsLines]weave.LineID // bufs[]; fixed
	frames []weave.LineID              // the data page frames, 64 lines each; fixed
	inode  weave.LineID                // the pipe inode's timestamps; fixed

	// sent[i] counts writer i's messages; wslept[i]: writer i slept for
	// room and has not written since (wake_next_writer). Owned by the
	// task that writes as writer i.
	sent   []int64
	wslept []bool
	// got[i] counts writer i's messages read; rslept: the reader slept
	// for data and has not copied a message out since
	// (wake_next_reader). Owned by the reader, Data's owner.
	got    []int64
	rslept bool
	// queued counts the messages written and not yet copied out:
	// pipe_write()'s was_empty is queued == 0 as the writer's CPU sees
	// it.
	queued *SharedCount
}

// Pipe geometry (x86-64, PAGE_SIZE 4 KiB).
const (
	pipePageSize     = 4096 // PAGE_SIZE
	pipeDefBuffers   = 16   // PIPE_DEF_BUFFERS: the ring's slots
	pipeBufBytes     = 40   // sizeof(struct pipe_buffer)
	pipeBufLenOff    = 8    // offsetof(struct pipe_buffer, offset): offset and len share 8 bytes
	pipeBufFieldLen  = 28   // page .. flags: what pipe_write() and pipe_read() touch of a slot
	pipeLineBytes    = 64
	pipeLinesPerPage = pipePageSize / pipeLineBytes
	pipeBufsLines    = (pipeDefBuffers*pipeBufBytes + pipeLineBytes - 1) / pipeLineBytes
	// pipeFrames is how many sets of a message's pages the data lines
	// hold (see Pipe).
	pipeFrames = 1
	// pipeMaxSize is the default pipe's capacity: a bigger write cannot
	// complete without the reader draining it, which one step cannot
	// express.
	pipeMaxSize = pipeDefBuffers * pipePageSize
)

// The lines of struct pipe_inode_info.
const (
	pipeLine0 = iota // mutex, rd_wait, wr_wait.lock
	pipeLine1        // wr_wait.head, head, tail, max_usage, readers, writers, poll_usage
	pipeLine2        // tmp_page, fasync_*, bufs, watch_queue
)

// A pipe write()'s or read()'s base cost (the preset's pipe_write or
// pipe_read: what the syscall runs beyond its entry and exit) is split
// around the pipe's mutex as the kernel runs it (v6.6: fs/read_write.c
// ksys_write() -> vfs_write() -> fs/pipe.c pipe_write(); likewise
// vfs_read() -> pipe_read()):
//   - before __pipe_lock(): the VFS layer (fdget_pos(), rw_verify_area(),
//     security_file_permission(), init_sync_kiocb()) and mutex_lock()'s
//     might_sleep(), charged to vfs_write / vfs_read;
//   - under the mutex: pipe_write()'s or pipe_read()'s body and its copy
//     (copy_page_from_iter(), copy_page_to_iter()), pipe_write / pipe_read;
//   - after __pipe_unlock(): kill_fasync() and the timestamps,
//     file_update_time() or file_accessed()'s touch_atime().
//
// [E] The shares are the self cycles of the functions each phase runs in
// a kernel test robot profile of hackbench over pipes on a 2-socket
// Cascade Lake (lkp-csl-2sp9, hackbench pipe process 50%, the 829c1651e9
// column of its 2023-02-21 report): 15.3% before the lock (ksys_*,
// __fget_light, __fdget_pos, vfs_*, rw_verify_area,
// security_file_permission, apparmor_file_permission, aa_file_perm,
// fsnotify_perm, __get_task_ioprio, __might_sleep, __x64_sys_*), 20.9%
// under it (pipe_write, pipe_read, copy_user_enhanced_fast_string and the
// iov_iter copy functions, __might_fault, __might_resched, page_copy_sane,
// anon_pipe_buf_release, __cond_resched), 4.0% after it
// (file_update_time, inode_needs_update_time, current_time,
// ktime_get_coarse_real_ts64, touch_atime, atime_needs_update,
// mnt_user_ns, kill_fasync): 0.38 / 0.52 / 0.10. Simplified: one split
// for both directions (the profile does not tell a read()'s VFS work from
// a write()'s), and the self cycles under the lock include the pipe's
// cache misses, which the weave prices on top: the share under the lock
// is if anything too large.
const (
	pipeCostBefore = 0.38
	pipeCostAfter  = 0.10
)

// pipe phases of a base cost (pipeCost).
const (
	pipeBefore = iota
	pipeUnder
	pipeAfter
)

// pipeCost charges phase of op's base cost to sym, as cost does (the
// three phases sum to the whole, in integer ns).
func (rq *RQ) pipeCost(sym Symbol, op hwmodel.KernelOp, phase int) {
	total := rq.m.Cost(op)
	before := int64(float64(total)*pipeCostBefore + 0.5)
	after := int64(float64(total)*pipeCostAfter + 0.5)
	ns := [...]int64{before, total - before - after, after}[phase]
	switch {
	case rq.pay.paidBy != nil || ns == 0:
	case rq.pay.barrier:
		rq.addDebt(sym, ns)
	default:
		rq.spend(sym, ns)
	}
}

// PipeSpec describes a pipe to create.
type PipeSpec struct {
	Name string
	// Data is the reader's semaphore, a signal per message (the
	// workload's channel); its owner is the pipe's reader.
	Data *Sem
	// Writers is how many tasks write into the pipe, numbered
	// 0..Writers-1 in its steps.
	Writers int
	// Size is the bytes of each write() and read(): one message, at most
	// the pipe's 64 KiB.
	Size int
	// CPU is the CPU that creates the pipe: its lines are homed on that
	// CPU's NUMA node.
	CPU int
}

// NewPipe creates a pipe's lines in the Sim's contention Space. It is for
// set-up time only, like NewTask.
func (s *Sim) NewPipe(spec PipeSpec) (*Pipe, error) {
	switch {
	case spec.Data == nil:
		return nil, fmt.Errorf("pipe %q: no data semaphore", spec.Name)
	case spec.Writers < 1:
		return nil, fmt.Errorf("pipe %q: %d writers, want at least 1", spec.Name, spec.Writers)
	case spec.Size < 1 || spec.Size > pipeMaxSize:
		return nil, fmt.Errorf("pipe %q: message size %d out of range [1, %d]", spec.Name, spec.Size, pipeMaxSize)
	case spec.CPU < 0 || spec.CPU >= len(s.cpus):
		return nil, fmt.Errorf("pipe %q: cpu %d out of range [0, %d)", spec.Name, spec.CPU, len(s.cpus))
	}
	home := s.m.CPUs[spec.CPU].Node
	p := &Pipe{
		name: spec.Name, data: spec.Data, writers: spec.Writers, size: spec.Size, pages: 1,
		sent: make([]int64, spec.Writers), wslept: make([]bool, spec.Writers), got: make([]int64, spec.Writers),
		queued: s.NewSharedCount("pipe(" + spec.Name + ").queued"),
	}
	if spec.Size <= pipePageSize {
		p.perPage = pipePageSize / spec.Size
	} else {
		p.pages = (spec.Size + pipePageSize - 1) / pipePageSize
	}
	pfx := "pipe(" + spec.Name + ")"
	for i, n := range [3]string{".mutex+rd_wait", ".head+tail", ".tmp_page+bufs"} {
		p.info[i] = s.space.NewLine(pfx+n, home)
	}
	for i := range p.bufs {
		p.bufs[i] = s.space.NewLine(pfx+".bufs+"+strconv.Itoa(i*pipeLineBytes), home)
	}
	p.frames = make([]weave.LineID, pipeFrames*p.pages*pipeLinesPerPage)
	for i := range p.frames {
		p.frames[i] = s.space.NewLine(pfx+".page"+strconv.Itoa(i/pipeLinesPerPage)+"+"+strconv.Itoa(i%pipeLinesPerPage*pipeLineBytes), home)
	}
	p.inode = s.space.NewLine(pfx+".inode", home)
	return p, nil
}

// Name is the name the pipe was made with.
func (p *Pipe) Name() string { return p.name }

// Writer is the writer of the message a stamp came with: a PipeWrite
// step stamps its signal with the writer and how the message was placed,
// so a reader's program reads the writer from its Stamp here.
func (p *Pipe) Writer(stamp int64) int { return int(stamp >> 1) }

// pipeStamp is a PipeWrite's stamp: the writer, and whether the write
// started a buffer of its own at the recycled page (fresh).
func pipeStamp(writer int, fresh bool) int64 {
	s := int64(writer) << 1
	if fresh {
		s |= 1
	}
	return s
}

// PipeOp is a step of fs/pipe.c's paths that an Action runs (OnPipe).
type PipeOp uint8

const (
	pipeNoOp PipeOp = iota
	// PipeWrite, on a Signal of the pipe's Data by writer W: its write()
	// of one message, pipe_write() under the mutex, then the wakeup of
	// the reader (the signal, stamped for the reader: Pipe.Writer). It
	// charges the preset's pipe_write cost around the mutex hold as the
	// kernel spends it (pipeCostBefore: vfs_write(), pipe_write() under
	// the mutex, file_update_time()).
	PipeWrite
	// PipeReadWait, on the reader's Wait on Data: the read()'s VFS entry
	// (vfs_read(), pipeCostBefore) and its wait for a message. With none
	// pending it is pipe_read()'s empty pass and
	// wait_event_interruptible_exclusive() up to the schedule(); with one,
	// nothing more (the copy-out does the rest).
	PipeReadWait
	// PipeCopyOut, on the reader's next action after a PipeReadWait:
	// the rest of that read(): the wait's wake side if it slept, then
	// pipe_read()'s copy of the message the wait consumed (the task's
	// Stamp) under the mutex, charging the rest of the preset's pipe_read
	// cost (pipeCostBefore): pipe_read() there, touch_atime() after.
	// It finishes the previous syscall, so it runs before the action's
	// own kernel ops (Action.Kernel).
	PipeCopyOut
	// PipeWaitRoom, on writer W's Wait for room: with none pending,
	// pipe_write() finding the pipe full and waiting on wr_wait; the
	// writer's next PipeWrite does the wake side.
	PipeWaitRoom
	// PipeGiveRoom, on the reader's Signal of writer W's room:
	// pipe_read()'s wake_up_interruptible_sync_poll(&pipe->wr_wait)
	// (was_full), when the writer sleeps for room as the reader sees it.
	PipeGiveRoom
	numPipeOps
)

var pipeOpNames = [numPipeOps]string{"none", "write", "read-wait", "copy-out", "wait-room", "give-room"}

func (op PipeOp) String() string {
	if op < numPipeOps {
		return pipeOpNames[op]
	}
	return "pipe-op(" + strconv.Itoa(int(op)) + ")"
}

// PipeStep is one pipe step of an Action: op on Pipe, as writer Writer
// (PipeWrite, PipeWaitRoom, PipeGiveRoom; 0 otherwise).
type PipeStep struct {
	Pipe   *Pipe
	Op     PipeOp
	Writer int
}

// OnPipe adds a pipe step to the action (steps run in the order added).
// It panics on an unknown op or a writer out of range (a workload's
// set-up bug).
func (a Action) OnPipe(p *Pipe, op PipeOp, writer int) Action {
	if p == nil || op == pipeNoOp || op >= numPipeOps || writer < 0 || writer >= p.writers {
		panic(fmt.Sprintf("emu: OnPipe(%v, %v, writer %d): no such pipe step", p, op, writer))
	}
	a.Pipe = append(a.Pipe[:len(a.Pipe):len(a.Pipe)], PipeStep{Pipe: p, Op: op, Writer: writer})
	return a
}

func (p *Pipe) String() string {
	if p == nil {
		return "pipe(nil)"
	}
	return "pipe(" + p.name + ")"
}

// runPipeSteps runs a's pipe steps on curr t: the copy-outs (which finish
// the previous read()) when first, before the action's kernel ops; the
// others after them, before the action itself.
func (rq *RQ) runPipeSteps(t *Task, a *Action, first bool) {
	for _, st := range a.Pipe {
		if (st.Op == PipeCopyOut) != first {
			continue
		}
		p := st.Pipe
		switch st.Op {
		case PipeWrite:
			rq.checkPipeStep(t, a, st, ActSignal, p.data)
			rq.pipeWrite(a, p, st.Writer)
		case PipeReadWait:
			rq.checkPipeStep(t, a, st, ActWait, p.data)
			rq.pipeReadWait(p)
		case PipeCopyOut:
			if p.data.owner != t {
				panic(fmt.Sprintf("emu: task %v copies out of %v, read by %v", t, p, p.data.owner))
			}
			rq.pipeCopyOut(t, p)
		case PipeWaitRoom:
			rq.checkPipeStep(t, a, st, ActWait, nil)
			rq.pipeWaitRoom(a, p, st.Writer)
		case PipeGiveRoom:
			rq.checkPipeStep(t, a, st, ActSignal, nil)
			rq.pipeGiveRoom(a, p)
		}
	}
}

// checkPipeStep panics unless the action is op on sem (any semaphore of
// its own kind when sem is nil).
func (rq *RQ) checkPipeStep(t *Task, a *Action, st PipeStep, op ActionOp, sem *Sem) {
	if a.Op != op || a.Sem == nil || sem != nil && a.Sem != sem {
		panic(fmt.Sprintf("emu: task %v: pipe step %v on %v needs action %d on %v, got action %d on %v", t, st.Op, st.Pipe, op, sem, a.Op, a.Sem))
	}
}

// pipeAccess logs one access of this CPU to a pipe line, charged to sym,
// and charges its uncontended cost.
func (rq *RQ) pipeAccess(line weave.LineID, op hwmodel.Op, sym Symbol) {
	rq.log.Record(rq.logNow(), line, op, rq.site(sym))
	rq.accessCost(sym, op)
}

// pipeLock is __pipe_lock(): mutex_lock(&pipe->mutex), the fast path's
// cmpxchg of lock->owner, or the optimistic spin until the owner's
// release hands it over (the weave's lock).
func (rq *RQ) pipeLock(p *Pipe) { rq.pipeAccess(p.info[pipeLine0], hwmodel.Lock, SymMutexLock) }

// pipeUnlock is __pipe_unlock(): mutex_unlock(), the cmpxchg of
// lock->owner back to 0 (__mutex_unlock_fast():
// atomic_long_try_cmpxchg_release(), a lock cmpxchg on x86), a locked
// instruction that drains the store buffer (weave.Log.MarkLocked), unlike
// a spinlock's release.
func (rq *RQ) pipeUnlock(p *Pipe) {
	rq.pipeAccess(p.info[pipeLine0], hwmodel.Unlock, SymMutexUnlock)
	rq.log.MarkLocked()
}

// The pipe's two wait queues: rd_wait's head is on line 0, wr_wait's on
// line 1; both locks are on line 0.
const (
	rdWait = iota
	wrWait
)

func (p *Pipe) waitHead(q int) weave.LineID {
	if q == wrWait {
		return p.info[pipeLine1]
	}
	return p.info[pipeLine0]
}

// pipeWaitQueue is one pass through a wait queue's lock that changes the
// list: prepare_to_wait_event() adding the entry (list_add on the head),
// or finish_wait() taking it off (list_del_init). The lock is
// spin_lock_irqsave(&wq_head->lock) on line 0.
func (rq *RQ) pipeWaitQueue(p *Pipe, q int, sym Symbol) {
	rq.pipeAccess(p.info[pipeLine0], hwmodel.RMW, SymRawSpinLockIrqsave)
	rq.pipeAccess(p.waitHead(q), hwmodel.Write, sym)
	rq.pipeAccess(p.info[pipeLine0], hwmodel.Write, sym)
}

// pipeWaitWoken is the wake side of wait_event_interruptible_exclusive()
// on the pipe after its schedule(): ___wait_event() loops to
// prepare_to_wait_event() again (the waker's autoremove_wake_function()
// took the entry off), finds the condition true (pipe_writable() or
// pipe_readable(), line 1's head and tail) and leaves through
// finish_wait().
func (rq *RQ) pipeWaitWoken(p *Pipe, q int, sym Symbol) {
	rq.pipeWaitQueue(p, q, sym)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym)
	rq.pipeWaitQueue(p, q, sym)
}

// pipeWake is wake_up_interruptible_sync_poll() on one of the pipe's wait
// queues: __wake_up_common_lock() takes the queue's lock and walks the
// list; with a waiter, autoremove_wake_function() takes it off the list
// (the wakeup itself is the action's signal, run after the unlock here
// rather than inside it).
func (rq *RQ) pipeWake(p *Pipe, q int, waiter bool, sym Symbol) {
	rq.pipeAccess(p.info[pipeLine0], hwmodel.RMW, SymRawSpinLockIrqsave)
	rq.pipeAccess(p.waitHead(q), hwmodel.Read, sym)
	if waiter {
		rq.pipeAccess(p.waitHead(q), hwmodel.Write, sym)
	}
	rq.pipeAccess(p.info[pipeLine0], hwmodel.Write, sym)
}

// pipeChunk is one buffer of a message: where its bytes are and what the
// write and the read do to the ring for it.
type pipeChunk struct {
	frame, off, n int // data page frame, offset and bytes
	slot          int // bufs[] slot
	// starts: the write starts the buffer (pipe->head++, tmp_page);
	// ends: the read empties it (pipe_buf_release(), pipe->tail++).
	starts, ends bool
}

// chunk places buffer c of the message at ring position pos (see Pipe): a
// fresh write at offset 0 of the recycled page in a buffer of its own,
// else its turn's offset in the page of its turn; a message over a page
// in buffers of its own.
func (p *Pipe) chunk(pos int64, fresh bool, c int) pipeChunk {
	if p.perPage == 0 {
		return pipeChunk{frame: int(pos%pipeFrames)*p.pages + c, n: min(pipePageSize, p.size-c*pipePageSize),
			slot: int((pos*int64(p.pages) + int64(c)) % pipeDefBuffers), starts: true, ends: true}
	}
	if fresh {
		return pipeChunk{n: p.size, slot: int(pos % pipeDefBuffers), starts: true, ends: true}
	}
	pg, i := pos/int64(p.perPage), int(pos%int64(p.perPage))
	return pipeChunk{frame: int(pg % pipeFrames), off: i * p.size, n: p.size, slot: int(pg % pipeDefBuffers),
		starts: i == 0, ends: i == p.perPage-1}
}

// pipeData logs the copy of a chunk's bytes: copy_page_from_iter()'s
// stores (op Write) or copy_page_to_iter()'s loads (Read), one access per
// line. The copy's loads (copy_user_enhanced_fast_string()'s rep movsb on
// x86, v6.6) do not depend on each other for their addresses: an
// out-of-order core overlaps their misses (independent loads, up to the
// preset's MLP), and the next access that is not one waits for them.
// Simplified: the stores block one by one (the weave has no store
// buffer).
func (rq *RQ) pipeData(p *Pipe, c pipeChunk, op hwmodel.Op, sym Symbol) {
	if op == hwmodel.Read {
		defer rq.log.SetIndependent(rq.log.SetIndependent(true))
	}
	base := c.frame * pipeLinesPerPage
	for l := c.off / pipeLineBytes; l <= (c.off+c.n-1)/pipeLineBytes; l++ {
		rq.pipeAccess(p.frames[base+l], op, sym)
	}
}

// pipeBufFields logs an access to slot's page..flags (one or two lines).
func (rq *RQ) pipeBufFields(p *Pipe, slot int, op hwmodel.Op, sym Symbol) {
	lo := slot * pipeBufBytes
	for l := lo / pipeLineBytes; l <= (lo+pipeBufFieldLen-1)/pipeLineBytes; l++ {
		rq.pipeAccess(p.bufs[l], op, sym)
	}
}

// bufLen is the line of slot's offset and len.
func (p *Pipe) bufLen(slot int) weave.LineID {
	return p.bufs[(slot*pipeBufBytes+pipeBufLenOff)/pipeLineBytes]
}

// pipeWrite is fs/pipe.c: pipe_write() of one message by writer w (v6.6),
// with the wake side of its wait for room if it slept, before the
// action's signal to the reader; it stamps the signal (pipeStamp).
func (rq *RQ) pipeWrite(a *Action, p *Pipe, w int) {
	const sym = SymPipeWrite
	// was_empty = pipe_empty(head, pipe->tail); the wakeup finds the
	// reader on rd_wait if it sleeps there as the waker sees it.
	wasEmpty, readerWaits := p.queued.readOn(rq) == 0, false
	p.queued.addOn(rq, 1)
	if o := p.data.owner; o != nil { // else the signal panics: an unbound semaphore
		v := rq.taskView(o)
		readerWaits = asleepOn(v.state, v.waitingOn, p.data)
	}
	slept := p.wslept[w]
	// After a wait for room the loop starts a new buffer: no merge.
	fresh := wasEmpty || slept
	pos := p.sent[w]*int64(p.writers) + int64(w)
	p.sent[w]++
	if slept {
		rq.pipeWaitWoken(p, wrWait, sym) // wait_event_interruptible_exclusive(pipe->wr_wait, ...)
	} else {
		// vfs_write() up to __pipe_lock() (after a wait for room,
		// that pass ran it: pipeWaitRoom).
		rq.pipeCost(SymVFSWrite, hwmodel.OpPipeWrite, pipeBefore)
	}
	rq.pipeLock(p)
	rq.pipeCost(sym, hwmodel.OpPipeWrite, pipeUnder)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe->readers; head, tail: was_empty
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // pipe_has_watch_queue(), pipe->bufs
	for c := 0; c < p.pages; c++ {
		ch := p.chunk(pos, fresh, c)
		if !ch.starts {
			// "If it wasn't empty we try to merge new data into the
			// last buffer": it fits.
			rq.pipeBufFields(p, ch.slot, hwmodel.Read, sym) // flags, offset, len, page
			rq.pipeData(p, ch, hwmodel.Write, sym)
			rq.pipeAccess(p.bufLen(ch.slot), hwmodel.Write, sym) // buf->len += ret
			continue
		}
		if c == 0 && !fresh && p.size%pipePageSize != 0 {
			// The merge test finds no room in the last buffer.
			rq.pipeBufFields(p, (ch.slot+pipeDefBuffers-1)%pipeDefBuffers, hwmodel.Read, sym)
		}
		// The loop's new buffer.
		rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym)                  // readers, head, tail, max_usage: !pipe_full()
		rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym)                  // pipe->tmp_page
		rq.pipeAccess(p.info[pipeLine0], hwmodel.RMW, SymRawSpinLockIrqsave) // spin_lock_irq(&pipe->rd_wait.lock)
		rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym)                  // head, tail, max_usage again
		rq.pipeAccess(p.info[pipeLine1], hwmodel.Write, sym)                 // pipe->head = head + 1
		rq.pipeAccess(p.info[pipeLine0], hwmodel.Write, sym)                 // spin_unlock_irq()
		rq.pipeBufFields(p, ch.slot, hwmodel.Write, sym)                     // buf->page, ops, offset, len, flags
		rq.pipeAccess(p.info[pipeLine2], hwmodel.Write, sym)                 // pipe->tmp_page = NULL
		rq.pipeData(p, ch, hwmodel.Write, sym)                               // copy_page_from_iter()
		rq.pipeAccess(p.bufLen(ch.slot), hwmodel.Write, sym)                 // buf->len = copied
	}
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // out: pipe_full(): wake_next_writer
	rq.pipeUnlock(p)
	if wasEmpty {
		rq.pipeWake(p, rdWait, readerWaits, sym)
	} else {
		rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe->poll_usage
	}
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // kill_fasync(&pipe->fasync_readers)
	if slept {
		// wake_next_writer: the pipe is not full. Which writer that
		// wakes is bench's (chanRoom: the channel's room and its
		// sleepers live there); this step prices the wait queue's line.
		p.wslept[w] = false
		rq.pipeWake(p, wrWait, false, sym)
	}
	rq.pipeAccess(p.inode, hwmodel.Read, SymFileUpdateTime) // file_update_time()
	rq.pipeCost(SymFileUpdateTime, hwmodel.OpPipeWrite, pipeAfter)
	a.NS, a.HasStamp = pipeStamp(w, fresh), true
}

// pipeReadWait is pipe_read()'s first pass over an empty pipe, up to the
// schedule() in wait_event_interruptible_exclusive(pipe->rd_wait,
// pipe_readable(pipe)); nothing when a message is pending.
func (rq *RQ) pipeReadWait(p *Pipe) {
	rq.pipeCost(SymVFSRead, hwmodel.OpPipeRead, pipeBefore) // vfs_read(), up to pipe_read()'s __pipe_lock()
	if p.data.pendingBy(rq.now) {
		return
	}
	const sym = SymPipeRead
	rq.pipeLock(p)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // was_full; head, tail: empty; pipe->writers
	rq.pipeUnlock(p)
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // kill_fasync(&pipe->fasync_writers)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_readable()
	rq.pipeWaitQueue(p, rdWait, sym)                    // prepare_to_wait_event()
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_readable() again
	p.rslept = true
}

// pipeCopyOut is the rest of the reader's read() (pipe_read(), v6.6): the
// wake side of its wait if it slept, then the copy of the message its
// wait consumed, whose writer and placement its stamp gives.
func (rq *RQ) pipeCopyOut(t *Task, p *Pipe) {
	const sym = SymPipeRead
	w, fresh := p.Writer(t.stamp), t.stamp&1 == 1
	if w < 0 || w >= p.writers {
		panic(fmt.Sprintf("emu: task %v copies out of %v a message of writer %d (stamp %d): not a PipeWrite's", t, p, w, t.stamp))
	}
	pos := p.got[w]*int64(p.writers) + int64(w)
	p.got[w]++
	p.queued.addOn(rq, -1)
	slept := p.rslept
	p.rslept = false
	if slept {
		rq.pipeWaitWoken(p, rdWait, sym) // wait_event_interruptible_exclusive(pipe->rd_wait, ...)
	}
	rq.pipeLock(p)
	rq.pipeCost(sym, hwmodel.OpPipeRead, pipeUnder)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // was_full; head, tail, ring_size
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // pipe->bufs
	for c := 0; c < p.pages; c++ {
		ch := p.chunk(pos, fresh, c)
		if c > 0 {
			rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // the loop's next head, tail
		}
		rq.pipeBufFields(p, ch.slot, hwmodel.Read, sym)      // buf->len, flags, page, offset
		rq.pipeData(p, ch, hwmodel.Read, sym)                // copy_page_to_iter()
		rq.pipeAccess(p.bufLen(ch.slot), hwmodel.Write, sym) // buf->offset += chars, buf->len -= chars
		if ch.ends {
			rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym)                  // anon_pipe_buf_release(): !pipe->tmp_page
			rq.pipeAccess(p.info[pipeLine2], hwmodel.Write, sym)                 // pipe->tmp_page = page
			rq.pipeAccess(p.info[pipeLine0], hwmodel.RMW, SymRawSpinLockIrqsave) // spin_lock_irq(&pipe->rd_wait.lock)
			rq.pipeAccess(p.info[pipeLine1], hwmodel.Write, sym)                 // pipe->tail = tail
			rq.pipeAccess(p.info[pipeLine0], hwmodel.Write, sym)                 // spin_unlock_irq()
		}
	}
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_empty(): wake_next_reader
	rq.pipeUnlock(p)
	if slept && p.data.Pending() > 0 {
		// wake_next_reader: the pipe is not empty. The reader is the
		// queue's only waiter: none is woken.
		rq.pipeWake(p, rdWait, false, sym)
	}
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // kill_fasync(&pipe->fasync_writers)
	rq.pipeAccess(p.inode, hwmodel.Read, SymTouchAtime) // file_accessed()
	rq.pipeCost(SymTouchAtime, hwmodel.OpPipeRead, pipeAfter)
}

// pipeWaitRoom is pipe_write() finding the pipe full for writer w, up to
// the schedule() in wait_event_interruptible_exclusive(pipe->wr_wait,
// pipe_writable(pipe)); nothing when room is pending.
func (rq *RQ) pipeWaitRoom(a *Action, p *Pipe, w int) {
	if a.Sem.pendingBy(rq.now) {
		return // the write()'s VFS entry is its PipeWrite's
	}
	const sym = SymPipeWrite
	rq.pipeCost(SymVFSWrite, hwmodel.OpPipeWrite, pipeBefore) // vfs_write(), up to pipe_write()'s __pipe_lock()
	last := p.chunk(p.sent[w]*int64(p.writers)+int64(w), false, 0).slot
	rq.pipeLock(p)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe->readers; head, tail: not empty
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // pipe_has_watch_queue(), pipe->bufs
	if p.size%pipePageSize != 0 {
		rq.pipeBufFields(p, last, hwmodel.Read, sym) // the merge test: no room
	}
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_full()
	rq.pipeUnlock(p)
	rq.pipeAccess(p.info[pipeLine2], hwmodel.Read, sym) // kill_fasync(&pipe->fasync_readers)
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_writable()
	rq.pipeWaitQueue(p, wrWait, sym)                    // prepare_to_wait_event()
	rq.pipeAccess(p.info[pipeLine1], hwmodel.Read, sym) // pipe_writable() again
	p.wslept[w] = true
}

// pipeGiveRoom is pipe_read()'s "if (was_full)
// wake_up_interruptible_sync_poll(&pipe->wr_wait, ...)", taken when the
// writer the action signals sleeps for room as this CPU sees it (a pipe
// that has room for it was not full).
func (rq *RQ) pipeGiveRoom(a *Action, p *Pipe) {
	o := a.Sem.owner
	if o == nil {
		return // the signal panics: an unbound semaphore
	}
	if v := rq.taskView(o); asleepOn(v.state, v.waitingOn, a.Sem) {
		rq.pipeWake(p, wrWait, true, SymPipeRead)
	}
}
