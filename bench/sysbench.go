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

// sysbench OLTP against PostgreSQL, as lkp's postgres_sysbench runs it
// (the tgload-profile and tgload-postgres studies): --threads client
// threads, each with its own connection, i.e. its own postgres backend
// process, over a unix socket. A client thread runs transactions of
// -queries statements (sysbench's oltp_read_write.lua: BEGIN, 10 point
// selects, 4 range selects, an index update, a non-index update, a
// delete and an insert, COMMIT: 20; the middle -queries-2 are split
// 14:4 between reads and writes, as sysbench counts them), each a
// round trip: the client computes (-client-us: the Lua script and libpq
// building the statement and parsing the result), sends the statement
// and sleeps in poll() until the result comes; the backend sleeps in
// epoll_wait() (WaitEventSetWait() before reading a command), runs the
// statement for -query-us, and sends the result. Both sends are
// unix_stream_sendmsg(), whose sk_data_ready (sock_def_readable()) wakes
// with WF_SYNC, passed on by poll's pollwake() and, since early 2023
// (also in the stable kernels), by epoll's ep_poll_callback()
// (wake_up_sync()); the sender does block right after. A transaction's
// latency is from its BEGIN to COMMIT's result, as sysbench times an
// event (sb_event_start()/sb_event_stop() around execute_event()).
//
// -commit-lock (on by default; -commit-lock=false turns it off) is a
// global lock at COMMIT held for -commit-us (the WAL flush under
// WALWriteLock, or the WAL insert lock): one holder, waiters served in
// FIFO order. It is futex.go's fifoLock in its
// remote-core mode, a lock task (comm "postgres") that executes the
// critical section on behalf of the requester: the backend posts a
// request (a futex wake, OpSyscall) and sleeps on its own grant semaphore
// (a futex wait); the lock task takes requests in arrival order, computes
// -commit-us for each, and wakes its requester. Compared with a real
// futex this serializes the same work in the same order, but every commit
// costs two wakeups even uncontended (a real uncontended LWLockAcquire is
// a user-space compare-and-swap), the critical section runs on the lock
// task's CPU rather than the holder's, and the holder sleeps instead of
// running through it.
//
// Why it is on by default: it is the only wakeup here that crosses the
// pairs, and without one the pairs settle. A statement's two wakeups
// are WF_SYNC from a waker about to sleep, so wake_affine_idle() (fair.c,
// v6.6: "sync && cpu_rq(this_cpu)->nr_running == 1") sends the wakee to
// the waker's CPU whenever select_idle_sibling() finds its previous CPU
// busy and no idle CPU in its scan; once client and backend share a CPU
// it never idles, so nothing finds it free again. On spr-2s at --threads
// 100% the pure ping-pong ran 2.74, 1.37 and 0.69 M migrations/s over its
// first 0.01, 0.05 and 0.1 s (TTWULocal 4%, 54%, 75% of wakeups), where
// lkp measured 2.2 M/s over a 5 s window of the steady state. Real
// postgres commits cross the pairs: XLogFlush() (xlog.c) takes
// WALWriteLock for every committing write transaction (synchronous_commit
// is on by default; with fsync off the lock still covers the WAL
// write()), and a backend that finds it held sleeps until the holder's
// LWLockRelease() wakes it. With the lock the same run holds 2.05, 2.03
// and 2.00 M migrations/s at 0.05, 0.1 and 0.2 s, and 2.9-3.0 M
// wakeups/s (lkp: 2.8 M). TestSysbenchCommitLockKeepsPairsMoving shows
// both on xeon-e5-2x10. Simplified: on smaller machines the lock moves
// placement less cleanly (hikey-8 without a cgroup settles more with it).
//
// Output: sysbench 1.0.20's: the banner and print_run_mode()'s lines,
// the --report-interval lines (db_report_intermediate()), then the
// cumulative report (db_report_cumulative() and sb_report_cumulative()).
// An interval line counts the transactions that ended in it, and its
// reads, writes and other queries as those transactions' (sysbench
// counts each query as it ends). The percentile is hist.go's, reported at the value
// of sysbench's own histogram bucket (see sysbenchPct).
//
// Simplified: a statement costs the backend -query-us, +-query-jitter
// uniformly (no planner or buffer-manager model, no I/O, no row locks,
// no per-statement-type costs); all threads start at once; a client
// that finds the time up before a transaction closes its connection
// (its backend exits) and exits, as sysbench's sb_more_events() ends a
// thread, and the total time is when the last thread ends. Unix socket
// sends and receives are charged at the preset's sock_send and
// sock_recv, which price the UDP path: a unix socket is somewhat
// cheaper. A receive's sock_recv runs after its wait: the client wakes
// from poll() and the backend from epoll_wait() before their recv()
// copies the queued data out and frees it (emu.Action.AfterWait).
type sysbenchBench struct {
	Common
	threadsArg string
	timeSec    float64
	queries    int
	queryUS    float64
	clientUS   float64
	jitter     float64
	commitLock bool
	commitUS   float64
	percentile int
	interval   float64 // --report-interval, s
	start      string  // -start: spread or fork (pairPlacer)

	m                    *hwmodel.Machine
	n                    int
	dur                  int64
	intervalNS           int64
	reads, writes, other int // per transaction

	// cli[i] is written only by client thread i.
	cli []sysbenchThread
}

