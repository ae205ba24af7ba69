package emu

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
	gold "github.com/rqemu/rqemu/internal/golden"
)

// golden compares got with testdata/<name> (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { gold.Check(t, name, got) }

func machine(t testing.TB, name string) *hwmodel.Machine {
	t.Helper()
	m, err := hwmodel.Load(name, hwmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustFeatures(t testing.TB, spec string) Features {
	t.Helper()
	f, _, err := ParseFeatures(spec)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// newSim builds a checked, serial-driver machine (the drivers agree; see
// TestDriversAgree).
func newSim(t testing.TB, topo, feat string) *Sim {
	t.Helper()
	s, err := New(Config{Machine: machine(t, topo), Features: mustFeatures(t, feat), Seed: 1, Check: true, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustTask creates a task pinned to its CPU (unless the spec gives an
// affinity): the single-CPU scenarios must not be spread by load
// balancing. spawn creates one free to move.
func mustTask(t testing.TB, s *Sim, spec TaskSpec) *Task {
	t.Helper()
	if spec.CPUs == nil {
		spec.CPUs = []int{spec.CPU}
	}
	return spawn(t, s, spec)
}

func spawn(t testing.TB, s *Sim, spec TaskSpec) *Task {
	t.Helper()
	p, err := s.NewTask(spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const ms = int64(nsecPerMsec)

// signaler starts a sender on cpu that computes for signalAt ns, signals
// sem (calling atSend first, when given) and blocks; the returned
// pointer holds the signal's time once it is sent.
func signaler(t testing.TB, s *Sim, cpu int, signalAt int64, sem *Sem, atSend func()) *int64 {
	t.Helper()
	sent, step := new(int64), 0
	mustTask(t, s, TaskSpec{Comm: "sender", CPU: cpu, Prog: ProgramFunc(func(*Task) Action {
		step++
		switch step {
		case 1:
			return Run(signalAt)
		case 2:
			*sent = s.cpus[cpu].now
			if atSend != nil {
				atSend()
			}
			return Action{Op: ActSignal, Sem: sem}
		}
		return Block()
	})})
	return sent
}

// pipePair spawns perf bench sched pipe's two tasks on CPUs 7 and 8 of s,
// each writing the other's pipe and then sleeping in its own read, for
// trips round trips; task i sets done[i] (if not nil) to its clock when it
// has made them, and blocks.
func pipePair(t testing.TB, s *Sim, trips int, done *[2]int64) [2]*Task {
	t.Helper()
	var sems [2]*Sem
	var pipes [2]*Pipe
	for i := range 2 {
		sems[i] = NewSem("pipe"+string(rune('0'+i)), 0)
		p, err := s.NewPipe(PipeSpec{Name: sems[i].Name, Data: sems[i], Writers: 1, Size: 4, CPU: 7 + i})
		if err != nil {
			t.Fatal(err)
		}
		pipes[i] = p
	}
	var tasks [2]*Task
	for i := range 2 {
		rd, wr := pipes[i], pipes[1-i]
		read := Wait(sems[i]).With(hwmodel.OpSyscall).OnPipe(rd, PipeReadWait, 0)
		first := Signal(sems[1-i]).With(hwmodel.OpSyscall).WithSync().OnPipe(wr, PipeWrite, 0)
		write := Signal(sems[1-i]).With(hwmodel.OpSyscall).WithSync().OnPipe(rd, PipeCopyOut, 0).OnPipe(wr, PipeWrite, 0)
		n := 0
		tasks[i] = mustTask(t, s, TaskSpec{Comm: "sched-pipe", CPU: 7 + i, Sems: []*Sem{sems[i]}, Prog: ProgramFunc(func(tk *Task) Action {
			if n == 2*trips {
				if done != nil && done[i] == 0 {
					done[i] = tk.Now()
				}
				return Block()
			}
			isWrite := (n+i)%2 == 0
			n++
			switch {
			case isWrite && n == 1:
				return first
			case isWrite:
				return write
			}
			return read
		})})
	}
	return tasks
}
