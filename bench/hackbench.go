package bench

import (
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

// hackbench (rt-tests src/hackbench/hackbench.c) and perf bench sched
// messaging (tools/perf/bench/sched-messaging.c, a port of the same
// program) share this engine.
//
// Both build groups of fds receivers and fds senders. Each receiver owns
// one channel, a pipe() or an AF_UNIX SOCK_STREAM socketpair() (fdpair()),
// and every sender of its group writes into it: sender() loops `loops`
// times over the group's receivers, writing one datasize-byte message to
// each (write() on out_fds[j]), and receiver() reads fds*loops messages
// (ctx->num_packets) one read() at a time. Tasks exit when done; the time
// is from the start to when the last task has exited (the tools time the
// "go" write to the last wait()/pthread_join()).
//
// The model:
//   - A receiver's channel is a data semaphore it owns. A write signals it
//     with WF_SYNC: pipe_write() wakes the reader with
//     wake_up_interruptible_sync_poll(), and unix_stream_sendmsg() calls
//     sk_data_ready = sock_def_readable(), which does the same. The signal's
//     stamp carries the sender's index, so the receiver knows whose message
//     it consumed.
//   - A channel holds a limited number of messages (channelCapacity): a
//     pipe has 16 page buffers (PIPE_DEF_BUFFERS) and pipe_write() merges
//     a small write into the last page while it fits; a socketpair blocks
//     the writer in sock_alloc_send_pskb() once the sending socket's
//     sk_wmem_alloc reaches sk_sndbuf (wmem_default, 212992), each queued
//     skb charging its truesize. All senders of a group share a
//     receiver's channel: each sees its fill and sleeps on its own
//     semaphore when it is full, and the reader (for a pipe, also a
//     writer that slept: wake_next_writer) wakes the sleepers by the
//     kernel's rule, a sync wakeup (chanRoom, channelroom.go: pipe_read()
//     wakes one writer after each read of a full pipe, unix_write_space()
//     all of them once a quarter of sk_sndbuf is in use).
//   - Each read and write is a syscall (OpSyscall) and the pipe or socket
//     path (OpPipeWrite/OpPipeRead, OpUnixSend/OpUnixRecv) at the preset's
//     costs, plus the copy of datasize bytes (copy_from_user in the write,
//     copy_to_user in the read) as compute at copyBytesPerCycle.
//   - A pipe is also its shared memory (emu.Pipe, fs/pipe.c's rules): each
//     write runs pipe_write() on the lines of the receiver's pipe under its
//     mutex (the emu.PipeWrite step, which charges OpPipeWrite around the
//     mutex hold), each read pipe_read() (PipeReadWait on the wait,
//     PipeCopyOut with the copy_to_user, charging OpPipeRead), and the
//     room wakeups the wr_wait queue (PipeWaitRoom, PipeGiveRoom), so the
//     20 senders and the receiver of a pipe contend for its mutex and pass
//     its lines around. A socketpair is its shared memory too
//     (emu.UnixSock, net/unix/af_unix.c's rules): each send takes the
//     reader's unix_state_lock and sk_receive_queue, writes an skb and
//     adds to the writers' shared sk_wmem_alloc (UnixSend), each read
//     peeks under the lock (UnixRecvWait), copies the skb out, unlinks
//     and frees it (UnixRecv).
//   - All tasks start at time 0, in creation order (receivers then
//     senders, group by group, as the tools fork them), each on the CPU
//     fork balancing gives it from the tool's main thread
//     (emu.Sim.ForkCPU: select_task_rq_fair(WF_FORK), v6.6), which runs
//     on the first CPU of Spread's seeded order: on a 2-socket machine the
//     forks alternate between the sockets (sd->imb_numa_nr), so every
//     group spans both, as on the real machine. The pipes are the
//     parent's (pipe() allocates them on its node). The ready/wake barrier
//     (ready(): every child polls wakefd until the parent's single write)
//     is not modeled, nor the parent's own run.
//   - Processes (-P, the default) each have their own mm, threads (-T, -t)
//     share the tool's: a switch between two processes pays switch_mm
//     (taskMM). Threads also share the descriptor table, so each
//     sender's write() takes and drops a reference on the struct file of
//     the receiver's write end, which the group's senders share
//     (fs/file.c __fget_light(), fput(): emu.File, FdGet at the
//     syscall's entry, FdPut after the send); a process's lookup takes
//     none. A child process also pays, inside the timed window, the
//     copy-on-write faults of its first steps after fork() (forkFaults,
//     measured per tool; forkedChild) and its exit_mmap() when it exits,
//     before the parent's wait4() reaps it and the clock stops. On the
//     2-CPU dev VM that is most of perf bench sched messaging's time at
//     small -l: -l 1 runs 0.202 s as processes, 0.009 s as threads.
//   - A message is one read() and one write(): a stream socket may return
//     a short read that the tool completes with a second read() (the
//     `goto again` loops); the model never splits a message.
type msgBench struct {
	Common
	hackbench bool // hackbench's output and metrics, else perf bench's
	groups    int
	fds       int
	loops     int
	datasize  int
	pipe      bool
	threaded  bool
	m         *hwmodel.Machine
	// children are the tool's tasks, in creation order (Setup); their
	// exit times (emu.Task.ExitedAt) end the run.
	children []*emu.Task
	// sent is each sender's messages written so far (each owned by its
	// task's CPU, read after the run): an interrupted run's rates are
	// over these, not over the configured count.
	sent []int64
	// repairs checks the channels' rooms at the barrier (chanRoom).
	repairs *roomRepairs
}

// forkFaults is how many copy-on-write faults one child process of the
// tool takes inside the timed window: after the parent's fork() and the
// ready/wake handshake, the child's first steps write the stack, libc's
// and the tool's data it shares with the parent. Measured on the dev VM
// (rt-tests hackbench 2.x, perf 6.x; tracefs exceptions:page_fault_user
// against sched_process_fork): hackbench -g 10 -l 1 takes ~25 faults per
// child, 15 of them after the last fork; perf bench sched messaging -l 1
// ~160, 125 after the last fork (perf is a larger binary with more
// state to touch). [M] Threads share the tool's mm and take none.
func (w *msgBench) forkFaults() int {
	if w.hackbench {
		return 15
	}
	return 125
}

// exitOps is a child process's exit_mmap(), in units of a small tool's
// (hwmodel.OpExitMMAP, the presets' hackbench-sized child): a perf child
// tears down ~3x as much (perf is a large binary with many mappings). On
// the dev VM, with its 3.2 us faults, the children's fixed costs inside
// the timed window leave ~167 us per hackbench child and ~550 us per perf
// child (perf bench sched messaging -l 1: 0.202 s processes, 0.009 s
// threads, 2 CPUs, 400 children). [M]
func (w *msgBench) exitOps() []hwmodel.KernelOp {
	n := 3
	if w.hackbench {
		n = 1
	}
	return slices.Repeat([]hwmodel.KernelOp{hwmodel.OpExitMMAP}, n)
}

// exitWork is a child process's user-space exit path, ns: exit(3) runs
// __run_exit_handlers() and _dl_fini(), every loaded library's
// destructors, each binding its symbols lazily (perf links some fifty
// libraries: do_lookup_x(), _dl_fixup(), _dl_call_fini() and
// ~ios_base::Init in a profile of perf bench sched messaging -l 1 on
// the 2-vCPU PVM guest). Measured per host and tool binary
// (hwmodel.Machine.ExitPathNS, from the children's exit_group() against
// their last system call before it, faults included), it is charged less
// the forkFaults the model prices itself: a traced perf bench sched pipe
// child took 123 of its 152 faults from exit() on, so those faults are
// the exit path's. 0 where not measured (the presets).
func (w *msgBench) exitWork(dso string) int64 {
	path := w.m.ExitPathNS[dso]
	if path <= 0 {
		return 0
	}
	return max(0, int64(path+0.5)-int64(w.forkFaults())*w.m.Cost(hwmodel.OpPageFault))
}

// Limits on the input. maxTasks (2*fds*groups) bounds the emulator's
// memory and run time; it is above the largest published run (-g 1000,
// 40,000 tasks, hardware.md C5) and above the default pid_max (32768),
// which caps the real tool's tasks on a stock system. maxPairs bounds the
// space semaphores, one per sender-receiver pair (fds*fds*groups).
// maxDatasize is the default pipe size (64 KiB): a bigger message would
// need the reader to drain the channel in the middle of one write, which a
// write modeled as one signal cannot express.
const (
	maxTasks    = 1 << 16
	maxPairs    = 1 << 20
	maxDatasize = 1 << 16
)

// Channel capacity, from the kernel's sizes (see channelCapacity).
const (
	pageSize        = 4096   // PAGE_SIZE on every preset (x86-64, arm64 4K)
	pipeBuffers     = 16     // PIPE_DEF_BUFFERS: a pipe's default 64 KiB
	sockSndbuf      = 212992 // net.core.wmem_default: sk_sndbuf of a new socket
	skbHeadTruesize = 256    // SKB_DATA_ALIGN(sizeof(struct sk_buff)) on 64-bit
	skbShinfo       = 320    // SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) on 64-bit
	smpCacheBytes   = 64     // SKB_DATA_ALIGN's alignment
	// copyBytesPerCycle is the copy_{from,to}_user bandwidth for a small,
	// cache-resident buffer: one 8-byte load and one store per cycle, what
	// a Cortex-A53 sustains and a floor for x86 (rep movsb on ERMS parts
	// does more per cycle past its startup).
	copyBytesPerCycle = 8
)

// channelCapacity is how many datasize-byte messages one receiver's
// channel holds before a writer blocks (chanRoom has the rules).
//   - pipe: pipe_write() merges a write into the last page buffer when
//     offset+chars <= PAGE_SIZE, so a page holds PAGE_SIZE/datasize
//     messages and the pipe 16 pages; a message over a page takes
//     ceil(datasize/PAGE_SIZE) buffers.
//   - socketpair: unix_stream_sendmsg() allocates an skb per write whose
//     truesize is the kmalloc()ed head (SKB_DATA_ALIGN(datasize) plus the
//     shared info, rounded up to the kmalloc size class) plus the sk_buff;
//     sock_alloc_send_pskb() blocks once sk_wmem_alloc reaches sk_sndbuf.
//     For 100 bytes: 512 + 256 = 768, 212992/768 = 277 messages.
func channelCapacity(pipe bool, datasize int) int {
	if pipe {
		if datasize <= pageSize {
			return pipeBuffers * (pageSize / datasize)
		}
		pages := (datasize + pageSize - 1) / pageSize
		return max(1, pipeBuffers/pages)
	}
	return max(1, sockSndbuf/int(skbTruesize(datasize)))
}

// skbTruesize is the truesize of the skb unix_stream_sendmsg() queues for
// a datasize-byte write: the kmalloc()ed head (SKB_DATA_ALIGN(datasize)
// plus the shared info, in its kmalloc size class) plus the sk_buff.
func skbTruesize(datasize int) int64 {
	head := (datasize+smpCacheBytes-1)/smpCacheBytes*smpCacheBytes + skbShinfo
	return int64(kmallocSize(head) + skbHeadTruesize)
}

// kmallocSize is the kmalloc size class a request lands in (the
// kmalloc-96 and kmalloc-192 caches, else the next power of two).
func kmallocSize(n int) int {
	switch {
	case n <= 96 && n > 64:
		return 96
	case n <= 192 && n > 128:
		return 192
	}
	s := 8
	for s < n {
		s <<= 1
	}
	return s
}

// copyNS is the time to copy datasize bytes at copyBytesPerCycle on m.
func copyNS(m *hwmodel.Machine, datasize int) int64 {
	cycles := float64(datasize) / copyBytesPerCycle
	return max(1, int64(math.Ceil(cycles*1000/m.FreqMHz)))
}

// modeFlag is hackbench's -T/-P pair: getopt processes them in order, so
// the last one given wins.
type modeFlag struct {
	threaded *bool
	value    bool // what this flag sets threaded to
}

func (f *modeFlag) String() string {
	if f == nil || f.threaded == nil {
		return "false"
	}
	return strconv.FormatBool(*f.threaded == f.value)
}

func (f *modeFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if b {
		*f.threaded = f.value
	}
	return nil
}

func (f *modeFlag) IsBoolFlag() bool { return true }

func init() {
	Register(Spec{
		Name: "hackbench",
		Doc:  "hackbench (rt-tests): groups of senders spraying messages to receivers over pipes or socketpairs",
		Examples: []string{
			"emu run -topo hikey-8 -workload hackbench -g 4 -f 10 -l 200",
			"emu run -topo spr-2s -workload hackbench -g 8 -f 20 --threads --pipe -l 1000 -cgroup docker",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &msgBench{hackbench: true}
			AddCommon(fs, &w.Common)
			for _, n := range []string{"g", "groups"} {
				fs.IntVar(&w.groups, n, 10, "number of groups (hackbench -g/--groups)")
			}
			for _, n := range []string{"f", "fds"} {
				fs.IntVar(&w.fds, n, 20, "receivers and senders per group (hackbench -f/--fds)")
			}
			for _, n := range []string{"l", "loops"} {
				fs.IntVar(&w.loops, n, 100, "messages each sender sends to each receiver (hackbench -l/--loops)")
			}
			for _, n := range []string{"s", "datasize"} {
				fs.IntVar(&w.datasize, n, 100, "bytes per message (hackbench -s/--datasize)")
			}
			for _, n := range []string{"p", "pipe"} {
				fs.BoolVar(&w.pipe, n, false, "pipes instead of socketpairs (hackbench -p/--pipe)")
			}
			// --process is getopt_long's unambiguous abbreviation of
			// --processes, which the real tool accepts.
			for _, n := range []string{"T", "threads"} {
				fs.Var(&modeFlag{&w.threaded, true}, n, "threads (hackbench -T/--threads; the last of -T/-P wins)")
			}
			for _, n := range []string{"P", "processes", "process"} {
				fs.Var(&modeFlag{&w.threaded, false}, n, "processes, the default (hackbench -P/--processes)")
			}
			return func(m *hwmodel.Machine) (Workload, error) {
				return w.validate(m, "-g", "-f")
			}
		},
	})
	Register(Spec{
		Name: "messaging",
		Doc:  "perf bench sched messaging: hackbench's groups of 20 senders and 20 receivers",
		Examples: []string{
			"emu run -topo host -workload messaging",
			"emu run -topo spr-2s -workload messaging -g 20 -t -l 5000",
		},
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			// perf's num_fds is fixed at 20 and DATASIZE at 100.
			w := &msgBench{fds: 20, datasize: 100}
			AddCommon(fs, &w.Common)
			for _, n := range []string{"g", "group"} {
				fs.IntVar(&w.groups, n, 10, "number of groups (perf -g/--group)")
			}
			// --loop is older perf's spelling of --nr_loops.
			for _, n := range []string{"l", "nr_loops", "loop"} {
				fs.IntVar(&w.loops, n, 100, "messages each sender sends to each receiver (perf -l/--nr_loops)")
			}
			for _, n := range []string{"p", "pipe"} {
				fs.BoolVar(&w.pipe, n, false, "pipe() instead of socketpair() (perf -p/--pipe)")
			}
			for _, n := range []string{"t", "thread"} {
				fs.BoolVar(&w.threaded, n, false, "threads instead of processes (perf -t/--thread)")
			}
			return func(m *hwmodel.Machine) (Workload, error) {
				return w.validate(m, "-g", "")
			}
		},
	})
}