// sysbenchThread is one client thread's counters (its sb_timer_t).
type sysbenchThread struct {
	events        int64
	sum, min, max int64 // transaction latency, ns
	hist          *Hist // latency, ns
	end           int64
	exited        bool
	// ivEvents and ivHist are the transactions that ended in each
	// --report-interval (bucket floor(t / interval)).
	ivEvents []int64
	ivHist   []*Hist
}

// Defaults of the model's knobs, with their rationale.
const (
	// sysbenchQueryUS: the backend's CPU per statement. hardware.md C4
	// (tgload-profile): postgres_sysbench with nr_threads = nr_cpu on the
	// 224-CPU SPR made ~2.8 M wakeups/s, 12.5 K per CPU per second, and
	// every statement is two wakeups (client -> backend -> client): 6.25 K
	// statements/s per CPU, 160 us of CPU each, of which that profile
	// puts ~24% in update_cfs_group + update_load_avg (the contention the
	// emulator produces itself) and ~10 us is the socket and scheduling
	// path: ~112 us of user time. With every CPU busy, a thread shares
	// its core with a busy SMT sibling and runs at the preset's
	// smt_yield (0.4 on spr-2s, fitted to the UDP_RR load curve; these
	// were 58 and 9 us with its earlier 0.6) of its speed alone, so the
	// statement costs ~45 us of a CPU alone: 39 us in the backend, 6 us
	// in the client (sysbenchClientUS), the 100:15 split of the first
	// estimate. [E]
	sysbenchQueryUS  = 39
	sysbenchClientUS = 6
	// sysbenchJitter: oltp_read_write mixes point selects with 100-row
	// range scans, sorts and writes, so statement costs differ several
	// fold; each costs -query-us times a uniform factor in [1-j, 1+j)
	// drawn from the backend's own seeded generator, which also keeps
	// the threads from running in lockstep. [E]
	sysbenchJitter = 0.5
	// sysbenchCommitUS: WALWriteLock held for a WAL write to the page
	// cache (fsync off, as benchmark setups run): ~5 us. [E]
	sysbenchCommitUS = 5
)

