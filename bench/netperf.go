package bench

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// netperf over loopback as lkp runs it (lkp-tests tests/netperf: one
// netserver, then nr_threads netperf processes against 127.0.0.1, each
// served by its own forked netserver child): N client/server pairs on one
// machine, every pair a netperf process and its netserver child. The
// tests are netperf's omni ("MIGRATED") UDP_RR, TCP_RR, UDP_STREAM and
// TCP_STREAM (src/nettest_omni.c send_omni_inner() / recv_omni(); the
// classic output of src/nettest_bsd.c). lkp's command line is accepted as
// is: netperf -4 -H 127.0.0.1 -t UDP_RR -c -C -l 10 [-- -m 64 -r 1,1].
//
// UDP_RR: the client sends a request (sendto(): syscall + udp_sendmsg()),
// the loopback path runs it into the server's socket (dev_queue_xmit() ->
// loopback_xmit() -> netif_rx() -> the NET_RX softirq, run from
// local_bh_enable() in the sender's own context -> ip_rcv() -> udp_rcv()
// -> __udp_enqueue_schedule_skb() -> sk_data_ready()), and the client
// blocks in recvfrom() on its own socket; the server blocks in recvfrom(),
// then sends the response the same way. sk_data_ready is
// sock_def_readable() (net/core/sock.c), which wakes with
// wake_up_interruptible_sync_poll(): the wakeup is WF_SYNC, and since the
// softirq runs in the sender's context, current is the sender, which then
// does block in recvfrom(). (-sync=false makes it a plain wakeup.)
//
// UDP_STREAM: the sender sends -m byte messages back to back; the
// receiver's socket accepts a datagram while sk_rmem_alloc <= sk_rcvbuf
// (212992), counting each at its skb truesize, and drops it otherwise
// (__udp_enqueue_schedule_skb()); the sender never blocks and never sees
// the drop. TCP_STREAM: the same, but the sender blocks in
// sk_stream_wait_memory() when the window is full, and the receiver's
// read returns the space (the ACK's tcp_check_space() ->
// sk_stream_write_space(), a plain wakeup).
//
// Each socket receive queue is a semaphore owned by its reader; a stream
// sender's free space is a semaphore it owns, holding the messages the
// receiver can still take (its Pending() is what the UDP sender checks,
// the TCP sender waits on it).
//
// Costs: the syscall and the socket layers are the preset's syscall,
// sock_send and sock_recv (a receive's sock_recv runs after its wait:
// emu.Action.AfterWait); the loopback path adds loopbackFixedCycles per
// packet plus the payload copies at loopbackBytesPerCycle (see below).
//
// Output: netperf's classic tables byte for byte (the title and data
// format strings of nettest_bsd.c, trailing blanks included), one block
// per netperf process, each with its own pair's rate, in pair order: lkp
// runs N netperf processes in the background and its parser
// (lkp-tests programs/netperf/parse) sums the blocks it finds in their
// concatenated output (Throughput_total_tps) and averages them
// (Throughput_tps). With -c/-C the tables get netperf's CPU columns: the
// utilization of the whole machine over the run (loopback: local and
// remote are the same machine, measured the same way, "% S" for
// /proc/stat) and the service demand it implies for the pair
// (calc_service_demand(): util * CPUs / throughput, in us per transaction
// or per KB). The CPU-column layouts are recalled from nettest_bsd.c's
// cpu_title / cpu_fmt_1_line_1 strings [R], not checked against a run.
//
// Simplified: no netperf control connection, no confidence intervals,
// no interim results; the test starts for every
// pair at once and the elapsed time is the test length (netperf's
// measured elapsed is within a few ms of it). Client i and server i start
// on Spread(m, 2i) and Spread(m, 2i+1), side by side on two cores of one
// LLC, where wake_affine() settles a pair that fork balancing started
// apart (see Spread), and are free to migrate; -start fork starts them
// where fork balancing puts them instead (pairPlacer). TCP segmentation,
// Nagle, delayed ACKs and window autotuning are not modeled: one send is
// one segment, a read takes what is queued (up to the receive buffer) and
// sends one ACK, and the window stays at the initial receive buffer
// (131072 bytes). UDP send errors (the "Errors" column) never happen on
// loopback. -l takes fractional seconds (netperf takes integers) so that
// short runs are possible.
type netperfBench struct {
	Common
	test    string
	length  float64
	nrArg   string
	rrArg   string
	msgSize int
	sync    bool
	host    string // -H: the remote host, as the title names it
	ipv4    bool   // -4
	ipv6    bool   // -6
	cpuL    bool   // -c: report local CPU utilization
	cpuR    bool   // -C: report remote CPU utilization
	start   string // -start: spread or fork (pairPlacer)

	m       *hwmodel.Machine
	n       int
	req     int // UDP_RR request size
	resp    int // UDP_RR response size
	dur     int64
	ran     int64 // the time run (dur, or less when stopped early); set by Report and Metrics
	credits int   // STREAM: messages the receiver's buffer holds

	// Per-pair counters, each written only by the one task named.
	trans []int64 // UDP_RR: transactions completed (client i)
	sent  []int64 // STREAM: messages sent (sender i)
	drops []int64 // UDP_STREAM: of those, dropped at the receiver's socket (sender i)
	recvd []int64 // STREAM: messages received (receiver i)
}