// validate checks the flags; fdsFlag is "" where fds is not a flag.
func (w *msgBench) validate(m *hwmodel.Machine, groupsFlag, fdsFlag string) (Workload, error) {
	if w.groups <= 0 {
		return nil, flagErr(groupsFlag, "groups must be positive, got %d", w.groups)
	}
	if w.fds <= 0 {
		return nil, flagErr(fdsFlag, "fds must be positive, got %d", w.fds)
	}
	if w.loops <= 0 {
		return nil, flagErr("-l", "loops must be positive, got %d", w.loops)
	}
	if w.datasize <= 0 || w.datasize > maxDatasize {
		return nil, flagErr("-s", "datasize %d out of range (allowed: 1..%d bytes)", w.datasize, maxDatasize)
	}
	// Divisions, not products, so that huge values cannot overflow.
	if fdsFlag != "" && (w.fds > maxTasks/2 || w.fds > maxPairs/w.fds) {
		return nil, flagErr(fdsFlag, "%d fds per group is too many (allowed: at most %d tasks, 2*fds*groups, and %d sender-receiver pairs, fds*fds*groups)",
			w.fds, maxTasks, maxPairs)
	}
	if w.groups > maxTasks/(2*w.fds) || w.groups > maxPairs/(w.fds*w.fds) {
		return nil, flagErr(groupsFlag, "%d groups of %d fds is too many (allowed: at most %d tasks, 2*fds*groups, and %d sender-receiver pairs, fds*fds*groups)",
			w.groups, w.fds, maxTasks, maxPairs)
	}
	if pairs := int64(w.groups) * int64(w.fds) * int64(w.fds); int64(w.loops) > maxMessages/pairs {
		return nil, flagErr("-l", "%d loops of %d sender-receiver pairs is too many messages (allowed: -l 1..%d here, at most %g messages)",
			w.loops, pairs, maxMessages/pairs, float64(maxMessages))
	}
	if len(m.CPUs) < 1 {
		return nil, flagErr("-topo", "machine has no CPUs")
	}
	w.m = m
	return w, nil
}