func init() {
	Register(Spec{
		Name: "sysbench",
		Doc:  "sysbench oltp_read_write against a postgres-like server: --threads clients, each with its own backend over a unix socket",
		Examples: []string{
			"emu run -topo spr-2s -workload sysbench --threads 100% --time 1 -cgroup docker",
			"emu run -topo hikey-8 -workload sysbench --threads=8 --time=0.5 --report-interval=0.1 oltp_read_write run",
			"emu run -topo hikey-8 -workload sysbench --threads 8 --time 0.5 -commit-lock=false",
		},
		Args:      sysbenchArgs,
		ArgsUsage: "[oltp_read_write [run]]",
		Flags: func(fs *flag.FlagSet) func(*hwmodel.Machine) (Workload, error) {
			w := &sysbenchBench{}
			AddCommon(fs, &w.Common)
			fs.StringVar(&w.threadsArg, "threads", "8", "client threads (sysbench's --threads): a count, or a percentage of the CPUs (\"100%\", lkp's nr_threads)")
			fs.Float64Var(&w.timeSec, "time", 10, "run time in seconds (sysbench's --time; fractions allowed here)")
			fs.IntVar(&w.percentile, "percentile", 95, "latency percentile to report (sysbench's --percentile; 0 disables)")
			fs.Float64Var(&w.interval, "report-interval", 0, "print a line of the last interval's rates every this many seconds (sysbench's --report-interval; fractions allowed here; 0: none)")
			fs.IntVar(&w.queries, "queries", 20, "statements per transaction, BEGIN and COMMIT included (oltp_read_write: 20)")
			fs.Float64Var(&w.queryUS, "query-us", sysbenchQueryUS, "backend CPU per statement, in us")
			fs.Float64Var(&w.clientUS, "client-us", sysbenchClientUS, "client CPU per statement (Lua + libpq), in us")
			fs.Float64Var(&w.jitter, "query-jitter", sysbenchJitter, "statement costs vary uniformly within +-this fraction of -query-us (0: all equal)")
			fs.BoolVar(&w.commitLock, "commit-lock", true, "take a global FIFO lock at COMMIT (WALWriteLock; -commit-lock=false: none)")
			fs.Float64Var(&w.commitUS, "commit-us", sysbenchCommitUS, "time the commit lock is held, in us")
			addPairStart(fs, &w.start)
			return func(m *hwmodel.Machine) (Workload, error) {
				return w.validate(m)
			}
		},
	})
}

func (w *sysbenchBench) validate(m *hwmodel.Machine) (Workload, error) {
	if len(m.CPUs) < 1 {
		return nil, flagErr("-topo", "machine has no CPUs")
	}
	if err := checkPairStart(w.start); err != nil {
		return nil, err
	}
	n, err := countOrPercentOfCPUs(w.threadsArg, len(m.CPUs), 65536)
	if err != nil {
		return nil, flagErr("-threads", "%v", err)
	}
	w.n = n
	if !(w.timeSec >= MinSeconds) || w.timeSec > MaxSeconds {
		return nil, flagErr("-time", "run time %v s is out of range (allowed: %g to %d seconds)", w.timeSec, MinSeconds, MaxSeconds)
	}
	w.dur = int64(math.Round(w.timeSec * 1e9))
	if !(w.interval >= 0) || w.interval > MaxSeconds {
		return nil, flagErr("-report-interval", "must be 0 (none) or a positive number of seconds up to %d, got %v", MaxSeconds, w.interval)
	}
	w.intervalNS = int64(math.Round(w.interval * 1e9))
	if w.interval > 0 && w.intervalNS < 1000 {
		return nil, flagErr("-report-interval", "%v s is under a microsecond (allowed: 0, or 1e-6..%d s)", w.interval, MaxSeconds)
	}
	if w.percentile < 0 || w.percentile > 100 {
		return nil, flagErr("-percentile", "must be 0..100 (0 disables), got %d", w.percentile)
	}
	if w.queries < 2 || w.queries > 10000 {
		return nil, flagErr("-queries", "statements per transaction must be 2..10000 (BEGIN and COMMIT included), got %d", w.queries)
	}
	if !(w.queryUS > 0) || w.queryUS > 1e6 {
		return nil, flagErr("-query-us", "must be positive (and under a second), got %v", w.queryUS)
	}
	if !(w.clientUS >= 0) || w.clientUS > 1e6 {
		return nil, flagErr("-client-us", "must be 0 or positive (and under a second), got %v", w.clientUS)
	}
	if !(w.jitter >= 0 && w.jitter < 1) {
		return nil, flagErr("-query-jitter", "must be in [0, 1), got %v", w.jitter)
	}
	if w.commitLock && (!(w.commitUS > 0) || w.commitUS > 1e6) {
		return nil, flagErr("-commit-us", "must be positive (and under a second) with -commit-lock, got %v", w.commitUS)
	}
	mid := w.queries - 2
	w.other = 2
	w.writes = int(math.Round(float64(mid) * 4 / 18))
	w.reads = mid - w.writes
	w.m = m
	return w, nil
}

