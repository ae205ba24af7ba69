package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// fileWriters runs n tasks, one per CPU of spr-2s's first socket, each
// making msgs write()s: 2 us of user code, then the syscall's entry (its
// base cost; with shared, an FdGet of one struct file) and 500 ns in the
// kernel, then its return (with shared, an FdPut). It returns the Sim and
// the file.
func fileWriters(t *testing.T, n, msgs int, shared bool) (*Sim, *File) {
	t.Helper()
	s := newSim(t, "spr-2s", "v6.6-eevdf")
	f, err := s.NewFile("out", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		enter, leave := Run(500).With(hwmodel.OpSyscall), Run(100)
		if shared {
			enter, leave = enter.FdGet(f), leave.FdPut(f)
		}
		k := 0
		mustTask(t, s, TaskSpec{Comm: "writer", CPU: i, Prog: ProgramFunc(func(*Task) Action {
			k++
			switch {
			case k > 3*msgs:
				return Exit()
			case k%3 == 1:
				return Run(2000)
			case k%3 == 2:
				return enter
			}
			return leave
		})})
	}
	if !s.RunUntil(100*ms, func() bool { return s.Live() == 0 }) {
		t.Fatalf("%d tasks still live after 100 ms", s.Live())
	}
	return s, f
}

// TestSharedFileRefBounces: threads writing one descriptor of a shared
// table take and drop a reference on its struct file at every syscall
// (fs/file.c v6.6 __fget_light() -> __fget_files() -> get_file_rcu();
// fput()), so its f_count line moves between their CPUs: with 8 writers
// nearly every one of the 2 x 8 x 200 RMWs is a transfer, charged to
// __fget_light and fput. One writer keeps the line (one first fill), and
// processes (no FdGet/FdPut: files->count == 1, __fget_light() takes no
// reference) log nothing on it.
func TestSharedFileRefBounces(t *testing.T) {
	const msgs = 200
	s, f := fileWriters(t, 8, msgs, true)
	ls, _ := s.space.LineStat(f.line)
	var transfers int64
	for _, n := range ls.Transfers {
		transfers += n
	}
	sst := s.space.Stats()
	get, put := sst.Sites[s.sites[SymFgetLight]].StallNS, sst.Sites[s.sites[SymFput]].StallNS
	t.Logf("8 writers: %d RMWs, %d transfers, stall %.0f ns in __fget_light, %.0f ns in fput", ls.Ops[hwmodel.RMW], transfers, get, put)
	if ls.Ops[hwmodel.RMW] != 2*8*msgs {
		t.Errorf("%d RMWs on f_count, want 2 per syscall: %d", ls.Ops[hwmodel.RMW], 2*8*msgs)
	}
	if transfers < 8*msgs {
		t.Errorf("%d transfers of f_count for %d syscalls by 8 CPUs: want at least one a syscall", transfers, 8*msgs)
	}
	if x := s.m.Lat.Transfer[hwmodel.ClassLLC]; get+put < float64(8*msgs)*x/2 {
		t.Errorf("__fget_light and fput stall %.0f ns for %d syscalls: want about a transfer (%.1f ns) each", get+put, 8*msgs, x)
	}
	s1, f1 := fileWriters(t, 1, msgs, true)
	ls1, _ := s1.space.LineStat(f1.line)
	var t1 int64
	for _, n := range ls1.Transfers {
		t1 += n
	}
	if t1 > 0 || ls1.Ops[hwmodel.RMW] != 2*msgs {
		t.Errorf("one writer: %d transfers of f_count over %d RMWs, want none over %d", t1, ls1.Ops[hwmodel.RMW], 2*msgs)
	}
	sp, fp := fileWriters(t, 8, msgs, false)
	if lp, _ := sp.space.LineStat(fp.line); lp.Accesses != 0 {
		t.Errorf("processes: %d accesses of f_count, want none", lp.Accesses)
	}
}