// Socket sizes netperf reports for a default run over loopback on Linux:
// UDP gets net.core.wmem_default/rmem_default (212992); TCP the initial
// tcp_wmem[1] = 16384 and tcp_rmem[1] = 131072.
const (
	udpSockBuf    = 212992
	tcpSndBufInit = 16384
	tcpRcvBufInit = 131072
	// udpMaxPayload is netperf's default UDP_STREAM send size: the
	// largest UDP datagram (65535 - 8 - 20), as netperf caps its default
	// (the socket buffer) there.
	udpMaxPayload = 65507
)

// The loopback path per packet, on top of the preset's sock_send (which
// prices udp_sendmsg() down to the device) and sock_recv:
//
//   - loopbackFixedCycles: loopback_xmit() + netif_rx() + the NET_RX
//     softirq's process_backlog() -> __netif_receive_skb() -> ip_rcv() ->
//     udp_rcv() -> __udp_enqueue_schedule_skb(), run in the sender's
//     context: 1500 cycles [E], 0.5 us at 3 GHz. Grounded in hardware.md
//     C6 and the LKML mail it cites (Andrei Vagin, 2022-07-26, netperf
//     -H ::1 -t UDP_RR): 95965 trans/s (10.4 us round trip) in gVisor,
//     146460.80 trans/s (6.8 us) on the same host without it. One pair
//     on spr-2s (3 GHz), 1-byte messages, per half trip: sendto() =
//     syscall 200 + sock_send 2500 + loopback 1500 cycles = 1.40 us; the
//     wakeup of the peer on its own idle CPU (ttwu, select, enqueue, IPI
//     send and delivery, C1 exit, IPI entry: ~2.5 us); the peer's
//     switch-in and the rest of its recvfrom() = sock_recv 1500 (0.5 us:
//     udp_recvmsg() dequeues, copies and frees the skb after the sleep,
//     emu.Action.AfterWait; the syscall's entry and the empty queue's
//     check came before it) plus schedule and pick: ~4.8 us, so a round
//     trip of ~9.6 us, 104 K trans/s (measured, -l 0.005: 98800 trans/s,
//     10.1 us), between the native and the gVisor figure; the loopback
//     term is 1 us of it. (If a preset's sock_send already covers the
//     receive softirq, this double counts 0.5 us per packet.)
//     xeon-e5-2x10 gives 12.4 us, hikey-8 24.6 us.
//   - loopbackBytesPerCycle: the payload is copied twice (copy_from_user
//     into the skb, copy_to_user out of it; loopback skips the checksum,
//     CHECKSUM_PARTIAL) at ~4 bytes/cycle per copy [E] (10-12 GB/s at
//     2.4-3 GHz: large copies into freshly allocated skb memory miss the
//     L1/L2); the sender's copy is charged with the send, the receiver's
//     with the receive. At 1-byte messages it rounds to nothing.
const (
	loopbackFixedCycles   = 1500
	loopbackBytesPerCycle = 4.0 // per copy
)

