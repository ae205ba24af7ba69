package emu

import (
	"testing"

	"github.com/rqemu/rqemu/weave"
)

// unixMessages runs msgs 100-byte messages over an AF_UNIX stream on
// spr-2s (v6.6-eevdf), writers writer tasks on CPUs 1.. and the reader on
// CPU 0, which waits for each message (UnixRecvWait), then reads it
// (UnixRecv); each writer sends every 4 us, stamping its index.
func unixMessages(t *testing.T, writers, msgs int) (*Sim, *UnixSock) {
	t.Helper()
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	data := NewSem("sock", 0)
	u, err := s.NewUnixSock(UnixSockSpec{Name: "sock", Data: data, Writers: writers, Size: 100, CPU: 0})
	if err != nil {
		t.Fatal(err)
	}
	n, copied := 0, true
	recv, out := Wait(data).OnUnix(u, UnixRecvWait, 0), Run(30).OnUnix(u, UnixRecv, 0)
	mustTask(t, s, TaskSpec{Comm: "reader", CPU: 0, Sems: []*Sem{data}, Prog: ProgramFunc(func(*Task) Action {
		switch {
		case !copied:
			copied = true
			return out
		case n == writers*msgs:
			return Exit()
		}
		n, copied = n+1, false
		return recv
	})})
	for i := range writers {
		send, k := Signal(data).WithSync().OnUnix(u, UnixSend, i), 0
		send.NS, send.HasStamp = int64(i), true
		mustTask(t, s, TaskSpec{Comm: "writer", CPU: 1 + i, Prog: ProgramFunc(func(*Task) Action {
			switch {
			case k == 2*msgs:
				return Exit()
			case k%2 == 0:
				k++
				return Run(4000)
			}
			k++
			return send
		})})
	}
	if !s.RunUntil(200*ms, func() bool { return s.Live() == 0 }) {
		t.Fatalf("%d tasks still live after 200 ms", s.Live())
	}
	return s, u
}

// lineTransfers is the transfers line l took, over every class.
func lineTransfers(s *Sim, l weave.LineID) (int64, weave.LineStats) {
	ls, _ := s.space.LineStat(l)
	var x int64
	for _, n := range ls.Transfers {
		x += n
	}
	return x, ls
}

// TestUnixSockLinesMove: a message through an AF_UNIX stream moves its
// skb from the writer's CPU to the reader's (net/unix/af_unix.c v6.6
// unix_stream_sendmsg() writes it, unix_stream_read_generic() copies it
// out and consume_skb() frees it), and the reader's sk_receive_queue and
// unix_state_lock and the writers' sk_wmem_alloc go back and forth with
// every message: each is a transfer at least once a message. With four
// writers sk_wmem_alloc, which every writer's skb_set_owner_w() adds to,
// moves among five CPUs. Without the steps (a socket priced by its base
// costs only) none of its lines is touched.
func TestUnixSockLinesMove(t *testing.T) {
	const msgs = 100
	for _, writers := range []int{1, 4} {
		s, u := unixMessages(t, writers, msgs)
		all := int64(writers * msgs)
		for _, c := range []struct {
			what string
			line weave.LineID
		}{
			{"sk_receive_queue", u.queue},
			{"unix_sock.lock", u.state},
			{"sk_wmem_alloc", u.wmem},
		} {
			x, ls := lineTransfers(s, c.line)
			t.Logf("%d writer(s): %s: %d accesses, %d transfers, stall %.0f ns", writers, c.what, ls.Accesses, x, ls.StallNS)
			if x < all {
				t.Errorf("%d writer(s): %s moved %d times for %d messages, want at least once a message", writers, c.what, x, all)
			}
		}
		// The skb's payload: the reader's copy-out takes it from the
		// writer's CPU.
		var px int64
		for _, l := range u.skbs {
			x, _ := lineTransfers(s, l)
			px += x
		}
		if px < all*int64(u.dataLines) {
			t.Errorf("%d writer(s): the skbs' lines moved %d times for %d messages of %d payload lines", writers, px, all, u.dataLines)
		}
		if st := s.space.Stats().Sites[s.sites[SymSockRecv]].StallNS; st <= 0 {
			t.Errorf("%d writer(s): the read path stalls %.0f ns: want the copy-out's transfers", writers, st)
		}
	}
	if _, err := newSim(t, "spr-2s", "v6.6-eevdf").NewUnixSock(UnixSockSpec{Name: "x", Data: NewSem("x", 0), Writers: 0, Size: 100}); err == nil {
		t.Error("0 writers: no error")
	}
}