// maxMessages bounds groups*fds*fds*loops, so that message counts and
// byte totals cannot overflow.
const maxMessages = 1e15

func (w *msgBench) tasks() int { return 2 * w.fds * w.groups }

// messages is the total number of messages passed.
func (w *msgBench) messages() int64 {
	return int64(w.groups) * int64(w.fds) * int64(w.fds) * int64(w.loops)
}

func (w *msgBench) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	if err := s.SetSocketFamily("unix"); err != nil { // socketpair(AF_UNIX, SOCK_STREAM)
		return err
	}
	// A receiver's channel: written with WF_SYNC by pipe_write() or
	// unix_stream_sendmsg() (the copy-in carries the syscall entry), read
	// by one read() (a socket's unix_stream_read_generic() copies and
	// frees the skb after its sleep: emu.Action.AfterWait); a full writer
	// sleeps in the syscall, and the reader gives room back with a sync
	// wakeup.
	path := &chanPath{
		write: emu.Signal(nil).With(hwmodel.OpUnixSend).WithSync(),
		read:  emu.Wait(nil).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpUnixRecv),
		full:  emu.Wait(nil).With(hwmodel.OpSyscall),
		room:  emu.Signal(nil).WithSync(),
	}
	if w.pipe {
		// The pipe steps charge OpPipeWrite and OpPipeRead under the
		// pipe's mutex.
		path.write = emu.Signal(nil).WithSync()
		path.read = emu.Wait(nil).With(hwmodel.OpSyscall)
	}
	cp := copyNS(w.m, w.datasize)
	copyIn := emu.Run(cp).With(hwmodel.OpSyscall)
	parent := Spread(s, 0) // the tool's main thread
	// The tools' comms: rt-tests hackbench forks or creates its workers
	// unnamed (its own "hackbench"); perf bench names itself by
	// prctl(PR_SET_NAME) before it runs one (builtin-bench.c
	// run_bench()), and its workers inherit the name. Their user time is
	// in sender() and receiver() (hackbench.c, sched-messaging.c).
	name, dso := "sched-messaging", "perf"
	if w.hackbench {
		name, dso = "hackbench", "hackbench"
	}
	// The tool's main process forks (or clones) every worker.
	main, err := s.NewForkParent(name, parent)
	if err != nil {
		return err
	}
	w.children = w.children[:0]
	w.sent = make([]int64, w.groups*w.fds)
	w.repairs = newRoomRepairs(s)
	exit, faults, exitWork := emu.Exit(), 0, int64(0)
	if !w.threaded {
		exit, faults, exitWork = emu.Exit().With(w.exitOps()...), w.forkFaults(), w.exitWork(dso)
	}
	k := 0 // task index, in creation order
	for grp := 0; grp < w.groups; grp++ {
		// ch[j]: receiver j's channel, with sender i's wait for room in
		// it; rooms[j] its room, which the senders share.
		ch := make([]channel, w.fds)
		rooms := make([]*chanRoom, w.fds)
		var pipes []*emu.Pipe // pipes[j]: receiver j's pipe (pipe mode)
		// outs[j]: the struct file of receiver j's write end, which the
		// group's senders share (threads only: emu.File).
		var outs []*emu.File
		var socks []*emu.UnixSock // socks[j]: receiver j's socketpair (socket mode)
		for j := range ch {
			spaces := make([]string, w.fds)
			for i := range spaces {
				spaces[i] = fmt.Sprintf("%s.g%d.s%d>r%d", name, grp, i, j)
			}
			ch[j] = path.open(fmt.Sprintf("%s.g%d.r%d", name, grp, j), 0, spaces...)
			rooms[j] = newChanRoom(s, ch[j].data.Name, w.pipe, w.datasize, ch[j].space)
			if w.pipe {
				// The parent's pipe() allocates it, on its node
				// (fs/pipe.c alloc_pipe_info(); simplified: the
				// pages too, which the first writer allocates).
				p, err := s.NewPipe(emu.PipeSpec{Name: ch[j].data.Name, Data: ch[j].data, Writers: w.fds, Size: w.datasize,
					CPU: parent})
				if err != nil {
					return err
				}
				pipes = append(pipes, p)
			} else {
				// The parent's socketpair(): its socks on its node.
				u, err := s.NewUnixSock(emu.UnixSockSpec{Name: ch[j].data.Name, Data: ch[j].data, Writers: w.fds, Size: w.datasize, CPU: parent})
				if err != nil {
					return err
				}
				socks = append(socks, u)
			}
			if w.threaded {
				f, err := s.NewFile(ch[j].data.Name+".out", parent)
				if err != nil {
					return err
				}
				outs = append(outs, f)
			}
		}
		// receiver(): read fds*loops messages, one read() each, and
		// wake the writers the read gives room to.
		for j := 0; j < w.fds; j++ {
			total, ch, r := w.fds*w.loops, ch[j], rooms[j]
			// Its actions, the pipe steps built in once.
			recv, copyOut := ch.recv(), emu.Run(cp)
			room := make([]emu.Action, w.fds)
			for i := range room {
				room[i] = ch.giveRoom(i)
			}
			if w.pipe {
				p := pipes[j]
				recv = recv.OnPipe(p, emu.PipeReadWait, 0)
				copyOut = copyOut.OnPipe(p, emu.PipeCopyOut, 0)
				for i := range room {
					room[i] = room[i].OnPipe(p, emu.PipeGiveRoom, i)
				}
			} else {
				recv = recv.OnUnix(socks[j], emu.UnixRecvWait, 0)
				copyOut = copyOut.OnUnix(socks[j], emu.UnixRecv, 0)
			}
			// Owned by the task's CPU: messages read, step, and the
			// writers the last read wakes, in order.
			n, phase := 0, 0
			var wake []int
			prog := emu.ProgramFunc(func(t *emu.Task) emu.Action {
				r.toWake = len(wake) // the last action given is done
				switch phase {
				case 0:
					if n == total {
						return exit
					}
					phase = 1
					return recv
				case 1:
					// copy_to_user() of the message, then the
					// wakeups of the writers it makes room for
					// (after the pipe's unlock, or from the skb's
					// destructor).
					n++
					wake = r.afterRead(t, wake[:0])
					r.toWake = len(wake)
					w.repairs.touchIfWaiting(t, r)
					phase = 0
					if len(wake) > 0 {
						phase = 2
					}
					return copyOut
				default:
					i := wake[0]
					wake = wake[1:]
					r.toWake = len(wake) + 1
					if len(wake) == 0 {
						phase = 0
					}
					return room[i]
				}
			})
			t, err := s.NewTask(emu.TaskSpec{
				Comm: name, UserSym: "receiver", DSO: dso, Parent: main, CPU: s.ForkCPU(parent, nil), Group: g, Prog: forkedChild(prog, faults, exitWork), Sems: []*emu.Sem{ch.data},
				MM: taskMM(w.threaded, k),
			})
			if err != nil {
				return err
			}
			r.reader = t
			w.children = append(w.children, t)
			k++
		}
		// sender(): loops times, one message to each receiver in turn.
		for i := 0; i < w.fds; i++ {
			sent := &w.sent[grp*w.fds+i]
			mine := make([]*emu.Sem, w.fds) // its wait for room in each receiver's channel
			// Its wait for room in and write to each receiver's
			// channel, the pipe steps built in once: the first wait
			// enters write(), a wait after a wakeup is in it.
			wait, rewait, send := make([]emu.Action, w.fds), make([]emu.Action, w.fds), make([]emu.Action, w.fds)
			enter := make([]emu.Action, w.fds) // write(): enter, copy_from_user()
			for j := range mine {
				mine[j] = ch[j].space[i]
				wait[j], send[j] = ch[j].waitRoom(i), ch[j].sendStamp(int64(i))
				rewait[j] = emu.Wait(ch[j].space[i])
				enter[j] = copyIn
				if w.pipe {
					// The write stamps its signal (emu.Pipe.Writer).
					wait[j] = wait[j].OnPipe(pipes[j], emu.PipeWaitRoom, i)
					rewait[j] = rewait[j].OnPipe(pipes[j], emu.PipeWaitRoom, i)
					send[j] = ch[j].send().OnPipe(pipes[j], emu.PipeWrite, i)
				} else {
					// The send stamps its signal with the writer's
					// index, which UnixRecv reads.
					send[j] = send[j].OnUnix(socks[j], emu.UnixSend, i)
				}
				if w.threaded {
					// The shared descriptor table: write()'s
					// fdget_pos() takes a reference on the
					// struct file the senders share (at the
					// syscall's entry: the copy-in, or a wait for
					// room), its fdput() drops it after the send.
					enter[j], wait[j], send[j] = enter[j].FdGet(outs[j]), wait[j].FdGet(outs[j]), send[j].FdPut(outs[j])
				}
			}
			// Owned by the task's CPU: loop, receiver, step, whether
			// this write slept, and the writer it wakes after it.
			l, j, phase, slept, next := 0, 0, 0, false, 0
			var waker *chanRoom // whose wake_next_writer it gave last
			prog := emu.ProgramFunc(func(t *emu.Task) emu.Action {
				if waker != nil && phase != 3 {
					waker.wakingNext[i], waker = false, nil // given
				}
				r := rooms[j]
				switch phase {
				case 0:
					if l == w.loops {
						return exit
					}
					if r.blocked(r.written.Read(t), r.read.Read(t)) {
						// write() finds the channel full: sleep
						// until a reader's wakeup.
						r.inWait[i] = true
						r.waiting.Add(t, 1)
						w.repairs.touch(t, r)
						phase = 1
						return wait[j]
					}
					// write(): enter, copy_from_user() the message.
					r.written.Add(t, 1)
					w.repairs.touchIfWaiting(t, r)
					phase, slept = 2, false
					return enter[j]
				case 1:
					// Woken (or a wakeup was pending): test again,
					// with no merge (pipe_writable()).
					if r.stillBlocked(r.written.Read(t), r.read.Read(t)) {
						return rewait[j]
					}
					r.waiting.Add(t, -1)
					r.written.Add(t, 1)
					w.repairs.touch(t, r)
					phase, slept = 2, true
					return emu.Run(cp)
				case 2:
					// Queue the message and wake the reader, sync.
					a := send[j]
					*sent++
					phase = 0
					r.inWait[i] = false // past wake_next_writer's test
					if slept && r.pipe && !r.pipeFull(r.written.Read(t), r.read.Read(t)) {
						// pipe_write(): wake_next_writer.
						if sl := r.seenSleepers(t, i+1, i, false, nil); len(sl) > 0 {
							next, phase = sl[0], 3
							r.wakingNext[i], waker = true, r
							return a
						}
					}
					if j++; j == w.fds {
						j = 0
						l++
					}
					return a
				default:
					phase = 0
					if j++; j == w.fds {
						j = 0
						l++
					}
					return emu.Signal(r.space[next]).WithSync()
				}
			})
			t, err := s.NewTask(emu.TaskSpec{
				Comm: name, UserSym: "sender", DSO: dso, Parent: main, CPU: s.ForkCPU(parent, nil), Group: g, Prog: forkedChild(prog, faults, exitWork), Sems: mine,
				MM: taskMM(w.threaded, k),
			})
			if err != nil {
				return err
			}
			for _, r := range rooms {
				r.writers = append(r.writers, t)
			}
			w.children = append(w.children, t)
			k++
		}
	}
	return nil
}