func init() {
	Register(Spec{
		Name: "netperf",
		Doc:  "netperf over loopback: N netperf/netserver pairs running UDP_RR, TCP_RR, UDP_STREAM or TCP_STREAM (as lkp runs it)",
		Examples: []string{
			"emu run -topo spr-2s -workload netperf -t UDP_RR -nr 100% -l 1 -cgroup docker",
			"emu run -topo xeon-e5-2x10 -workload netperf -t UDP_STREAM -m 64 -l 1",
			"emu run -topo spr-2s -workload netperf -4 -H 127.0.0.1 -t TCP_RR -c -C -l 1 -nr 4 --",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &netperfBench{}
			AddCommon(fs, &w.Common)
			fs.StringVar(&w.test, "t", "UDP_RR", "test name (netperf's -t): UDP_RR, TCP_RR, UDP_STREAM or TCP_STREAM")
			fs.Float64Var(&w.length, "l", 10, "test length in seconds (netperf's -l; fractions allowed here)")
			fs.StringVar(&w.nrArg, "nr", "1", "client/server pairs: a count, or a percentage of the CPUs (\"100%\" = as many as CPUs, lkp's nr_threads)")
			fs.StringVar(&w.nrArg, "clients", "1", "same as -nr")
			fs.StringVar(&w.rrArg, "r", "1,1", "UDP_RR request,response sizes in bytes (netperf's test-specific -r)")
			fs.IntVar(&w.msgSize, "m", 0, "STREAM send size in bytes (netperf's test-specific -m); 0: netperf's default, 65507 for UDP, 16384 for TCP")
			fs.BoolVar(&w.sync, "sync", true, "wake socket readers with WF_SYNC, as sock_def_readable() does")
			fs.StringVar(&w.host, "H", "localhost", "remote host (netperf's -H; loopback whatever it names, shown in the title)")
			fs.BoolVar(&w.ipv4, "4", false, "IPv4 (netperf's -4; the default)")
			fs.BoolVar(&w.ipv6, "6", false, "IPv6 (netperf's -6: AF_INET6 in the title; costs as IPv4)")
			fs.BoolVar(&w.cpuL, "c", false, "report local CPU utilization and service demand (netperf's -c)")
			fs.BoolVar(&w.cpuR, "C", false, "report remote CPU utilization and service demand (netperf's -C)")
			addPairStart(fs, &w.start)
			return func(m *hwmodel.Machine) (Workload, error) {
				return w.validate(m)
			}
		},
	})
}

var netperfTests = []string{"UDP_RR", "TCP_RR", "UDP_STREAM", "TCP_STREAM"}

// rr reports a request/response test.
func (w *netperfBench) rr() bool { return strings.HasSuffix(w.test, "_RR") }

func (w *netperfBench) validate(m *hwmodel.Machine) (Workload, error) {
	w.test = strings.ToUpper(w.test)
	ok := false
	for _, t := range netperfTests {
		ok = ok || t == w.test
	}
	if !ok {
		return nil, flagErr("-t", "unknown test %q (allowed: %s)", w.test, strings.Join(netperfTests, ", "))
	}
	if w.ipv4 && w.ipv6 {
		return nil, flagErr("-6", "-4 and -6 exclude each other")
	}
	if err := checkPairStart(w.start); err != nil {
		return nil, err
	}
	if strings.TrimSpace(w.host) == "" || strings.ContainsAny(w.host, " \t\n") {
		return nil, flagErr("-H", "want a host name or address, got %q", w.host)
	}
	if !(w.length > 0) || w.length > 1e6 {
		return nil, flagErr("-l", "test length %v s is out of range (allowed: more than 0, at most %d seconds of virtual time; netperf's negative -l, a transaction count, is not modeled)", w.length, MaxSeconds)
	}
	w.dur = int64(math.Round(w.length * 1e9))
	if w.dur < 1_000 {
		return nil, flagErr("-l", "test length %v s is under a microsecond", w.length)
	}
	if len(m.CPUs) < 1 {
		return nil, flagErr("-topo", "machine has no CPUs")
	}
	n, err := countOrPercentOfCPUs(w.nrArg, len(m.CPUs), 65536)
	if err != nil {
		return nil, flagErr("-nr", "%v", err)
	}
	w.n = n
	req, resp, err := parseRRSizes(w.rrArg)
	if err != nil {
		return nil, flagErr("-r", "%v", err)
	}
	w.req, w.resp = req, resp
	switch w.test {
	case "UDP_STREAM":
		if w.msgSize == 0 {
			w.msgSize = udpMaxPayload
		}
		if w.msgSize < 1 || w.msgSize > udpMaxPayload {
			return nil, flagErr("-m", "UDP send size must be 1..%d bytes, got %d", udpMaxPayload, w.msgSize)
		}
		// __udp_enqueue_schedule_skb() takes a datagram while
		// sk_rmem_alloc <= sk_rcvbuf before adding it: one more than
		// fit exactly.
		w.credits = udpSockBuf/udpTruesize(w.msgSize) + 1
	case "TCP_STREAM":
		if w.msgSize == 0 {
			w.msgSize = tcpSndBufInit
		}
		if w.msgSize < 1 || w.msgSize > 1<<24 {
			return nil, flagErr("-m", "TCP send size must be 1..%d bytes, got %d", 1<<24, w.msgSize)
		}
		w.credits = max(1, tcpRcvBufInit/w.msgSize)
	}
	w.m = m
	return w, nil
}

