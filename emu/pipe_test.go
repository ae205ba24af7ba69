package emu

import (
	"fmt"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// pipeOutcome is what a pipe scenario's lines and writers saw.
type pipeOutcome struct {
	writes       int64
	lockWaits    int64   // Lock requests on the pipes' mutex lines that found the mutex held
	mutexStallNS float64 // weave stall at mutex_lock (the writers' and the readers')
	ownerStallNS float64 // ... at mutex_spin_on_owner: waits at the head of the mutex's queue
	osqStallNS   float64 // ... at osq_lock: waits behind another waiter
	writerNS     float64 // the writers' virtual time per write (their finish over their writes)
	mutexMoves   int64   // transfers of the pipes' line 0 (mutex, rd_wait)
	mutexInvals  int64   // copies of the pipes' line 0 invalidated by stores
	dataMoves    int64   // transfers of the pipes' data page lines
	heldNS       float64 // the pipes' mutexes held, summed over the critical sections
	releases     int64   // the critical sections (mutex_unlock()s)
	symNS        map[string]int64
}

// pipeScenario runs, on spr-2s (CPUs 0-55: socket 0's cores), pipes each
// read by one reader and written by writers that send perWriter 100-byte
// messages each, a 100 ns copy_from_user() before every write; readers
// copy each message out (30 ns). cpus[i] lists pipe i's reader's CPU,
// then its writers' CPUs. It runs until every task has exited.
func pipeScenario(t *testing.T, cpus [][]int, perWriter int) pipeOutcome {
	t.Helper()
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	var pipes []*Pipe
	var tasks []*Task
	for i, c := range cpus {
		data := NewSem(fmt.Sprintf("pipe%d", i), 0)
		p, err := s.NewPipe(PipeSpec{Name: data.Name, Data: data, Writers: len(c) - 1, Size: 100, CPU: c[0]})
		if err != nil {
			t.Fatal(err)
		}
		pipes = append(pipes, p)
		total, n, copied := (len(c)-1)*perWriter, 0, true
		recv, out := Wait(data).OnPipe(p, PipeReadWait, 0), Run(30).OnPipe(p, PipeCopyOut, 0)
		mustTask(t, s, TaskSpec{Comm: "reader", CPU: c[0], Sems: []*Sem{data}, Prog: ProgramFunc(func(*Task) Action {
			switch {
			case !copied:
				copied = true
				return out
			case n == total:
				return Exit()
			}
			n, copied = n+1, false
			return recv
		})})
		for w, cpu := range c[1:] {
			write, k := Signal(data).WithSync().OnPipe(p, PipeWrite, w), 0
			tasks = append(tasks, mustTask(t, s, TaskSpec{Comm: "writer", CPU: cpu, Prog: ProgramFunc(func(*Task) Action {
				switch {
				case k == 2*perWriter:
					return Exit()
				case k%2 == 0:
					k++
					return Run(100) // copy_from_user()
				}
				k++
				return write
			})}))
		}
	}
	if !s.RunUntil(200*ms, func() bool { return s.Live() == 0 }) {
		for _, x := range s.tasks {
			if x.state != TaskDead {
				rq := s.cpus[x.cpu]
				t.Logf("live %v state %v waiting %v cpu %d curr %v parked %+v now %d", x, x.state, x.waitingOn, x.cpu, rq.curr, rq.parked, rq.now)
				for _, sm := range []*Sem{x.sem, x.waitingOn} {
					if sm == nil {
						continue
					}
					t.Logf("  sem %v pending %d", sm, sm.Pending())
				}
			}
		}
		t.Fatalf("%d tasks still live after 200 ms", s.Live())
	}
	var o pipeOutcome
	sst := s.space.Stats()
	for _, p := range pipes {
		l0 := sst.Lines[p.info[pipeLine0]]
		o.lockWaits += l0.LockWaits
		o.heldNS += l0.HeldNS
		o.releases += l0.Releases
		o.mutexMoves += l0.TotalTransfers()
		o.mutexInvals += l0.Invalidations
		for _, l := range p.frames {
			o.dataMoves += sst.Lines[l].TotalTransfers()
		}
	}
	o.mutexStallNS = sst.Sites[s.sites[SymMutexLock]].StallNS
	o.ownerStallNS = sst.Sites[s.sites[SymMutexSpinOnOwner]].StallNS
	o.osqStallNS = sst.Sites[s.sites[SymOSQLock]].StallNS
	o.symNS = map[string]int64{}
	for _, n := range []string{"vfs_write", "pipe_write", "file_update_time", "vfs_read", "pipe_read", "touch_atime"} {
		o.symNS[n] = s.SymbolNS(n)
	}
	for _, w := range tasks {
		o.writes += int64(perWriter)
		o.writerNS += float64(w.SumExecRuntime())
	}
	o.writerNS /= float64(o.writes)
	return o
}

// TestPipeMutexContention: fs/pipe.c pipe_write() (v6.6) takes the pipe's
// mutex (__pipe_lock()) for its body, so N writers on N CPUs writing into
// one pipe queue on it: the mutex wait and each write's cost grow with N.
// pipe_read() takes the same mutex, and moves the same lines back. The
// waits are kernel/locking/mutex.c's optimistic spin (v6.6: the owner
// runs its critical section, which does not sleep), which perf charges to
// mutex_spin_on_owner (the first waiter) and osq_lock (the others), not to
// mutex_lock: mutex_lock keeps the fast path and the transfer that takes
// the lock.
func TestPipeMutexContention(t *testing.T) {
	perWrite := map[int]float64{}
	wait := map[int]float64{}
	for _, n := range []int{1, 4, 16} {
		c := []int{0}
		for w := 1; w <= n; w++ {
			c = append(c, w)
		}
		o := pipeScenario(t, [][]int{c}, 300)
		t.Logf("%d writers: %+v", n, o)
		perWrite[n] = o.writerNS
		spin := o.ownerStallNS + o.osqStallNS
		wait[n] = (o.mutexStallNS + spin) / float64(o.writes)
		if n == 16 && o.lockWaits < o.writes/2 {
			t.Errorf("16 writers: %d of %d writes found the mutex held, want most", o.lockWaits, o.writes)
		}
		if n == 16 && (spin < 4*o.mutexStallNS || o.ownerStallNS == 0 || o.osqStallNS == 0) {
			t.Errorf("16 writers: %.0f ns at mutex_lock, %.0f at mutex_spin_on_owner, %.0f at osq_lock: want the waits in the spin", o.mutexStallNS, o.ownerStallNS, o.osqStallNS)
		}
	}
	if wait[16] < 3*wait[4] || wait[4] < 2*wait[1] {
		t.Errorf("mutex_lock stall per write %.0f / %.0f / %.0f ns with 1 / 4 / 16 writers: want it to grow with the writers queued on the mutex", wait[1], wait[4], wait[16])
	}
	if perWrite[16] < 3*perWrite[1] {
		t.Errorf("a write costs %.0f ns with 1 writer, %.0f ns with 16: want the queue on the mutex to slow every writer", perWrite[1], perWrite[16])
	}
}

// TestPipeSpinnerReadsOwner: the head of a pipe mutex's queue spins
// reading lock->owner (kernel/locking/mutex.c v6.6:
// mutex_spin_on_owner(), __mutex_trylock_or_owner()), so it holds a copy
// of the mutex's line: the owner's mutex_unlock() (__mutex_unlock_fast(),
// a cmpxchg) invalidates it, and the spinner reads the released owner
// (a transfer) before its own cmpxchg takes the line (another
// invalidation). So every Lock that finds the mutex held costs the line
// about two invalidations, with one writer (whose reader takes the same
// mutex) as with sixteen on socket 0; before weave.Replayer.spinnerRead
// the line had none (1 and 0), and a write with sixteen writers cost
// 4786 ns instead of 6152.
func TestPipeSpinnerReadsOwner(t *testing.T) {
	c := []int{0}
	for w := 1; w <= 16; w++ {
		c = append(c, w)
	}
	for _, x := range []struct {
		name string
		cpus []int
	}{{"1 writer", []int{0, 1}}, {"16 writers", c}} {
		o := pipeScenario(t, [][]int{x.cpus}, 300)
		t.Logf("%s: %d releases, %d found the mutex held; line 0: %d transfers, %d invalidations; %.0f ns a write",
			x.name, o.releases, o.lockWaits, o.mutexMoves, o.mutexInvals, o.writerNS)
		if o.lockWaits < o.releases/10 {
			t.Fatalf("%s: %d of %d Locks found the mutex held: the scenario has no spinner", x.name, o.lockWaits, o.releases)
		}
		if per := float64(o.mutexInvals) / float64(o.lockWaits); per < 1.5 || per > 2.5 {
			t.Errorf("%s: %d invalidations of line 0 over %d contended Locks (%.2f each): want ~2, the release's and the spinner's cmpxchg",
				x.name, o.mutexInvals, o.lockWaits, per)
		}
	}
}

// TestPipeLinesMove: one writer and one reader on two CPUs (perf bench
// sched pipe's shape, one way): every pipe_write() takes the pipe's line
// 0 (the mutex, and rd_wait.lock to wake the reader) and the data lines
// from the reader's CPU, and every pipe_read() takes them back. On one
// CPU the lines stay put.
func TestPipeLinesMove(t *testing.T) {
	const msgs = 500
	two := pipeScenario(t, [][]int{{0, 1}}, msgs)
	one := pipeScenario(t, [][]int{{0, 0}}, msgs)
	t.Logf("two CPUs: %+v; one CPU: %+v", two, one)
	// (Fewer than two a message: a side that finds the other behind
	// takes the mutex twice in a row.)
	if two.mutexMoves < msgs {
		t.Errorf("two CPUs: the mutex line moved %d times for %d messages, want at least once per message", two.mutexMoves, msgs)
	}
	if two.dataMoves < msgs*9/10 {
		t.Errorf("two CPUs: the data lines moved %d times for %d messages, want at least once per message", two.dataMoves, msgs)
	}
	if one.mutexMoves > 0 || one.dataMoves > 0 {
		t.Errorf("one CPU: the mutex line moved %d times, the data lines %d; want none", one.mutexMoves, one.dataMoves)
	}
	if two.writerNS <= one.writerNS {
		t.Errorf("a write costs %.0f ns across two CPUs, %.0f on one: want the transfers to cost", two.writerNS, one.writerNS)
	}
}

// TestPipeSeparatePipes: writers to separate pipes share no line (each
// pipe_inode_info, bufs[] and page is its own), so eight writer/reader
// pairs each on their own pipe cost what one pair does, where eight
// writers into one pipe queue on its mutex.
func TestPipeSeparatePipes(t *testing.T) {
	const msgs = 300
	single := pipeScenario(t, [][]int{{0, 1}}, msgs)
	var pairs [][]int
	for i := range 8 {
		pairs = append(pairs, []int{2 * i, 2*i + 1})
	}
	apart := pipeScenario(t, pairs, msgs)
	shared := pipeScenario(t, [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8}}, msgs)
	t.Logf("one pair: %+v; eight pairs: %+v; eight writers, one pipe: %+v", single, apart, shared)
	if d := apart.writerNS / single.writerNS; d < 0.8 || d > 1.25 {
		t.Errorf("a write costs %.0f ns with eight separate pipes, %.0f with one: want the same", apart.writerNS, single.writerNS)
	}
	if shared.writerNS < 2*apart.writerNS {
		t.Errorf("a write costs %.0f ns with eight writers on one pipe, %.0f on eight pipes: want the shared mutex to cost", shared.writerNS, apart.writerNS)
	}
}