// Limit is a safety bound: 50 µs of virtual time per message, several
// times what the whole send-receive path costs even with every task on one
// CPU, plus a second, plus twice every child process's fixed costs (its
// faults, exit path and exit_mmap(): childFixedNS) as if one CPU ran them
// all.
func (w *msgBench) Limit() int64 {
	const perMsg, base = 50_000, 1_000_000_000
	return capNS(float64(w.messages())*perMsg + base + 2*float64(2*w.fds*w.groups)*w.childFixedNS())
}

func (w *msgBench) LimitNote() string {
	return fmt.Sprintf("the safety bound of %d messages: 50 usec each plus 1 s and twice the %d children's fixed costs, at most %d s",
		w.messages(), 2*w.fds*w.groups, MaxSeconds)
}

// childFixedNS is one child process's fixed costs inside the timed window
// (0 for threads): its faults, its exit path and its exit_mmap().
func (w *msgBench) childFixedNS() float64 {
	if w.threaded {
		return 0
	}
	dso := "perf"
	if w.hackbench {
		dso = "hackbench"
	}
	ns := float64(int64(w.forkFaults())*w.m.Cost(hwmodel.OpPageFault) + w.exitWork(dso))
	for _, op := range w.exitOps() {
		ns += float64(w.m.Cost(op))
	}
	return ns
}