// countOrPercentOfCPUs parses a task count given as a number ("8") or as
// a percentage of the machine's CPUs ("100%", "75%"), as lkp's
// nr_threads: nr_cpu * pct / 100, rounded down, at least 1. Zero and
// negative values are rejected; above 100% is allowed, up to limit.
func countOrPercentOfCPUs(s string, cpus, limit int) (int, error) {
	s = strings.TrimSpace(s)
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
			return 0, fmt.Errorf("%q is not a percentage of the CPUs (allowed: a count like 8, or a percentage like 100%%)", s)
		}
		if p <= 0 {
			return 0, fmt.Errorf("%q: the percentage must be positive", s)
		}
		n := int(math.Floor(float64(cpus) * p / 100))
		if float64(cpus)*p/100 > float64(limit) {
			return 0, fmt.Errorf("%q is more than %d tasks", s, limit)
		}
		return max(n, 1), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a count (allowed: a count like 8, or a percentage like 100%%)", s)
	}
	if n <= 0 {
		return 0, fmt.Errorf("count must be positive, got %d", n)
	}
	if n > limit {
		return 0, fmt.Errorf("count %d is over the limit of %d", n, limit)
	}
	return n, nil
}

// parseRRSizes parses netperf's "-r req,resp" (one number sets both, as
// netperf's break_args() does).
func parseRRSizes(s string) (int, int, error) {
	parts := strings.Split(s, ",")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("%q: want request,response sizes in bytes, e.g. 1,1", s)
	}
	var v [2]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > udpMaxPayload {
			return 0, 0, fmt.Errorf("%q: sizes must be 1..%d bytes (want request,response, e.g. 1,1)", s, udpMaxPayload)
		}
		v[i] = n
	}
	if len(parts) == 1 {
		v[1] = v[0]
	}
	return v[0], v[1], nil
}

// udpTruesize approximates the skb truesize of a UDP datagram over
// loopback (__ip_append_data()): up to SKB_MAX_ALLOC the skb is linear, a
// kmalloc of payload + IP/UDP headers (28) + hh_len and alignment (31) +
// skb_shared_info (320), rounded up to its slab size, plus the sk_buff
// (256); a larger one puts the payload in page frags, charged as is.
func udpTruesize(payload int) int {
	const (
		skbMaxAlloc = 16384 - 320 // SKB_MAX_ORDER(0, 2)
		skbHead     = 256         // SKB_DATA_ALIGN(sizeof(struct sk_buff))
	)
	if linear := payload + 28 + 31; linear < skbMaxAlloc {
		size := 512
		for size < linear+320 {
			size *= 2
		}
		return size + skbHead
	}
	return 512 + skbHead + payload
}

// netperfCopyNS is one copy of n payload bytes.
func (w *netperfBench) netperfCopyNS(n int) int64 {
	return int64(w.m.CyclesToNS(float64(n)/loopbackBytesPerCycle) + 0.5)
}

// copyBytes is the data one copy of an n-byte payload moves through the
// CPU's caches (emu.Action.Touching): the user buffer (netperf cycles
// through a ring of them, send_width/recv_width buffers: not re-touched
// lines) and the skb the payload lands in or comes from, at its truesize
// (a fresh slab object or page frag). TCP's skbs are taken at UDP's
// truesize (simplified).
func copyBytes(n int) int64 { return int64(n + udpTruesize(n)) }