func sysbenchUSToNS(us float64) int64 { return int64(math.Round(us * 1e3)) }

func (w *sysbenchBench) Setup(s *emu.Sim) error {
	g, err := w.Group(s)
	if err != nil {
		return err
	}
	if err := s.SetSocketFamily("tcp"); err != nil { // the client's TCP connection to its backend
		return err
	}
	w.cli = make([]sysbenchThread, w.n)
	var lockReq *emu.Sem
	grants := make([]*emu.Sem, w.n)
	if w.commitLock {
		lockReq = emu.NewSem("WALWriteLock", 0)
		for i := range grants {
			grants[i] = emu.NewSem(fmt.Sprintf("postgres%d.lwlock", i), 0)
		}
	}
	pl := newPairPlacer(s, w.start)
	for i := 0; i < w.n; i++ {
		w.cli[i].hist = NewHist()
		req := emu.NewSem(fmt.Sprintf("postgres%d.sock", i), 0)
		reply := emu.NewSem(fmt.Sprintf("sysbench%d.sock", i), 0)
		if _, err := s.NewTask(emu.TaskSpec{Comm: "sysbench", CPU: pl.client(i), Group: g,
			Prog: w.client(i, req, reply), Sems: []*emu.Sem{reply}, MM: taskMM(true, i)}); err != nil {
			return err
		}
		sems := []*emu.Sem{req}
		if w.commitLock {
			sems = append(sems, grants[i])
		}
		if _, err := s.NewTask(emu.TaskSpec{Comm: "postgres", CPU: pl.server(i), Group: g,
			Prog: w.backend(i, req, reply, lockReq, grants[i]), Sems: sems, MM: taskMM(false, i)}); err != nil {
			return err
		}
	}
	if w.commitLock {
		if _, err := s.NewTask(emu.TaskSpec{Comm: "postgres", CPU: pl.daemon(2 * w.n), Group: g,
			Prog: emu.ProgramFunc(newFIFOLock(lockReq.Name, 0, lockReq, grants, sysbenchUSToNS(w.commitUS), hwmodel.OpSyscall).next),
			Sems: []*emu.Sem{lockReq}, MM: taskMM(false, w.n)}); err != nil {
			return err
		}
	}
	return nil
}

// sysbenchClose is the stamp of a client's last message: the connection
// closes and the backend exits.
const sysbenchClose = -1

// client is sysbench's thread_run() loop over oltp_read_write's event():
// each statement is client compute, a send and a blocking receive.
func (w *sysbenchBench) client(i int, req, reply *emu.Sem) emu.Program {
	st := &w.cli[i]
	clientNS := sysbenchUSToNS(w.clientUS)
	step, q := 0, 0
	var start int64
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch step {
			case 0: // sb_more_events(): is the time up?
				if t.Now() >= w.dur {
					step = 5
					return emu.SignalStamp(req, sysbenchClose).With(hwmodel.OpSyscall, hwmodel.OpSockSend)
				}
				start, q, step = t.Now(), 0, 1
			case 1: // the script builds the statement
				step = 2
				if clientNS > 0 {
					return emu.Run(clientNS)
				}
			case 2: // send it: the backend wakes (WF_SYNC)
				step = 3
				return emu.SignalStamp(req, int64(q)).With(hwmodel.OpSyscall, hwmodel.OpSockSend).WithSync()
			case 3: // wait for the result
				step = 4
				return emu.Wait(reply).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpSockRecv)
			case 4:
				q++
				if q < w.queries {
					step = 1
					continue
				}
				lat := t.Now() - start
				if st.events == 0 || lat < st.min {
					st.min = lat
				}
				st.max = max(st.max, lat)
				st.sum += lat
				st.events++
				st.hist.Add(uint64(lat))
				if w.intervalNS > 0 {
					b := int(t.Now() / w.intervalNS)
					for len(st.ivEvents) <= b {
						st.ivEvents = append(st.ivEvents, 0)
						st.ivHist = append(st.ivHist, NewHist())
					}
					st.ivEvents[b]++
					st.ivHist[b].Add(uint64(lat))
				}
				step = 0
			case 5:
				st.end, st.exited = t.Now(), true
				return emu.Exit()
			}
		}
	})
}

