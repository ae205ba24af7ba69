package emu

import (
	"fmt"
	"strconv"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// An AF_UNIX stream socket's shared memory, after net/unix/af_unix.c,
// net/core/sock.c and net/core/skbuff.c (v6.6): what the writers of a
// socketpair's write end and the reader of its other end pass between
// their CPUs, as Pipe does for fs/pipe.c. The base costs (unix_send,
// unix_recv) are the paths' own work; a UnixSock adds the lines they
// share, which the weave prices.
//
// A message of unix_stream_sendmsg() (100 bytes: one skb):
//   - sock_alloc_send_pskb(): the writers' sock's sk_wmem_alloc against
//     sk_sndbuf (a read), the skb and its data from the slab, written
//     (__alloc_skb()'s memset of the head, the copy_from_user() of the
//     payload), and skb_set_owner_w()'s refcount_add() on sk_wmem_alloc
//     (an RMW of the line every writer of the socket shares);
//   - unix_state_lock(other), the reader's unix_sock lock (a spinlock: the
//     weave's lock on its line), skb_queue_tail() on the reader's
//     sk_receive_queue under its own lock (an RMW and the list's store),
//     unix_state_unlock();
//   - sk_data_ready() = sock_def_readable(): skwq_has_sleeper() reads the
//     reader's wait queue head (the wakeup is the workload's signal).
//
// unix_stream_read_generic() of one message:
//   - unix_state_lock(sk), skb_peek() of the queue, unix_state_unlock()
//     (also where it finds the queue empty and waits: UnixRecvWait);
//   - the copy_to_user() of the payload and the reads of the skb's head
//     (len, data, UNIXCB's consumed);
//   - skb_unlink() under the queue's lock, consume_skb() -> sock_wfree():
//     two refcount_sub_and_test() on the writers' sk_wmem_alloc (and
//     unix_write_space()'s unix_writable() read of it; the room wakeup is
//     the workload's), and the free of the skb (the slab's free pointer
//     stored into it).
//
// Lines, homed on the node of the CPU that creates the socketpair: the
// reader's sk_receive_queue (lock, next, prev, qlen: one line of struct
// sock), its unix_sock lock, its socket_wq (wait.lock and head), the
// writers' sock's sk_wmem_alloc, and a ring of unixSkbSlots skbs, each a
// head line and the payload's lines. Where a message's skb lands in the
// ring follows Pipe's rule: writer i's k-th message is the socket's
// (k*W+i)-th, and the reader, which knows a message's writer from its
// stamp, counts each writer's messages. Simplified: the slab's per-CPU
// freelists (an skb freed on the reader's CPU goes back to its page, and
// the writer's next allocation takes whatever its CPU's freelist holds) are
// the ring's reuse; the reader's iolock (only it takes it), struct
// scm_stat and the credentials are not logged; a payload over
// unixMaxDataLines lines takes that many.
type UnixSock struct {
	name    string // fixed
	data    *Sem   // the reader's semaphore; fixed
	writers int    // fixed
	// The lines; fixed.
	queue, state, wq, wmem weave.LineID
	skbs                   []weave.LineID // unixSkbSlots x (1 + dataLines)
	dataLines              int            // payload lines per skb; fixed

	sent []int64 // sent[i]: writer i's messages; owned by the task that writes as writer i
	got  []int64 // got[i]: writer i's messages read; owned by the reader
}

const (
	unixSkbSlots     = 16
	unixMaxDataLines = 16
)

// UnixSockSpec describes a socketpair's stream to create.
type UnixSockSpec struct {
	Name string
	// Data is the reader's semaphore, a signal per message stamped with
	// the writer's index (0..Writers-1); its owner is the reader.
	Data    *Sem
	Writers int
	Size    int // bytes per message, at least 1
	CPU     int // the CPU that creates the socketpair: its node homes the lines
}

// NewUnixSock creates a socket's lines in the Sim's contention Space. It
// is for set-up time only, like NewTask.
func (s *Sim) NewUnixSock(spec UnixSockSpec) (*UnixSock, error) {
	switch {
	case spec.Data == nil:
		return nil, fmt.Errorf("unix socket %q: no data semaphore", spec.Name)
	case spec.Writers < 1:
		return nil, fmt.Errorf("unix socket %q: %d writers, want at least 1", spec.Name, spec.Writers)
	case spec.Size < 1:
		return nil, fmt.Errorf("unix socket %q: message size %d, want at least 1", spec.Name, spec.Size)
	case spec.CPU < 0 || spec.CPU >= len(s.cpus):
		return nil, fmt.Errorf("unix socket %q: cpu %d out of range [0, %d)", spec.Name, spec.CPU, len(s.cpus))
	}
	home := s.m.CPUs[spec.CPU].Node
	pfx := "unix(" + spec.Name + ")"
	u := &UnixSock{name: spec.Name, data: spec.Data, writers: spec.Writers,
		dataLines: min((spec.Size+63)/64, unixMaxDataLines),
		sent:      make([]int64, spec.Writers), got: make([]int64, spec.Writers)}
	u.queue = s.space.NewLine(pfx+".sk_receive_queue", home)
	u.state = s.space.NewLine(pfx+".unix_sock.lock", home)
	u.wq = s.space.NewLine(pfx+".sk_wq", home)
	u.wmem = s.space.NewLine(pfx+".peer.sk_wmem_alloc", home)
	per := 1 + u.dataLines
	u.skbs = make([]weave.LineID, unixSkbSlots*per)
	for i := range u.skbs {
		u.skbs[i] = s.space.NewLine(pfx+".skb"+strconv.Itoa(i/per)+"+"+strconv.Itoa(i%per*64), home)
	}
	return u, nil
}

func (u *UnixSock) String() string {
	if u == nil {
		return "unix(nil)"
	}
	return "unix(" + u.name + ")"
}

// UnixOp is a step of a socket's paths that an action runs (OnUnix).
type UnixOp uint8

const (
	unixNoOp UnixOp = iota
	// UnixSend, on writer Writer's signal to the reader (ActSignal on
	// Data): unix_stream_sendmsg()'s lines, after its base cost.
	UnixSend
	// UnixRecvWait, on the reader's wait for a message (ActWait on
	// Data): the queue's check under unix_state_lock().
	UnixRecvWait
	// UnixRecv, on the reader's action after the wait: the copy-out and
	// the skb's unlink and free, of the message whose stamp it consumed.
	UnixRecv
	numUnixOps
)

// UnixStep is one socket step of an action.
type UnixStep struct {
	Sock   *UnixSock
	Op     UnixOp
	Writer int // UnixSend: the writer's index
}

// OnUnix adds socket step op of u to the action (writer: UnixSend's
// writer index, else 0).
func (a Action) OnUnix(u *UnixSock, op UnixOp, writer int) Action {
	if u == nil || op == unixNoOp || op >= numUnixOps || writer < 0 || writer >= u.writers {
		panic(fmt.Sprintf("emu: OnUnix(%v, %d, writer %d): no such socket step", u, op, writer))
	}
	a.Unix = &UnixStep{Sock: u, Op: op, Writer: writer}
	return a
}

// unixAccess logs one access of this CPU to a socket line, charged to
// sym, and charges its uncontended cost.
func (rq *RQ) unixAccess(line weave.LineID, op hwmodel.Op, sym Symbol) {
	rq.log.Record(rq.logNow(), line, op, rq.site(sym))
	rq.accessCost(sym, op)
}

// skb is the ring's lines of the socket's pos-th message.
func (u *UnixSock) skb(pos int64) []weave.LineID {
	per := 1 + u.dataLines
	k := int(pos%unixSkbSlots) * per
	return u.skbs[k : k+per]
}

// runUnixStep runs the action's socket step on t's CPU.
func (rq *RQ) runUnixStep(t *Task, a *Action) {
	st := a.Unix
	u := st.Sock
	switch st.Op {
	case UnixSend:
		if a.Op != ActSignal || a.Sem != u.data {
			panic(fmt.Sprintf("emu: task %v: UnixSend on %v needs a signal of %v", t, u, u.data))
		}
		rq.unixSend(u, st.Writer)
	case UnixRecvWait:
		if a.Op != ActWait || a.Sem != u.data {
			panic(fmt.Sprintf("emu: task %v: UnixRecvWait on %v needs a wait on %v", t, u, u.data))
		}
		if !u.data.pendingBy(rq.now) {
			// A message already there is the read's (UnixRecv);
			// the peek that finds the queue empty is the wait's.
			rq.unixPeek(u)
		}
	case UnixRecv:
		if u.data.owner != t {
			panic(fmt.Sprintf("emu: task %v reads %v, read by %v", t, u, u.data.owner))
		}
		w := int(t.stamp)
		if w < 0 || w >= u.writers {
			panic(fmt.Sprintf("emu: task %v reads from %v a message of writer %d (stamp %d): no such writer", t, u, w, t.stamp))
		}
		rq.unixRecv(u, w)
	}
}

// unixSend is unix_stream_sendmsg()'s lines for writer w's next message.
func (rq *RQ) unixSend(u *UnixSock, w int) {
	const sym = SymSockSend
	pos := u.sent[w]*int64(u.writers) + int64(w)
	u.sent[w]++
	// sock_alloc_send_pskb(): sk_wmem_alloc < sk_sndbuf, the skb's
	// head and payload written, skb_set_owner_w().
	rq.unixAccess(u.wmem, hwmodel.Read, sym)
	for _, l := range u.skb(pos) {
		rq.unixAccess(l, hwmodel.Write, sym)
	}
	rq.unixAccess(u.wmem, hwmodel.RMW, sym)
	// unix_state_lock(other); skb_queue_tail(); unix_state_unlock().
	rq.unixAccess(u.state, hwmodel.Lock, SymRawSpinLockIrqsave)
	rq.unixAccess(u.queue, hwmodel.RMW, SymRawSpinLockIrqsave)
	rq.unixAccess(u.queue, hwmodel.Write, sym)
	rq.unixAccess(u.state, hwmodel.Unlock, sym)
	// sock_def_readable(): skwq_has_sleeper().
	rq.unixAccess(u.wq, hwmodel.Read, sym)
}

// unixPeek is unix_stream_read_generic()'s look at the queue under
// unix_state_lock(sk).
func (rq *RQ) unixPeek(u *UnixSock) {
	rq.unixAccess(u.state, hwmodel.Lock, SymRawSpinLockIrqsave)
	rq.unixAccess(u.queue, hwmodel.Read, SymSockRecv)
	rq.unixAccess(u.state, hwmodel.Unlock, SymSockRecv)
}

// unixRecv is the read of writer w's next message: the peek that finds
// it, the copy-out, skb_unlink() and consume_skb().
func (rq *RQ) unixRecv(u *UnixSock, w int) {
	const sym = SymSockRecv
	pos := u.got[w]*int64(u.writers) + int64(w)
	u.got[w]++
	rq.unixPeek(u)
	lines := u.skb(pos)
	// The head's fields and the payload: addresses that do not depend
	// on each other (copy_to_user()'s loads overlap).
	was := rq.log.SetIndependent(true)
	for _, l := range lines {
		rq.unixAccess(l, hwmodel.Read, sym)
	}
	rq.log.SetIndependent(was)
	// skb_unlink(): the queue's lock and list.
	rq.unixAccess(u.queue, hwmodel.RMW, SymRawSpinLockIrqsave)
	rq.unixAccess(u.queue, hwmodel.Write, sym)
	// consume_skb() -> sock_wfree(): refcount_sub_and_test() twice
	// around unix_write_space()'s unix_writable() read; the free
	// stores the slab's free pointer into the skb.
	rq.unixAccess(u.wmem, hwmodel.RMW, sym)
	rq.unixAccess(u.wmem, hwmodel.Read, sym)
	rq.unixAccess(u.wmem, hwmodel.RMW, sym)
	rq.unixAccess(lines[0], hwmodel.Write, sym)
}