// Done: every task has exited (the workload's tasks are the only ones).
func (w *msgBench) Done(s *emu.Sim) bool { return s.Live() == 0 }

// elapsed is the time from the start to the last exit, or to the stop of
// an interrupted run.
func (w *msgBench) elapsed(s *emu.Sim) int64 {
	if s.Live() > 0 {
		return s.Now()
	}
	// The tools reap every child (wait4()) before they stop the clock.
	var e int64
	for _, t := range w.children {
		e = max(e, t.ExitedAt())
	}
	return e
}

// passed is the number of messages the senders wrote: all of them when
// every task exited, else (an interrupted run) those written so far.
func (w *msgBench) passed(s *emu.Sim) int64 {
	if s.Live() == 0 {
		return w.messages()
	}
	return w.written()
}

// LoopsDone is the share of the messages written so far.
func (w *msgBench) LoopsDone() float64 {
	return float64(w.written()) / float64(max(w.messages(), 1))
}

// written is the messages written so far.
func (w *msgBench) written() int64 {
	var n int64
	for _, c := range w.sent {
		n += c
	}
	return n
}

// Units is the messages written so far (Windowed).
func (w *msgBench) Units() []float64 { return []float64{float64(w.written())} }

// WindowLKP is lkp's hackbench.throughput keys of a run that wrote
// perSec[0] messages a second throughout (Windowed): the parse's tasks x loops x
// datasize KiB is 2 x datasize / (fds x 1024) KiB per message written
// (tasks 2 x fds x groups, messages fds x fds x groups x loops).
func (w *msgBench) WindowLKP(perSec []float64) map[string]float64 {
	if !w.hackbench {
		return nil
	}
	// One run at one rate is its own best, mean and worst (lkp's keys of
	// a single iteration), so all four are the window's; the report's
	// would be those of a run stopped at the window's end (-window-to).
	th := perSec[0] * 2 * float64(w.datasize) / (float64(w.fds) * 1024)
	return map[string]float64{"throughput": th, "throughput_best": th, "throughput_avg": rubyRound2(th), "throughput_worst": th}
}

