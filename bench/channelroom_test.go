package bench

import (
	"fmt"
	"testing"
)

// The room rules of chanRoom for 100-byte messages: a pipe page holds 40,
// 16 pages make the pipe; an skb's truesize is 768 against sk_sndbuf
// 212992.
func TestChanRoomRules(t *testing.T) {
	pipe := &chanRoom{pipe: true, perPage: 40}
	big := &chanRoom{pipe: true, pages: 3} // a 9000-byte message: 3 buffers
	sock := &chanRoom{truesize: skbTruesize(100)}
	for _, c := range []struct {
		name                      string
		r                         *chanRoom
		w, rd                     int64
		slots                     int64
		blocked, still, writeable bool
	}{
		{"pipe empty", pipe, 0, 0, 0, false, false, false},
		{"pipe empty after reads", pipe, 85, 85, 0, false, false, false},
		{"pipe one message", pipe, 1, 0, 1, false, false, false},
		{"pipe page and one", pipe, 41, 0, 2, false, false, false},
		{"pipe 15 pages and one: merges", pipe, 601, 0, 16, false, true, false},
		{"pipe 16 pages: no room", pipe, 640, 0, 16, true, true, false},
		{"pipe tail page half read", pipe, 640, 20, 16, true, true, false},
		{"pipe tail page read: a buffer free", pipe, 680, 40, 16, true, true, false},
		{"pipe tail page read but one", pipe, 680, 41, 16, true, true, false},
		{"pipe 15 full pages", pipe, 640, 40, 15, false, false, false},
		{"big pipe 5 messages", big, 5, 0, 15, true, true, false},
		{"big pipe 4 messages", big, 4, 0, 12, false, false, false},
		{"socket 277 queued", sock, 277, 0, 0, false, false, false},
		{"socket 278 queued: sk_wmem_alloc >= sk_sndbuf", sock, 278, 0, 0, true, true, false},
		{"socket 70 queued: not writable", sock, 370, 300, 0, false, false, false},
		{"socket 69 queued: unix_writable()", sock, 369, 300, 0, false, false, true},
	} {
		if c.r.pipe {
			if s := c.r.slots(c.w, c.rd); s != c.slots {
				t.Errorf("%s: slots(%d, %d) = %d, want %d", c.name, c.w, c.rd, s, c.slots)
			}
		} else if wr := c.r.writable(c.w, c.rd); wr != c.writeable {
			t.Errorf("%s: writable(%d, %d) = %t, want %t", c.name, c.w, c.rd, wr, c.writeable)
		}
		if b := c.r.blocked(c.w, c.rd); b != c.blocked {
			t.Errorf("%s: blocked(%d, %d) = %t, want %t", c.name, c.w, c.rd, b, c.blocked)
		}
		if b := c.r.stillBlocked(c.w, c.rd); b != c.still {
			t.Errorf("%s: stillBlocked(%d, %d) = %t, want %t", c.name, c.w, c.rd, b, c.still)
		}
	}
}

// oneCPUMix runs hackbench -g 1 -f 20 -l loops on one CPU with seed and
// returns the senders' voluntary (blocked on a full channel) and
// involuntary (preempted) switches and the repairs the barrier gave.
func oneCPUMix(t *testing.T, feat string, pipe bool, loops int, seed uint64) (blocked, preempted, repairs int64) {
	t.Helper()
	m := oneCPU(t)
	args := []string{"-g", "1", "-f", "20", "-l", fmt.Sprint(loops), "-s", "100"}
	if pipe {
		args = append(args, "-p")
	}
	w, err := build(m, "hackbench", args...)
	if err != nil {
		t.Fatal(err)
	}
	runFeat(t, m, w, feat, seed)
	for _, tk := range w.(*msgBench).children[20:] { // the senders
		blocked += tk.Stats.NrVolSwitch
		preempted += tk.Stats.NrInvolSwitch
	}
	return blocked, preempted, w.(*msgBench).repairs.woken
}

// TestSharedRoomOneCPU: on one CPU the senders of a group share each
// receiver's channel (fs/pipe.c pipe_write()/pipe_read(), v6.6;
// af_unix.c unix_stream_sendmsg() -> sock_alloc_send_pskb(), sock_wfree()
// -> unix_write_space()), so a running sender rarely finds one full and
// leaves the CPU mostly when a woken receiver or the tick preempts it. On
// the dev VM's kernel (6.18; scripts/hb-real -- [-p] -g 1 -f 20 -l 300)
// the senders blocked 330 times and were preempted 607 over sockets, 49
// and 3190 over pipes. A per-sender share of the channel (the model
// before: 277/20 = 13 messages per socket, 640/20 = 32 per pipe) made
// them block instead: 1513 blocked and 308 preempted over sockets, 438
// and 4 over pipes (-l 500). On one CPU every count is exact, so the
// barrier never has a lost wakeup to repair. The counts are summed over
// three seeds: one run's switch pattern is bistable (v6.6-eevdf over
// sockets, before the weave's store buffer: preempted 555, 1604, 140
// times for seeds 1-3 against 297, 277, 313 blocks; with it seed 1 gave
// 47 against 328), so one seed lands either way on a few ns of timing.
func TestSharedRoomOneCPU(t *testing.T) {
	skipUnderRace(t)
	for _, feat := range []string{"v6.6-eevdf", "v6.12-eevdf"} {
		for _, pipe := range []bool{false, true} {
			var b, p, rep int64
			for seed := uint64(1); seed <= 3; seed++ {
				bs, ps, rs := oneCPUMix(t, feat, pipe, 300, seed)
				t.Logf("%s pipe %t seed %d: blocked %d, preempted %d", feat, pipe, seed, bs, ps)
				b, p, rep = b+bs, p+ps, rep+rs
			}
			t.Logf("%s pipe %t: senders blocked %d, preempted %d; repairs %d", feat, pipe, b, p, rep)
			if p <= b {
				t.Errorf("%s pipe %t: senders blocked %d times and were preempted %d: the kernel's are preempted more often than they block",
					feat, pipe, b, p)
			}
			if rep != 0 {
				t.Errorf("%s pipe %t: %d repaired wakeups on one CPU, where the counts are exact", feat, pipe, rep)
			}
		}
	}
}

// Across CPUs a writer can sleep on room another CPU freed in the same
// epoch; the barrier's repair wakes it (else the group can stall with
// every sender asleep on a channel with room). Two senders and receivers
// on hikey-8 with 30000-byte messages over pipes (8 buffers each: the pipe
// holds two): the run completes, the repair fires, and the drivers agree.
func TestSharedRoomRepair(t *testing.T) {
	m := machine(t, "hikey-8")
	args := []string{"-g", "1", "-f", "2", "-l", "100", "-s", "30000", "-p"}
	w, err := build(m, "hackbench", args...)
	if err != nil {
		t.Fatal(err)
	}
	runFeat(t, m, w, "v6.6-eevdf", 1)
	if n := w.(*msgBench).repairs.woken; n == 0 {
		t.Error("no repaired wakeup on 8 CPUs: the test does not reach the repair")
	} else {
		t.Logf("%d repaired wakeups", n)
	}
	driversAgree(t, "hikey-8", "v6.6-eevdf", 1, 2, append([]string{"hackbench"}, args...)...)
}
