package bench

import (
	"fmt"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// Futex-like locks and conditions, shared by rt-app's mutexes and
// conditions (rtapp.go) and sysbench's commit lock (sysbench.go).
//
// A futex's waiters share its word and the kernel's wait queue behind it.
// Tasks here share nothing but semaphores, and a semaphore has one waiter,
// its owner, so a lock that several tasks wait for cannot be one
// semaphore. It is a server task instead: it owns the lock's state (the
// owner and the FIFO of waiters, or a condition's FIFO of waiters) and a
// request semaphore, and every client owns a grant semaphore. A client
// posts a request (a stamp: the op, the lock and its own index) and, to
// lock, sleeps on its grant until the server signals it: the server takes
// requests in arrival order and grants the lock in FIFO order, as
// FUTEX_WAKE wakes the oldest waiter. The state lives only in the server's
// program, run on its own CPU, so nothing is shared.
//
// Compared with a real futex this serializes the same work in the same
// order, but costs extra wakeup hops: an uncontended lock is a userspace
// cmpxchg on Linux but here a round trip to the server (two wakeups), an
// unlock wakes the server where Linux enters the kernel only if there are
// waiters, and a contended handoff goes unlocker -> server -> waiter
// instead of unlocker -> waiter.

// Request ops, in a stamp: op<<56 | lock<<32 | client.
const (
	opLock = iota + 1
	opUnlock
	opWait   // condition: wait, holding the given lock
	opSignal // condition: wake the first waiter
	opBroad  // condition: wake every waiter
)

func lockStamp(op, lock, client int) int64 {
	return int64(op)<<56 | int64(lock)<<32 | int64(client)
}

func lockUnstamp(v int64) (op, lock, client int) {
	return int(v >> 56), int(v>>32) & 0xffffff, int(v & 0xffffffff)
}

// server is the program of a task that serves requests posted on req: it
// waits for one, hands it to handle, which queues the signals and
// computation to do (send), does them one action at a time, and waits
// again. Its fields are owned by the server task's CPU.
type server struct {
	req *emu.Sem
	// ops are charged on the server's wait and on each grant: the futex
	// syscalls where the model names them (nil: none, the hops' wakeups
	// being the cost).
	ops    []hwmodel.KernelOp
	handle func(op, lock, client int)
	out    []emu.Action // to do before the next wait
	got    bool         // the last action was the wait: a request is in
}

func (sv *server) next(t *emu.Task) emu.Action {
	if sv.got {
		sv.got = false
		sv.handle(lockUnstamp(t.Stamp()))
	}
	if len(sv.out) > 0 {
		a := sv.out[0]
		sv.out = sv.out[1:]
		return a
	}
	sv.got = true
	return emu.Wait(sv.req).With(sv.ops...)
}

func (sv *server) send(a emu.Action) { sv.out = append(sv.out, a) }

// fifoLock is a mutex served in FIFO order: lock grants it to the client
// at once if it is free, else queues it; unlock hands it to the first in
// the queue (a plain wakeup, as FUTEX_WAKE).
//
// With hold > 0 it is a remote-core lock instead (sysbench's commit
// lock): the server runs each requester's critical section itself, hold
// ns, in arrival order, then wakes the requester, which never holds it
// (and never unlocks); the semaphore's FIFO of pending requests is the
// wait queue. Then the critical section runs on the server's CPU rather
// than the holder's, and the holder sleeps instead of running through it.
type fifoLock struct {
	server
	name   string // for the panic of a broken protocol
	id     int
	grants []*emu.Sem // per client
	hold   int64
	owner  int   // the client holding it; -1: free
	queue  []int // clients waiting for it, oldest first
}

// newFIFOLock returns lock id's server on request semaphore req; ops are
// charged on its wait and its grants.
func newFIFOLock(name string, id int, req *emu.Sem, grants []*emu.Sem, hold int64, ops ...hwmodel.KernelOp) *fifoLock {
	l := &fifoLock{name: name, id: id, grants: grants, hold: hold, owner: -1}
	l.server = server{req: req, ops: ops, handle: l.op}
	return l
}

// grant hands the lock to a client (FUTEX_WAKE of the waiter).
func (l *fifoLock) grant(client int) {
	l.owner = client
	l.send(emu.Signal(l.grants[client]).With(l.ops...))
}

func (l *fifoLock) op(op, _, client int) {
	switch {
	case op == opLock && l.hold > 0:
		l.send(emu.Run(l.hold))
		l.send(emu.Signal(l.grants[client]).With(l.ops...))
	case op == opLock && l.owner < 0:
		l.grant(client)
	case op == opLock:
		l.queue = append(l.queue, client)
	case op == opUnlock:
		if l.owner != client {
			panic(fmt.Sprintf("bench: client %d unlocks %q held by %d", client, l.name, l.owner))
		}
		l.owner = -1
		if len(l.queue) > 0 {
			next := l.queue[0]
			l.queue = l.queue[1:]
			l.grant(next)
		}
	default:
		panic(fmt.Sprintf("bench: lock %q got op %d", l.name, op))
	}
}

// fifoCond is a condition variable served in FIFO order (pthread_cond):
// a wait registers the client, which then releases its mutex and sleeps
// on its grant; signal (broad) re-queues the first (every) waiter on its
// mutex's server, which grants it the mutex when free, as
// pthread_cond_wait() returns with the mutex held. A signal with no
// waiter is lost, as with pthread_cond_signal().
type fifoCond struct {
	server
	name   string
	locks  []*emu.Sem // the mutexes' request semaphores; nil: one never contended, granted at once
	grants []*emu.Sem // per client
	waitq  [][2]int   // {client, mutex} waiting, oldest first
}

func newFIFOCond(name string, req *emu.Sem, locks, grants []*emu.Sem) *fifoCond {
	c := &fifoCond{name: name, locks: locks, grants: grants}
	c.server = server{req: req, handle: c.op}
	return c
}

// wake makes a waiter return holding its mutex: queue it on the mutex.
func (c *fifoCond) wake(w [2]int) {
	if req := c.locks[w[1]]; req != nil {
		c.send(emu.SignalStamp(req, lockStamp(opLock, w[1], w[0])))
	} else {
		c.send(emu.Signal(c.grants[w[0]]))
	}
}

func (c *fifoCond) op(op, mutex, client int) {
	switch op {
	case opWait:
		c.waitq = append(c.waitq, [2]int{client, mutex})
	case opSignal:
		if len(c.waitq) > 0 {
			c.wake(c.waitq[0])
			c.waitq = c.waitq[1:]
		}
	case opBroad:
		for _, w := range c.waitq {
			c.wake(w)
		}
		c.waitq = nil
	default:
		panic(fmt.Sprintf("bench: condition %q got op %d", c.name, op))
	}
}