// TestPipeCriticalSection: pipe_write() and pipe_read() (fs/pipe.c, v6.6)
// hold pipe->mutex only for their own bodies and copies: the VFS layer
// before __pipe_lock() (vfs_write(), vfs_read(): rw_verify_area(),
// security_file_permission(), ...) and the timestamps after
// __pipe_unlock() (file_update_time(), file_accessed()) run outside it.
// With the writer and the reader on one CPU (no transfers, no waits) the
// mutex is held, per message, for the two bodies only, and each phase is
// charged to its own function.
func TestPipeCriticalSection(t *testing.T) {
	const msgs = 400
	o := pipeScenario(t, [][]int{{0, 0}}, msgs)
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	w, r := s.m.Cost(hwmodel.OpPipeWrite), s.m.Cost(hwmodel.OpPipeRead)
	part := func(total int64, f float64) int64 { return int64(float64(total)*f + 0.5) }
	under := func(total int64) int64 {
		return total - part(total, pipeCostBefore) - part(total, pipeCostAfter)
	}
	body := float64(under(w) + under(r))
	held := o.heldNS / float64(o.writes)
	t.Logf("%+v: held %.1f ns a message, the bodies %.0f ns, the whole costs %d ns", o, held, body, w+r)
	// Inside the hold besides the bodies: rd_wait.lock's locked RMWs
	// (a new buffer's head, a released one's tail) and the reader's
	// empty passes. Less: a step the barrier runs (a parked action,
	// hold.go) logs its accesses without the clock moving, its costs
	// paid later as debt, so its critical section counts 0 ns here
	// (simplified there, not here).
	if held < 0.75*body || held > body+4*s.m.Lat.RMWLocal+20 {
		t.Errorf("the mutex is held %.1f ns a message, want the bodies' %.0f ns (of %d ns in all)", held, body, w+r)
	}
	for _, c := range []struct {
		sym   string
		total int64
		f     float64
	}{
		{"vfs_write", w, pipeCostBefore}, {"file_update_time", w, pipeCostAfter},
		{"vfs_read", r, pipeCostBefore}, {"touch_atime", r, pipeCostAfter},
	} {
		// Plus the first access's fill of the inode's line.
		if got, want := o.symNS[c.sym], msgs*part(c.total, c.f); got < want || float64(got) > float64(want)+s.m.Lat.MemRemote {
			t.Errorf("%s: %d ns for %d messages, want %d", c.sym, got, msgs, want)
		}
	}
}

