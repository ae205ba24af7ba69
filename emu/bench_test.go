package emu

import (
	"fmt"
	"testing"
)

// Benchmarks of the fair class's operations on one runqueue of n
// entities, with the full machinery (PELT, group hierarchy, logging,
// costs). Host ns per operation; run without -race.

func benchSim(b *testing.B, n int, group bool) (*Sim, []*Task) {
	s, err := New(Config{Machine: machine(b, "hikey-8"), Features: mustFeatures(b, "v6.6-eevdf"), Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	var g *TaskGroup
	if group {
		g, _ = s.NewGroup("docker", nil, 100)
	}
	var ts []*Task
	for i := 0; i < n; i++ {
		ts = append(ts, mustTask(b, s, TaskSpec{Comm: "hog", CPU: 0, Group: g, Prog: Hog(), Nice: i % 5}))
	}
	s.Run(50 * ms)
	return s, ts
}

func waiting(s *Sim, ts []*Task) *Task {
	for _, t := range ts {
		if t.state == TaskRunnable && s.RQ(0).curr != t {
			return t
		}
	}
	return nil
}

func BenchmarkFair(b *testing.B) {
	for _, n := range []int{1, 8, 64, 1024} {
		for _, group := range []bool{false, true} {
			name := fmt.Sprintf("n=%d/root", n)
			if group {
				name = fmt.Sprintf("n=%d/group", n)
			}
			b.Run(name+"/enqueue+dequeue", func(b *testing.B) {
				s, ts := benchSim(b, n+1, group)
				rq := s.RQ(0)
				p := waiting(s, ts)
				rq.enterKernel()
				for b.Loop() {
					rq.lockRQ(SymSchedule)
					rq.dequeueTask(p, dequeueSave)
					rq.enqueueTask(p, enqueueRestore)
					rq.unlockRQ(SymSchedule)
					if rq.log.Len() > 1<<16 {
						rq.log.Reset()
					}
				}
			})
			b.Run(name+"/pick", func(b *testing.B) {
				s, ts := benchSim(b, n, group)
				rq := s.RQ(0)
				rq.enterKernel()
				prev := rq.curr
				_ = ts
				for b.Loop() {
					next := rq.pickNextTaskFair(prev)
					if next != prev {
						prev.state, next.state = TaskRunnable, TaskRunning
						rq.curr = next
						prev = next
					}
					if rq.log.Len() > 1<<16 {
						rq.log.Reset()
					}
				}
			})
			b.Run(name+"/tick", func(b *testing.B) {
				s, _ := benchSim(b, n, group)
				rq := s.RQ(0)
				rq.enterKernel()
				for b.Loop() {
					rq.schedTick()
					rq.needResched = false
					if rq.log.Len() > 1<<16 {
						rq.log.Reset()
					}
				}
			})
		}
	}
}

// pingPong builds n pairs of tasks on cpu that wake each other in turn,
// as perf bench sched pipe does: each computes work ns, wakes its peer
// and blocks.
func pingPong(tb testing.TB, s *Sim, cpu, n int, work int64, g *TaskGroup) {
	for i := 0; i < n; i++ {
		pingPongPair(tb, s, cpu, cpu, work, g, mustTask)
	}
}

// BenchmarkRun reports the engine's speed on one CPU: virtual µs per host
// second and context switches per host second, for 8 ping-pong pairs in
// a task group.
func BenchmarkRun(b *testing.B) {
	var switches int64
	for b.Loop() {
		b.StopTimer()
		s, err := New(Config{Machine: machine(b, "hikey-8"), Features: mustFeatures(b, "v6.6-eevdf"), Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		g, _ := s.NewGroup("docker", nil, 100)
		pingPong(b, s, 0, 8, 5_000, g)
		b.StartTimer()
		s.Run(100 * ms)
		switches += s.RQ(0).Stats.NrSwitches
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)*100_000/sec, "virtual-us/host-s")
	b.ReportMetric(float64(switches)/sec, "switches/host-s")
}