// stoppedEarly is the line an interrupted run prints before its time.
func (w *msgBench) stoppedEarly(s *emu.Sim) string {
	if s.Live() == 0 {
		return ""
	}
	return fmt.Sprintf("stopped early: %.3f s ran, %d of the %d messages were sent; the time and rates below cover those\n",
		float64(s.Now())/1e9, w.passed(s), w.messages())
}

func (w *msgBench) Report(out io.Writer, s *emu.Sim) error {
	ns := w.elapsed(s)
	var err error
	if w.hackbench {
		mode := "process"
		if w.threaded {
			mode = "threaded"
		}
		_, err = fmt.Fprintf(out, "Running in %s mode with %d groups using %d file descriptors each (== %d tasks)\nEach sender will pass %d messages of %d bytes\n%sTime: %d.%03d\n",
			mode, w.groups, 2*w.fds, w.tasks(), w.loops, w.datasize, w.stoppedEarly(s), ns/1e9, ns%1e9/1e6)
		return err
	}
	kind := "processes"
	if w.threaded {
		kind = "threads"
	}
	_, err = fmt.Fprintf(out, "# Running 'sched/messaging' benchmark:\n# %d sender and receiver %s per group\n# %d groups == %d %s run\n\n%s%s\n",
		w.fds, kind, w.groups, w.tasks(), kind, w.stoppedEarly(s), totalTime(ns))
	return err
}