// TestPipeCopyOutOverlaps: pipe_read()'s copy_page_to_iter() (v6.6: via
// copy_user_enhanced_fast_string's rep movsb on x86) loads the message's
// lines at addresses that do not depend on each other, so an out-of-order
// core overlaps their misses (the weave's independent loads, up to the
// preset's MLP): a 1 KiB message, 16 lines the writer's CPU wrote, costs
// the reader a few transfers, not 16 in a row.
func TestPipeCopyOutOverlaps(t *testing.T) {
	const msgs = 100
	s, p := pipeMessages(t, msgs)
	var moved int64
	sst := s.space.Stats()
	for _, l := range p.frames {
		moved += sst.Lines[l].TotalTransfers()
	}
	perMsg := sst.Sites[s.sites[SymPipeRead]].StallNS / msgs
	x := s.m.Lat.Transfer[hwmodel.ClassLLC]
	t.Logf("%d data-line transfers for %d messages; pipe_read stalls %.0f ns a message (an LLC transfer %.1f ns)", moved, msgs, perMsg, x)
	if moved < msgs*16*9/10 {
		t.Fatalf("the data lines moved %d times for %d 16-line messages: want (nearly) each line each message", moved, msgs)
	}
	if perMsg > 8*x {
		t.Errorf("pipe_read stalls %.0f ns a message, %.1f transfers: want the 16 lines' misses overlapped", perMsg, perMsg/x)
	}
}