// backend is a postgres backend's PostgresMain() loop: read a statement,
// execute it (COMMIT through the commit lock), send the result.
func (w *sysbenchBench) backend(i int, req, reply, lockReq, grant *emu.Sem) emu.Program {
	queryNS := sysbenchUSToNS(w.queryUS)
	step := 0
	commit := false
	return emu.ProgramFunc(func(t *emu.Task) emu.Action {
		for {
			switch step {
			case 0:
				step = 1
				return emu.Wait(req).With(hwmodel.OpSyscall).AfterWait(hwmodel.OpSockRecv)
			case 1:
				q := t.Stamp()
				if q == sysbenchClose {
					return emu.Exit()
				}
				commit = lockReq != nil && q == int64(w.queries-1)
				step = 2
				ns := queryNS
				if w.jitter > 0 {
					ns = int64(float64(queryNS) * (1 - w.jitter + 2*w.jitter*t.Rand().Float64()))
				}
				return emu.Run(max(ns, 1))
			case 2: // COMMIT: ask for the lock (a futex wake)...
				step = 4
				if commit {
					step = 3
					return emu.SignalStamp(lockReq, lockStamp(opLock, 0, i)).With(hwmodel.OpSyscall)
				}
			case 3: // ... and sleep until the critical section is done
				step = 4
				return emu.Wait(grant).With(hwmodel.OpSyscall)
			case 4:
				step = 0
				return emu.Signal(reply).With(hwmodel.OpSyscall, hwmodel.OpSockSend).WithSync()
			}
		}
	})
}

// Limit is a safety bound: the run ends when the last thread has
// finished its last transaction.
func (w *sysbenchBench) Limit() int64 { return 2*w.dur + 1_000_000_000 }

func (w *sysbenchBench) Done(*emu.Sim) bool {
	for i := range w.cli {
		if !w.cli[i].exited {
			return false
		}
	}
	return true
}

// sysbenchTotals are the merged thread counters.
type sysbenchTotals struct {
	events, sum, min, max int64
	elapsed               int64
	hist                  *Hist
}

func (w *sysbenchBench) totals(s *emu.Sim) sysbenchTotals {
	t := sysbenchTotals{hist: NewHist()}
	for i := range w.cli {
		c := &w.cli[i]
		if c.events > 0 && (t.events == 0 || c.min < t.min) {
			t.min = c.min
		}
		t.max = max(t.max, c.max)
		t.events += c.events
		t.sum += c.sum
		t.hist.Merge(c.hist)
		end := c.end
		if !c.exited {
			end = s.Now() // stopped early (Ctrl-C) or by the safety bound
		}
		t.elapsed = max(t.elapsed, end)
	}
	t.elapsed = max(t.elapsed, 1)
	return t
}

// sysbenchPct is sysbench's reported percentile in ms: the value of its
// latency histogram's bucket (sb_histogram.c: 1024 log-spaced buckets
// from 0.001 to 100000 ms, a value filed at the nearest bucket, 1.8%
// apart), here applied to the percentile hist.go finds (the midpoint of
// its 0.4%-wide bucket at rank ceil(n*p/100); sysbench ranks at
// round(n*p/100), which differs by at most one sample).
func sysbenchPct(h *Hist, p int) float64 {
	v, _ := h.Percentile(float64(p))
	ms := float64(v) / 1e6
	const size, lo, hi = 1024, 0.001, 100000.0
	deduct := math.Log(lo)
	mult := (size - 1) / (math.Log(hi) - deduct)
	i := math.Floor((math.Log(ms)-deduct)*mult + 0.5)
	i = min(max(i, 0), size-1)
	return math.Exp(i/mult + deduct)
}

