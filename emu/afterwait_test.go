package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// pingPongRTT runs two tasks pinned to CPUs 0 and 1 of spr-2s that pass
// a token back and forth for 2 ms, each receiving it with recv, and
// returns the round trip in ns.
func pingPongRTT(t *testing.T, recv func(*Sem) Action) float64 {
	t.Helper()
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	semA, semB := NewSem("a.rx", 0), NewSem("b.rx", 0)
	var trips int64
	side := func(in, out *Sem, first bool, count bool) Program {
		sent := !first
		return ProgramFunc(func(*Task) Action {
			if !sent {
				sent = true
				return Signal(out).With(hwmodel.OpSyscall, hwmodel.OpSockSend)
			}
			sent = false
			if count {
				trips++
			}
			return recv(in)
		})
	}
	mustTask(t, s, TaskSpec{Comm: "client", CPU: 0, Sems: []*Sem{semA}, Prog: side(semA, semB, true, true)})
	mustTask(t, s, TaskSpec{Comm: "server", CPU: 1, Sems: []*Sem{semB}, Prog: side(semB, semA, false, false)})
	const run = 2 * ms
	s.RunUntil(run, func() bool { return false })
	if trips < 10 {
		t.Fatalf("%d round trips in 2 ms", trips)
	}
	return float64(run) / float64(trips)
}

// A blocking socket read finishes after its sleep: udp_recvmsg()
// (net/ipv4/udp.c, v6.6) sleeps in __skb_wait_for_more_packets() via
// __skb_recv_udp() and only then dequeues, copies and frees the skb
// (skb_copy_datagram_msg(), skb_consume_udp()). With that work as the
// Wait's AfterWait, it lies on the path from the peer's send to the
// reader's next send, once per side: the round trip grows by two
// sock_recv costs. Charged before the Wait (With), as the workloads did
// before AfterWait, it ran while the peer was working and the round trip
// did not see it.
func TestAfterWaitOnTheCriticalPath(t *testing.T) {
	before := pingPongRTT(t, func(in *Sem) Action {
		return Wait(in).With(hwmodel.OpSyscall, hwmodel.OpSockRecv)
	})
	after := pingPongRTT(t, func(in *Sem) Action {
		return Wait(in).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpSockRecv)
	})
	recv := float64(machine(t, "spr-2s").Cost(hwmodel.OpSockRecv))
	d := after - before
	t.Logf("round trip %.0f ns with the receive before the sleep, %.0f ns after it (sock_recv %.0f ns)", before, after, recv)
	if d < 1.6*recv || d > 2.4*recv {
		t.Errorf("the round trip grew by %.0f ns with the receive after the sleep, want about 2 x sock_recv = %.0f ns", d, 2*recv)
	}
}

// A Wait that finds its signal pending does not sleep, and still runs its
// AfterWait work (the dequeue of a datagram already queued), once.
func TestAfterWaitPendingSignal(t *testing.T) {
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	sem := NewSem("rx", 0)
	step := 0
	mustTask(t, s, TaskSpec{Comm: "reader", CPU: 0, Sems: []*Sem{sem}, Prog: ProgramFunc(func(p *Task) Action {
		step++
		switch step {
		case 1:
			return Signal(sem)
		case 2:
			return Wait(sem).AfterWait(hwmodel.OpSockRecv)
		case 3:
			return Run(1000)
		}
		return Exit()
	})})
	s.RunUntil(ms, func() bool { return s.Live() == 0 })
	var got int64
	for _, e := range s.Profile(nil) {
		if e.Symbol == s.symbolName(SymSockRecv) {
			got = e.NS
		}
	}
	if want := machine(t, "spr-2s").Cost(hwmodel.OpSockRecv); got != want {
		t.Errorf("udp_recvmsg charged %d ns, want one sock_recv (%d ns)", got, want)
	}
}