// TestPipeUnlockDrains: pipe_write()'s stores (the buffer, the data copy)
// retire into the writer's store buffer, and __pipe_unlock()'s
// mutex_unlock() (__mutex_unlock_fast(): a lock cmpxchg) drains it, so
// the stores' misses are paid at mutex_unlock, not at each store nor at a
// later lock. The writer's 1 KiB messages store into 16 lines the reader's
// copy-out last read.
func TestPipeUnlockDrains(t *testing.T) {
	const msgs = 100
	s, _ := pipeMessages(t, msgs)
	sst := s.space.Stats()
	unlock := sst.Sites[s.sites[SymMutexUnlock]].StallNS / msgs
	write1 := sst.Sites[s.sites[SymPipeWrite]].StallNS / msgs
	x := s.m.Lat.Transfer[hwmodel.ClassLLC]
	t.Logf("a message: mutex_unlock stalls %.0f ns, pipe_write %.0f ns (an LLC transfer %.1f ns)", unlock, write1, x)
	if unlock < x/2 {
		t.Errorf("mutex_unlock stalls %.0f ns a message: want the drain of pipe_write's stores (about a transfer, %.1f ns)", unlock, x)
	}
	// What pipe_write() still stalls on are its loads: the mutex's line
	// and head/tail for was_empty (pipe_empty(), fs/pipe.c), about two
	// transfers; with every store blocking it is ~22.
	if write1 > 3*x {
		t.Errorf("pipe_write stalls %.0f ns a message, %.1f transfers: want its stores buffered", write1, write1/x)
	}
}