// Report prints sysbench 1.0's cumulative report (db_report_cumulative()
// then sb_report_cumulative()).
func (w *sysbenchBench) Report(out io.Writer, s *emu.Sim) error {
	t := w.totals(s)
	secs := float64(t.elapsed) / 1e9
	reads, writes, other := t.events*int64(w.reads), t.events*int64(w.writes), t.events*int64(w.other)
	queries := reads + writes + other
	var b strings.Builder
	w.header(&b, s)
	if !w.Done(s) {
		fmt.Fprintf(&b, "sysbench: stopped early at %.4fs of the %gs run, before every thread finished; the statistics below cover that\n\n", float64(s.Now())/1e9, w.timeSec)
	}
	b.WriteString("SQL statistics:\n    queries performed:\n")
	fmt.Fprintf(&b, "        read:                            %d\n", reads)
	fmt.Fprintf(&b, "        write:                           %d\n", writes)
	fmt.Fprintf(&b, "        other:                           %d\n", other)
	fmt.Fprintf(&b, "        total:                           %d\n", queries)
	fmt.Fprintf(&b, "    transactions:                        %-6d (%.2f per sec.)\n", t.events, float64(t.events)/secs)
	fmt.Fprintf(&b, "    queries:                             %-6d (%.2f per sec.)\n", queries, float64(queries)/secs)
	fmt.Fprintf(&b, "    ignored errors:                      %-6d (%.2f per sec.)\n", 0, 0.0)
	fmt.Fprintf(&b, "    reconnects:                          %-6d (%.2f per sec.)\n", 0, 0.0)
	b.WriteString("\nGeneral statistics:\n")
	fmt.Fprintf(&b, "    total time:                          %.4fs\n", secs)
	fmt.Fprintf(&b, "    total number of events:              %d\n", t.events)
	b.WriteString("\nLatency (ms):\n")
	avg := 0.0
	if t.events > 0 {
		avg = float64(t.sum) / float64(t.events)
	}
	fmt.Fprintf(&b, "         min: %39.2f\n", float64(t.min)/1e6)
	fmt.Fprintf(&b, "         avg: %39.2f\n", avg/1e6)
	fmt.Fprintf(&b, "         max: %39.2f\n", float64(t.max)/1e6)
	if w.percentile > 0 {
		fmt.Fprintf(&b, "        %3dth percentile: %27.2f\n", w.percentile, sysbenchPct(t.hist, w.percentile))
	} else {
		b.WriteString("         percentile stats:               disabled\n")
	}
	fmt.Fprintf(&b, "         sum: %39.2f\n", float64(t.sum)/1e6)
	// Threads fairness: events and execution time per thread.
	n := float64(w.n)
	evAvg := float64(t.events) / n
	timeAvg := float64(t.sum) / 1e9 / n
	var evVar, timeVar float64
	for i := range w.cli {
		d := evAvg - float64(w.cli[i].events)
		evVar += d * d
		d = timeAvg - float64(w.cli[i].sum)/1e9
		timeVar += d * d
	}
	b.WriteString("\nThreads fairness:\n")
	fmt.Fprintf(&b, "    events (avg/stddev):           %.4f/%3.2f\n", evAvg, math.Sqrt(evVar/n))
	fmt.Fprintf(&b, "    execution time (avg/stddev):   %.4f/%3.2f\n\n", timeAvg, math.Sqrt(timeVar/n))
	_, err := io.WriteString(out, b.String())
	return err
}

// Metrics: tps (transactions per second over the total time) is the
// primary metric, as lkp's postgres_sysbench reports it.
func (w *sysbenchBench) Metrics(s *emu.Sim) Metrics {
	t := w.totals(s)
	secs := float64(t.elapsed) / 1e9
	v := map[string]float64{
		"tps":          float64(t.events) / secs,
		"qps":          float64(t.events) * float64(w.queries) / secs,
		"transactions": float64(t.events),
		"threads":      float64(w.n),
		"total_sec":    secs,
	}
	if t.events > 0 {
		v["latency_avg_ms"] = float64(t.sum) / float64(t.events) / 1e6
		v["latency_max_ms"] = float64(t.max) / 1e6
		if w.percentile > 0 {
			v[fmt.Sprintf("latency_p%d_ms", w.percentile)] = sysbenchPct(t.hist, w.percentile)
		}
	}
	return Metrics{Primary: "tps", HigherIsBetter: true, Values: v}
}

