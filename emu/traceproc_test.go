package emu

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTraceStatRuntime: update_curr() logs sched_stat_runtime for every
// task entity it charges, so over a run traced whole the runtimes of a
// task's events add up to its se.sum_exec_runtime exactly; the event has
// vruntime to v6.7 and not from v6.8 (5fe6ec8f6ab5), and is logged in the
// task's own context.
func TestTraceStatRuntime(t *testing.T) {
	ev := regexp.MustCompile(`^\s*(.+)-(\d+)\s+\[(\d+)\] \S{5}\s+\S+: sched_stat_runtime: comm=\S+ pid=(\d+) runtime=(\d+) \[ns\]( vruntime=(\d+) \[ns\])?$`)
	for _, tc := range []struct {
		profile  string
		vruntime bool
	}{
		{"v5.15-cfs", true},
		{"v6.6-eevdf", true},
		{"v6.7-eevdf", true},
		{"v6.12-eevdf", false},
	} {
		s := newSimSched(t, "hikey-8", tc.profile, "")
		s.EnableTrace(20*ms, 0)
		mixedWorkload(t, s)
		s.Run(15 * ms)
		var b bytes.Buffer
		if err := s.WriteFtrace(&b); err != nil {
			t.Fatal(err)
		}
		sum := map[int]int64{}
		n := 0
		for _, l := range strings.Split(b.String(), "\n") {
			if !strings.Contains(l, ": sched_stat_runtime: ") {
				continue
			}
			m := ev.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("%s: %q", tc.profile, l)
			}
			if (m[6] != "") != tc.vruntime {
				t.Fatalf("%s: vruntime field present %v, want %v: %q", tc.profile, m[6] != "", tc.vruntime, l)
			}
			if m[2] != m[4] {
				t.Errorf("%s: sched_stat_runtime of %s in %s's context", tc.profile, m[4], m[2])
			}
			pid, _ := strconv.Atoi(m[4])
			rt, _ := strconv.ParseInt(m[5], 10, 64)
			sum[pid] += rt
			n++
		}
		if n == 0 {
			t.Fatalf("%s: no sched_stat_runtime", tc.profile)
		}
		for _, p := range s.tasks {
			if sum[p.PID] != int64(p.se.SumExecRuntime) {
				t.Errorf("%s: task %d: runtimes add up to %d ns, sum_exec_runtime is %d", tc.profile, p.PID, sum[p.PID], p.se.SumExecRuntime)
			}
		}
	}
}

// TestTraceProcessFree: a task that exits is freed once, by the RCU
// callback on its CPU in softirq context at the second tick after its
// last switch, after its sched_process_exit; no other task is.
func TestTraceProcessFree(t *testing.T) {
	s := newSimSched(t, "hikey-8", "v6.6-eevdf", "")
	s.EnableTrace(50*ms, 0)
	for i := range 6 {
		left := 3
		spawn(t, s, TaskSpec{Comm: "short", CPU: i % 4, MM: 0, Prog: ProgramFunc(func(p *Task) Action {
			if left--; left < 0 {
				return Exit()
			}
			if left%2 == 0 {
				return Sleep(int64(100_000 * (i + 1)))
			}
			return Run(int64(200_000 * (i + 1)))
		})})
	}
	spawn(t, s, TaskSpec{Comm: "hog", CPU: 0, Prog: Hog()})
	s.Run(30 * ms)
	var b bytes.Buffer
	if err := s.WriteFtrace(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	tick := s.tun.TickNsec
	dead := 0
	defer func() {
		if dead == 0 {
			t.Error("no task exited")
		}
	}()
	for _, p := range s.tasks {
		frees := strings.Count(text, fmt.Sprintf(": sched_process_free: comm=%s pid=%d ", taskComm(p), p.PID))
		if p.state != TaskDead {
			if frees != 0 {
				t.Errorf("live task %d freed", p.PID)
			}
			continue
		}
		dead++
		if frees != 1 {
			t.Fatalf("task %d exited, freed %d times", p.PID, frees)
		}
		var exitAt, switchAt, freeAt int64 = -1, -1, -1
		var freeCPU, exitCPU int
		for _, l := range strings.Split(text, "\n") {
			f := strings.Fields(l)
			if len(f) < 5 {
				continue
			}
			us, _ := strconv.ParseFloat(strings.TrimSuffix(f[3], ":"), 64)
			ns := int64(us*1e6+0.5) * 1000
			cpu, _ := strconv.Atoi(strings.Trim(f[1], "[]"))
			switch {
			case strings.Contains(l, fmt.Sprintf("sched_process_exit: comm=%s pid=%d ", taskComm(p), p.PID)):
				exitAt = ns
			case strings.Contains(l, fmt.Sprintf("prev_pid=%d prev_prio", p.PID)) && strings.Contains(l, "prev_state=X"):
				switchAt, exitCPU = ns, cpu
			case strings.Contains(l, fmt.Sprintf("sched_process_free: comm=%s pid=%d ", taskComm(p), p.PID)):
				freeAt, freeCPU = ns, cpu
				if f[2] != "..s.." {
					t.Errorf("free of %d with flags %s, want ..s.. (RCU_SOFTIRQ)", p.PID, f[2])
				}
			}
		}
		if exitAt < 0 || switchAt < exitAt || freeAt < switchAt {
			t.Errorf("task %d: exit at %d, last switch at %d, free at %d", p.PID, exitAt, switchAt, freeAt)
		}
		if want := (switchAt/1000*1000/tick + 2) * tick; freeCPU != exitCPU || freeAt != want {
			t.Errorf("task %d: freed on CPU %d at %d, want CPU %d at %d", p.PID, freeCPU, freeAt, exitCPU, want)
		}
	}
}
