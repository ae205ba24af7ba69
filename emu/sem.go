package emu

import "fmt"

// Sem is what a task waits on: a pipe's data or free space, a socket's
// receive queue, a futex. It is a counting semaphore with one waiter, its
// owner, and each signal carries a stamp (the signaller's clock, or a
// value it chooses) that the waiter gets back, so a workload can measure
// wakeup latency the way schbench does.
//
// The pending signals belong to the owner's CPU: a signal from another CPU
// is posted and applied at the barrier (the wakee may have gone to sleep
// meanwhile, in which case it is woken instead), so the outcome never
// depends on how far the CPU goroutines have got.
type Sem struct {
	Name  string
	owner *Task // set once, when bound to its waiter (TaskSpec.Sems)
	// sigs are the signals, oldest first; sigs[head:] are pending.
	// Pushed by the owner's CPU or at the barrier (leavePending), taken
	// by the owner's program or at the barrier (resolveHold).
	sigs []semSig
	head int
}

// semSig is one pending signal: its stamp, and for a wait that the
// barrier settles (resolveHold) when and by whom it was sent.
type semSig struct {
	stamp int64
	at    int64 // the signaller's clock at the signal
	from  int   // the signalling CPU (-1: an initial signal)
	flags int   // the wake flags it would have woken with
	tr    traceWho
}

// NewSem returns a semaphore holding initial signals (stamped 0), e.g. a
// pipe's free space in messages. Bind it to its waiter with TaskSpec.Sems.
func NewSem(name string, initial int) *Sem {
	s := &Sem{Name: name}
	for i := 0; i < initial; i++ {
		s.sigs = append(s.sigs, semSig{from: -1})
	}
	return s
}

// Owner is the task that waits on the semaphore.
func (s *Sem) Owner() *Task { return s.owner }

// Pending is the number of signals not yet consumed (read it only from the
// owner's program, or between runs).
func (s *Sem) Pending() int { return len(s.sigs) - s.head }

func (s *Sem) String() string { return fmt.Sprintf("sem(%s)", s.Name) }

// push adds a pending signal.
func (s *Sem) push(sig semSig) { s.sigs = append(s.sigs, sig) }

// pop consumes the oldest pending signal. The queue is a slice with a
// head index, compacted when the head passes half of it: O(1) amortized.
func (s *Sem) pop() int64 { return s.take(s.head) }

// firstBy is the index of the oldest pending signal sent at or before t,
// or -1: what a wait's condition check at t can see.
func (s *Sem) firstBy(t int64) int {
	for i := s.head; i < len(s.sigs); i++ {
		if s.sigs[i].at <= t {
			return i
		}
	}
	return -1
}

// pendingBy reports whether a signal sent at or before t is pending.
func (s *Sem) pendingBy(t int64) bool { return s.firstBy(t) >= 0 }

// take consumes pending signal i (the oldest: pop) and returns its stamp.
func (s *Sem) take(i int) int64 {
	v := s.sigs[i].stamp
	if i != s.head {
		copy(s.sigs[s.head+1:i+1], s.sigs[s.head:i])
		s.sigs[s.head] = semSig{}
	}
	s.head++
	if s.head == len(s.sigs) {
		s.sigs, s.head = s.sigs[:0], 0
	} else if s.head > 32 && 2*s.head > len(s.sigs) {
		n := copy(s.sigs, s.sigs[s.head:])
		clear(s.sigs[n:])
		s.sigs, s.head = s.sigs[:n], 0
	}
	return v
}

// Wait blocks on sem until it has a signal, then consumes it (the task's
// Stamp is the signal's stamp).
func Wait(sem *Sem) Action { return Action{Op: ActWait, Sem: sem} }

// Signal signals sem, waking its owner if it waits on it. The stamp is the
// signaller's clock.
func Signal(sem *Sem) Action { return Action{Op: ActSignal, Sem: sem} }

// SignalStamp signals sem with a chosen stamp.
func SignalStamp(sem *Sem, stamp int64) Action {
	return Action{Op: ActSignal, Sem: sem, NS: stamp, HasStamp: true}
}