// sysbenchArgs takes sysbench's positional arguments, "[testname]
// [command]": the test is oltp_read_write (or a path to its .lua), the
// command run.
func sysbenchArgs(args []string) error {
	for i, a := range args {
		switch {
		case i == 0 && strings.TrimSuffix(a[strings.LastIndex(a, "/")+1:], ".lua") == "oltp_read_write":
		case i == 1 && a == "run":
		case i == 0:
			return flagErr("-workload sysbench", "test %q is not emulated (allowed: oltp_read_write, then the command run)", a)
		case i == 1:
			return flagErr("-workload sysbench", "command %q is not emulated (allowed: run; prepare and cleanup have nothing to do here)", a)
		default:
			return flagErr("-workload sysbench", "unexpected argument %q after the test and the command (allowed: oltp_read_write run)", a)
		}
	}
	return nil
}

// sysbenchVersion is the banner's first line (main()'s "%s (using %s
// %s)": VERSION_STRING, a bundled LuaJIT and its version).
const sysbenchVersion = "sysbench 1.0.20 (using bundled LuaJIT 2.1.0-beta3)"

// header is what sysbench prints before its report: the banner,
// print_run_mode() (with --rand-seed 0, the default), the worker
// threads' start and the intermediate reports of report_thread_proc(),
// one every interval that ended before the last thread did.
func (w *sysbenchBench) header(b *strings.Builder, s *emu.Sim) {
	fmt.Fprintf(b, "%s\n\n", sysbenchVersion)
	b.WriteString("Running the test with following options:\n")
	fmt.Fprintf(b, "Number of threads: %d\n", w.n)
	if w.intervalNS > 0 {
		fmt.Fprintf(b, "Report intermediate results every %s second(s)\n", sysbenchSecs(w.interval))
	}
	b.WriteString("Initializing random number generator from current time\n\n\n")
	b.WriteString("Initializing worker threads...\n\n")
	b.WriteString("Threads started!\n\n")
	if w.intervalNS <= 0 {
		return
	}
	end := w.totals(s).elapsed
	sec := float64(w.intervalNS) / 1e9
	for k := 1; int64(k)*w.intervalNS < end; k++ {
		at := int64(k) * w.intervalNS
		var events int64
		running := 0
		h := NewHist()
		for i := range w.cli {
			c := &w.cli[i]
			if !c.exited || c.end > at {
				running++
			}
			if k-1 < len(c.ivEvents) {
				events += c.ivEvents[k-1]
				h.Merge(c.ivHist[k-1])
			}
		}
		lat := 0.0
		if events > 0 && w.percentile > 0 {
			lat = sysbenchPct(h, w.percentile)
		}
		r, wr, o := float64(events*int64(w.reads)), float64(events*int64(w.writes)), float64(events*int64(w.other))
		// log_timestamp()'s "[ %.0fs ] " and db_report_intermediate().
		fmt.Fprintf(b, "[ %ss ] thds: %d tps: %4.2f qps: %4.2f (r/w/o: %4.2f/%4.2f/%4.2f) lat (ms,%d%%): %4.2f err/s: %4.2f reconn/s: %4.2f\n",
			sysbenchSecs(float64(at)/1e9), running, float64(events)/sec, (r+wr+o)/sec, r/sec, wr/sec, o/sec,
			w.percentile, lat, 0.0, 0.0)
	}
}

// sysbenchSecs prints a time in seconds as sysbench does (%d, %.0f) when
// it is whole, else with the digits it needs (a fraction of a second,
// which the real tool's integer --report-interval cannot give).
func sysbenchSecs(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