// sendNS is what a send of n bytes computes beyond sock_send: the
// loopback path and the copy in.
func (w *netperfBench) sendNS(n int) int64 {
	return max(1, int64(w.m.CyclesToNS(loopbackFixedCycles)+0.5)+w.netperfCopyNS(n))
}

// path is a socket's: the sender's softirq wakes the reader (WF_SYNC
// unless -sync=false; the send path itself is the sender's Run before
// it), recvfrom() waits for a datagram; a stream's sender takes a credit
// of room (TCP: sleeps in sk_stream_wait_memory() for it), and the
// receiver frees one per message with a plain wakeup.
func (w *netperfBench) path() *chanPath {
	p := &chanPath{
		write: emu.Signal(nil),
		read:  emu.Wait(nil).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpSockRecv),
		full:  emu.Wait(nil),
		room:  emu.Signal(nil),
	}
	if w.sync {
		p.write = p.write.WithSync()
	}
	if w.test == "TCP_STREAM" {
		p.full = p.full.With(hwmodel.OpSyscall)
	}
	return p
}

func (w *netperfBench) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	if err := s.SetSocketFamily(strings.ToLower(w.test[:3])); err != nil { // UDP_* or TCP_*
		return err
	}
	switch {
	case w.rr():
		w.trans = make([]int64, w.n)
	default:
		w.sent = make([]int64, w.n)
		w.drops = make([]int64, w.n)
		w.recvd = make([]int64, w.n)
	}
	path := w.path()
	pl := newPairPlacer(s, w.start)
	for i := 0; i < w.n; i++ {
		var cli, srv emu.Program
		var cliSems, srvSems []*emu.Sem
		switch {
		case w.rr():
			reqQ := path.open(fmt.Sprintf("netserver%d.rx", i), 0)
			respQ := path.open(fmt.Sprintf("netperf%d.rx", i), 0)
			count := func(t *emu.Task) {
				if t.Now() <= w.dur {
					w.trans[i]++
				}
			}
			cli = w.rrProgram(reqQ, respQ, w.req, w.resp, false, count)
			srv = w.rrProgram(respQ, reqQ, w.resp, w.req, true, nil)
			cliSems, srvSems = []*emu.Sem{respQ.data}, []*emu.Sem{reqQ.data}
		default:
			c := path.open(fmt.Sprintf("netserver%d.rx", i), w.credits, fmt.Sprintf("netperf%d.space", i))
			cli, srv = w.streamSender(i, c), w.streamReceiver(i, c)
			cliSems, srvSems = c.space, []*emu.Sem{c.data}
		}
		if _, err := s.NewTask(emu.TaskSpec{Comm: "netperf", CPU: pl.client(i), Group: g, Prog: cli, Sems: cliSems, MM: taskMM(false, 2*i)}); err != nil {
			return err
		}
		if _, err := s.NewTask(emu.TaskSpec{Comm: "netserver", CPU: pl.server(i), Group: g, Prog: srv, Sems: srvSems, MM: taskMM(false, 2*i+1)}); err != nil {
			return err
		}
	}
	return nil
}

// rrProgram is one side of a request/response loop, send_omni_inner()'s
// on the client, recv_omni()'s on the server: sendto() (udp_sendmsg()
// and the loopback path of a send bytes), whose softirq wakes the peer
// on out; recvfrom() blocking on in until the peer's message is queued,
// and skb_copy_datagram_msg() of its recv bytes. The client starts with
// its send and counts a transaction (got) as each response arrives; the
// server starts with its wait.
func (w *netperfBench) rrProgram(out, in channel, send, recv int, server bool, got func(*emu.Task)) emu.Program {
	st := cycle{n: 4}
	if server {
		st.at = 2
	}
	sendPath := emu.Run(w.sendNS(send)).With(hwmodel.OpSyscall, hwmodel.OpSockSend).Touching(copyBytes(send))
	recvCopy := w.netperfCopyNS(recv)
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch st.next() {
			case 0:
				return sendPath
			case 1:
				return out.send()
			case 2:
				return in.recv()
			case 3:
				if got != nil {
					got(t)
				}
				if recvCopy > 0 {
					return emu.Run(recvCopy).Touching(copyBytes(recv))
				}
			}
		}
	})
}