// Metrics. hackbench: time_sec (primary, lower is better) and lkp's
// hackbench.throughput (lkp-tests programs/hackbench/parse): tasks*loops*datasize
// >> 10, i.e. KiB as if every task (receivers included) passed loops
// messages, per second of Time -- the unit of the C4 table, so only ratios
// between runs mean anything. messaging: total_sec (primary). Both also
// give messages_per_sec (groups*fds*fds*loops messages over the time).
// An interrupted run's are over the messages sent by then (throughput
// scaled by the share sent).
func (w *msgBench) Metrics(s *emu.Sim) Metrics {
	ns := max(w.elapsed(s), 1)
	sec := float64(ns) / 1e9
	sent := w.passed(s)
	msgs := float64(sent) / sec
	if w.hackbench {
		var kib float64
		if n := int64(w.tasks()) * int64(w.loops); n <= math.MaxInt64/int64(w.datasize) {
			kib = float64((n * int64(w.datasize)) >> 10)
		} else {
			kib = math.Floor(float64(n) * float64(w.datasize) / 1024)
		}
		if sent < w.messages() {
			kib *= float64(sent) / float64(w.messages())
		}
		return Metrics{Primary: "time_sec", HigherIsBetter: false, Values: map[string]float64{
			"time_sec":         sec,
			"throughput":       kib / sec,
			"messages_per_sec": msgs,
		}}
	}
	return Metrics{Primary: "total_sec", HigherIsBetter: false, Values: map[string]float64{
		"total_sec":        sec,
		"messages_per_sec": msgs,
	}}
}