// pipeMessages runs msgs 1 KiB messages over a spr-2s pipe (v6.6-eevdf),
// the writer on CPU 1 and the reader on CPU 0 copying each one out before
// it waits for the next; the writer runs 2 us between messages, so the
// reader keeps up: one message at a time.
func pipeMessages(t *testing.T, msgs int) (*Sim, *Pipe) {
	t.Helper()
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	data := NewSem("pipe", 0)
	p, err := s.NewPipe(PipeSpec{Name: "pipe", Data: data, Writers: 1, Size: 1024, CPU: 0})
	if err != nil {
		t.Fatal(err)
	}
	n, copied := 0, true
	recv, out := Wait(data).OnPipe(p, PipeReadWait, 0), Run(30).OnPipe(p, PipeCopyOut, 0)
	mustTask(t, s, TaskSpec{Comm: "reader", CPU: 0, Sems: []*Sem{data}, Prog: ProgramFunc(func(*Task) Action {
		switch {
		case !copied:
			copied = true
			return out
		case n == msgs:
			return Exit()
		}
		n, copied = n+1, false
		return recv
	})})
	write, k := Signal(data).WithSync().OnPipe(p, PipeWrite, 0), 0
	mustTask(t, s, TaskSpec{Comm: "writer", CPU: 1, Prog: ProgramFunc(func(*Task) Action {
		switch {
		case k == 2*msgs:
			return Exit()
		case k%2 == 0:
			k++
			return Run(2000)
		}
		k++
		return write
	})})
	if !s.RunUntil(200*ms, func() bool { return s.Live() == 0 }) {
		t.Fatalf("%d tasks still live after 200 ms", s.Live())
	}
	return s, p
}

// TestPipeWriteFindsEmpty: pipe_write()'s was_empty is
// pipe_empty(head, pipe->tail) (fs/pipe.c, v5.15 and v6.6), whatever the
// reader is doing. A reader on CPU 0 copies each 100-byte message out,
// hands the writer on CPU 1 a go (a semaphore of its own) and runs 20 us
// before its next read(), so every write finds the pipe empty and the
// reader running: each starts a buffer of its own (pipe->head++ under
// rd_wait.lock), and each read releases it (pipe->tail++), two stores to
// line 1 a message. Before, the writer took the reader's state for the
// pipe's (a running reader: not empty) and merged every message into
// the page of its turn, storing head only once a page.
func TestPipeWriteFindsEmpty(t *testing.T) {
	const msgs = 100
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	data, goSem := NewSem("pipe", 0), NewSem("go", 0)
	p, err := s.NewPipe(PipeSpec{Name: "pipe", Data: data, Writers: 1, Size: 100, CPU: 0})
	if err != nil {
		t.Fatal(err)
	}
	n, step := 0, 0
	recv := Wait(data).OnPipe(p, PipeReadWait, 0)
	out := Signal(goSem).OnPipe(p, PipeCopyOut, 0)
	mustTask(t, s, TaskSpec{Comm: "reader", CPU: 0, Sems: []*Sem{data}, Prog: ProgramFunc(func(*Task) Action {
		step++
		switch {
		case step%3 == 2:
			return out
		case step%3 == 0:
			return Run(20 * us)
		case n == msgs:
			return Exit()
		}
		n++
		return recv
	})})
	write, k := Signal(data).WithSync().OnPipe(p, PipeWrite, 0), 0
	mustTask(t, s, TaskSpec{Comm: "writer", CPU: 1, Sems: []*Sem{goSem}, Prog: ProgramFunc(func(*Task) Action {
		switch {
		case k == 2*msgs-1:
			return Exit()
		case k%2 == 1:
			k++
			return Wait(goSem)
		}
		k++
		return write
	})})
	if !s.RunUntil(200*ms, func() bool { return s.Live() == 0 }) {
		t.Fatalf("%d tasks still live after 200 ms", s.Live())
	}
	stores := s.space.Stats().Lines[p.info[pipeLine1]].Ops[hwmodel.Write]
	t.Logf("%d stores to head+tail for %d messages", stores, msgs)
	if stores < 2*msgs {
		t.Errorf("%d stores to the head+tail line for %d messages into an empty pipe: want pipe->head++ and pipe->tail++ for each", stores, msgs)
	}
}