// streamSender is send_omni_inner()'s stream loop. UDP: each sendto()
// succeeds; the datagram is queued if the receiver's buffer has room
// (a credit), else dropped in __udp_enqueue_schedule_skb(). TCP: the
// sender sleeps in sk_stream_wait_memory() until the window opens.
func (w *netperfBench) streamSender(i int, c channel) emu.Program {
	st := cycle{n: 3}
	tcp := w.test == "TCP_STREAM"
	sendNS := w.sendNS(w.msgSize)
	sendPath := emu.Run(sendNS).With(hwmodel.OpSyscall, hwmodel.OpSockSend).Touching(copyBytes(w.msgSize))
	if tcp {
		sendPath = emu.Run(sendNS).With(hwmodel.OpSockSend).Touching(copyBytes(w.msgSize)) // after the syscall's wait for room
	}
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch st.next() {
			case 0:
				if tcp { // tcp_sendmsg() waits for space first
					return c.waitRoom(0)
				}
				return sendPath
			case 1:
				if tcp {
					return sendPath
				}
				w.countSent(i, t)
				if c.space[0].Pending() == 0 { // rmem full: the datagram is dropped
					if t.Now() <= w.dur {
						w.drops[i]++
					}
					st.at = 0
					continue
				}
				return c.waitRoom(0) // a pending credit: taken at once
			case 2:
				if tcp {
					w.countSent(i, t)
				}
				return c.send()
			}
		}
	})
}

func (w *netperfBench) countSent(i int, t *emu.Task) {
	if t.Now() <= w.dur {
		w.sent[i]++
	}
}

// streamReceiver is recv_omni()'s stream loop. UDP: recvfrom() one
// datagram, copy it out, and free its buffer space. TCP: one recv()
// takes everything queued, up to the receive buffer (netperf's default
// receive size); tcp_cleanup_rbuf() then sends the window update over
// loopback, whose tcp_ack() -> tcp_check_space() -> sk_stream_write_space()
// wakes the sender (a plain wakeup).
func (w *netperfBench) streamReceiver(i int, c channel) emu.Program {
	step, got, freed := 0, 0, 0
	ackNS := max(1, int64(w.m.CyclesToNS(loopbackFixedCycles)+0.5))
	tcp := w.test == "TCP_STREAM"
	batch := 1
	if tcp {
		batch = max(1, tcpRcvBufInit/w.msgSize)
	}
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch step {
			case 0:
				step, got, freed = 1, 1, 0
				return c.recv()
			case 1: // (TCP) the rest of what is queued, in the same read
				if got < batch && c.data.Pending() > 0 {
					got++
					return emu.Wait(c.data)
				}
				step = 2
				if t.Now() <= w.dur {
					w.recvd[i] += int64(got)
				}
				if c := w.netperfCopyNS(got * w.msgSize); c > 0 {
					return emu.Run(c).Touching(int64(got) * copyBytes(w.msgSize))
				}
			case 2:
				step = 3
				if tcp {
					return emu.Run(ackNS).With(hwmodel.OpSockSend)
				}
			case 3:
				if freed == got {
					step = 0
					continue
				}
				freed++
				return c.giveRoom(0)
			}
		}
	})
}

// Limit is the test length: the run is duration-bound.
func (w *netperfBench) Limit() int64 { return w.dur }

func (w *netperfBench) Done(*emu.Sim) bool { return false }

// DurationBound: netperf runs for -l seconds.
func (w *netperfBench) DurationBound() bool { return true }

// secs is the test's elapsed time: -l, or the time run when the run was
// stopped early (netperf's own Elapsed on a signal).
func (w *netperfBench) secs() float64 {
	if w.ran > 0 {
		return float64(w.ran) / 1e9
	}
	return float64(w.dur) / 1e9
}

// setRan records the time run, for secs.
func (w *netperfBench) setRan(s *emu.Sim) { w.ran = max(min(s.Now(), w.dur), 1) }

func netperfSum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// mbits is netperf's 10^6bits/sec.
func (w *netperfBench) mbits(msgs int64) float64 {
	return float64(msgs) * float64(w.msgSize) * 8 / 1e6 / w.secs()
}

// netperfCPU is what -c/-C report: the machine's CPU utilization over
// the run, in percent (every CPU's time not in the idle loop).
func netperfCPU(s *emu.Sim, cpus int) float64 {
	all := float64(s.Now()) * float64(cpus)
	if all <= 0 {
		return 0
	}
	return 100 * (1 - float64(s.SymbolNS("do_idle"))/all)
}

// serviceDemand is netperf's calc_service_demand(): CPU microseconds per
// unit (a transaction, or a KB) at the given rate.
func (w *netperfBench) serviceDemand(util, unitsPerSec float64) float64 {
	if unitsPerSec <= 0 {
		return 0
	}
	return util / 100 * float64(len(w.m.CPUs)) * 1e6 / unitsPerSec
}

// Report prints netperf's classic output once per netperf process (pair
// order), each block with its own pair's result, as lkp's N concurrent
// netperf processes print them.
func (w *netperfBench) Report(out io.Writer, s *emu.Sim) error {
	var b strings.Builder
	w.setRan(s)
	if w.ran < w.dur {
		fmt.Fprintf(&b, "netperf: stopped early: %.6f s of the %g s test ran; the rates below cover that\n", float64(w.ran)/1e9, w.length)
	}
	secs := w.secs()
	cpu := w.cpuL || w.cpuR
	util := netperfCPU(s, len(w.m.CPUs))
	// Utilization and service demand columns: netperf prints -1 where
	// that side was not measured.
	side := func(on bool, v float64) float64 {
		if on {
			return v
		}
		return -1
	}
	from, fam, to := "0.0.0.0 (0.0.0.0)", "AF_INET", w.host
	if w.ipv6 {
		from, fam = ":: (::)", "AF_INET6"
	}
	for i := 0; i < w.n; i++ {
		switch w.test {
		case "UDP_RR", "TCP_RR":
			proto, sndBuf, rcvBuf := "UDP", udpSockBuf, udpSockBuf
			if w.test == "TCP_RR" {
				proto, sndBuf, rcvBuf = "TCP", tcpSndBufInit, tcpRcvBufInit
			}
			tps := float64(w.trans[i]) / secs
			fmt.Fprintf(&b, "MIGRATED %s REQUEST/RESPONSE TEST from %s port 0 %s to %s () port 0 %s : first burst 0\n", proto, from, fam, to, fam)
			if !cpu {
				b.WriteString("Local /Remote\n" +
					"Socket Size   Request  Resp.   Elapsed  Trans.\n" +
					"Send   Recv   Size     Size    Time     Rate         \n" +
					"bytes  Bytes  bytes    bytes   secs.    per sec   \n\n")
				fmt.Fprintf(&b, "%-6d %-6d %-6d   %-6d  %-6.2f   %7.2f   \n", sndBuf, rcvBuf, w.req, w.resp, secs, tps)
			} else {
				sd := w.serviceDemand(util, tps)
				b.WriteString("Local /Remote\n" +
					"Socket Size   Request Resp.  Elapsed Trans.   CPU    CPU    S.dem   S.dem\n" +
					"Send   Recv   Size    Size   Time    Rate     local  remote local   remote\n" +
					"bytes  bytes  bytes   bytes  secs.   per sec  % S    % S    us/Tr   us/Tr\n\n")
				fmt.Fprintf(&b, "%-6d %-6d %-6d  %-6d %-6.2f  %-6.2f  %-6.2f %-6.2f %-6.3f  %-6.3f \n", sndBuf, rcvBuf, w.req, w.resp, secs, tps,
					side(w.cpuL, util), side(w.cpuR, util), side(w.cpuL, sd), side(w.cpuR, sd))
			}
			fmt.Fprintf(&b, "%-6d %-6d\n", sndBuf, rcvBuf)
		case "UDP_STREAM":
			fmt.Fprintf(&b, "MIGRATED UDP STREAM TEST from %s port 0 %s to %s () port 0 %s\n", from, fam, to, fam)
			sent, recvd := w.mbits(w.sent[i]), w.mbits(w.recvd[i])
			if !cpu {
				b.WriteString("Socket  Message  Elapsed      Messages                \n" +
					"Size    Size     Time         Okay Errors   Throughput\n" +
					"bytes   bytes    secs            #      #   10^6bits/sec\n\n")
				fmt.Fprintf(&b, "%6d  %6d   %-7.2f   %7d %6d    %7.2f\n%6d           %-7.2f   %7d           %7.2f\n\n",
					udpSockBuf, w.msgSize, secs, w.sent[i], 0, sent, udpSockBuf, secs, w.recvd[i], recvd)
			} else {
				kbs := func(mbit float64) float64 { return mbit * 1e6 / 8 / 1024 }
				b.WriteString("Socket  Message  Elapsed      Messages                   CPU      Service\n" +
					"Size    Size     Time         Okay Errors   Throughput   Util     Demand\n" +
					"bytes   bytes    secs            #      #   10^6bits/sec % SS     us/KB\n\n")
				fmt.Fprintf(&b, "%6d  %6d   %-7.2f   %7d %6d    %7.1f     %-6.2f   %-6.3f\n%6d           %-7.2f   %7d           %7.1f     %-6.2f   %-6.3f\n\n",
					udpSockBuf, w.msgSize, secs, w.sent[i], 0, sent, side(w.cpuL, util), side(w.cpuL, w.serviceDemand(util, kbs(sent))),
					udpSockBuf, secs, w.recvd[i], recvd, side(w.cpuR, util), side(w.cpuR, w.serviceDemand(util, kbs(recvd))))
			}
		case "TCP_STREAM":
			fmt.Fprintf(&b, "MIGRATED TCP STREAM TEST from %s port 0 %s to %s () port 0 %s\n", from, fam, to, fam)
			mb := w.mbits(w.recvd[i])
			if !cpu {
				b.WriteString("Recv   Send    Send                          \n" +
					"Socket Socket  Message  Elapsed              \n" +
					"Size   Size    Size     Time     Throughput  \n" +
					"bytes  bytes   bytes    secs.    10^6bits/sec  \n\n")
				fmt.Fprintf(&b, "%6d %6d %6d    %-6.2f   %7.2f   \n", tcpRcvBufInit, tcpSndBufInit, w.msgSize, secs, mb)
			} else {
				sd := w.serviceDemand(util, mb*1e6/8/1024)
				b.WriteString("Recv   Send    Send                          Utilization       Service Demand\n" +
					"Socket Socket  Message  Elapsed              Send     Recv     Send    Recv\n" +
					"Size   Size    Size     Time     Throughput  local    remote   local   remote\n" +
					"bytes  bytes   bytes    secs.    10^6bits/s  % S      % S      us/KB   us/KB\n\n")
				fmt.Fprintf(&b, "%6d %6d %6d    %-6.2f     %7.2f   %-6.2f   %-6.2f   %-6.3f  %-6.3f \n", tcpRcvBufInit, tcpSndBufInit, w.msgSize, secs, mb,
					side(w.cpuL, util), side(w.cpuR, util), side(w.cpuL, sd), side(w.cpuR, sd))
			}
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// Metrics: "throughput" is the sum over all pairs (transactions/s for
// UDP_RR, received 10^6 bits/s for the streams), what lkp adds up.
func (w *netperfBench) Metrics(s *emu.Sim) Metrics {
	w.setRan(s)
	secs := w.secs()
	v := map[string]float64{"clients": float64(w.n), "elapsed_sec": secs}
	switch {
	case w.rr():
		tr := netperfSum(w.trans)
		total := float64(tr) / secs
		v["throughput"] = total
		v["throughput_per_client"] = total / float64(w.n)
		v["transactions"] = float64(tr)
		if tr > 0 {
			v["rtt_usec"] = float64(w.n) * secs * 1e6 / float64(tr)
		}
	default:
		sent, recvd := netperfSum(w.sent), netperfSum(w.recvd)
		v["throughput"] = w.mbits(recvd)
		v["throughput_per_client"] = w.mbits(recvd) / float64(w.n)
		v["sent_mbits"] = w.mbits(sent)
		v["messages_sent"] = float64(sent)
		v["messages_received"] = float64(recvd)
		if w.test == "UDP_STREAM" {
			v["messages_dropped"] = float64(netperfSum(w.drops))
		}
	}
	return Metrics{Primary: "throughput", HigherIsBetter: true, Values: v}
}
