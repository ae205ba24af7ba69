package bench

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

func TestHackbenchGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "hackbench", "-g", "2", "-f", "4", "-l", "1000")
	golden(t, "hackbench/hikey-8-socket.golden", []byte(out))
	_, out = runW(t, "hikey-8", "v6.6-eevdf", 1, "hackbench", "-g", "2", "-f", "4", "-l", "1000", "--pipe", "--threads")
	golden(t, "hackbench/hikey-8-pipe-threads.golden", []byte(out))
}

func TestMessagingGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "messaging", "-g", "1", "-l", "50")
	golden(t, "messaging/hikey-8-socket.golden", []byte(out))
	_, out = runW(t, "hikey-8", "v6.6-eevdf", 1, "messaging", "-g", "1", "-l", "50", "-p", "-t")
	golden(t, "messaging/hikey-8-pipe-threads.golden", []byte(out))
}

// More groups on the same machine: more messages through the same CPUs,
// more time.
func TestHackbenchGroups(t *testing.T) {
	one := metric(t, "hikey-8", "v6.6-eevdf", "hackbench", "-g", "1", "-f", "4", "-l", "100")
	four := metric(t, "hikey-8", "v6.6-eevdf", "hackbench", "-g", "4", "-f", "4", "-l", "100")
	if four < 1.5*one {
		t.Errorf("time with 4 groups %.6f s < 1.5x with 1 group %.6f s", four, one)
	}
}

// The channel capacities of the doc comment: 100-byte messages.
func TestHackbenchCapacity(t *testing.T) {
	if c := channelCapacity(true, 100); c != 640 {
		t.Errorf("pipe capacity %d, want 16 pages x 40 = 640", c)
	}
	if c := channelCapacity(false, 100); c != 277 {
		t.Errorf("socketpair capacity %d, want 212992/768 = 277", c)
	}
	if c := channelCapacity(true, maxDatasize); c != 1 {
		t.Errorf("pipe capacity for a 64 KiB message %d, want 1", c)
	}
}

func TestHackbenchMetrics(t *testing.T) {
	for _, name := range []string{"hackbench", "messaging"} {
		res, _ := runW(t, "hikey-8", "v6.6-eevdf", 1, name, "-g", "1", "-l", "2")
		m := res.Workload.Metrics(res.Sim)
		if v, ok := m.Values[m.Primary]; !ok || v <= 0 || m.HigherIsBetter {
			t.Errorf("%s: primary %q = %v (present %t), higher is better %t; want a positive time, lower is better",
				name, m.Primary, v, ok, m.HigherIsBetter)
		}
		if name == "hackbench" && m.Values["throughput"] <= 0 {
			t.Errorf("hackbench: throughput %v, want > 0", m.Values["throughput"])
		}
	}
}

// -T and -P: the last one wins, as with getopt.
func TestHackbenchMode(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, c := range []struct {
		args     []string
		threaded bool
	}{
		{nil, false}, {[]string{"-T"}, true}, {[]string{"--threads", "-P"}, false},
		{[]string{"-P", "-T"}, true}, {[]string{"-T", "--process"}, false},
	} {
		w, err := build(m, "hackbench", c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.(*msgBench).threaded; got != c.threaded {
			t.Errorf("%v: threaded %t, want %t", c.args, got, c.threaded)
		}
	}
}

func TestHackbenchBadInput(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, c := range []struct {
		name string
		args []string
		flag string
	}{
		{"hackbench", []string{"-l", "-1"}, "-l"},
		{"hackbench", []string{"--loops", "0"}, "-l"},
		{"hackbench", []string{"-g", "0"}, "-g"},
		{"hackbench", []string{"-f", "-3"}, "-f"},
		{"hackbench", []string{"-f", "40000"}, "-f"},            // 80,000 tasks
		{"hackbench", []string{"-f", "2000"}, "-f"},             // 4,000,000 sender-receiver pairs
		{"hackbench", []string{"-g", "2000", "-f", "20"}, "-g"}, // 80,000 tasks
		{"hackbench", []string{"-s", "0"}, "-s"},
		{"hackbench", []string{"-s", "100000"}, "-s"},
		{"messaging", []string{"-l", "-1"}, "-l"},
		{"messaging", []string{"-g", "0"}, "-g"},
		{"messaging", []string{"--group", "2000"}, "-g"},
	} {
		_, err := build(m, c.name, c.args...)
		var fe *FlagError
		if !errors.As(err, &fe) || fe.Flag != c.flag {
			t.Errorf("%s %v: err = %v, want a FlagError on %s", c.name, c.args, err, c.flag)
		}
	}
}

// The serial and parallel drivers give the same bytes: the report, the
// /proc/schedstat counters and every task's counters.
func TestHackbenchDeterminism(t *testing.T) {
	for _, c := range []struct {
		topo string
		args []string
	}{
		{"hikey-8", []string{"hackbench", "-g", "2", "-f", "4", "-l", "30"}},
		// Two sockets (wake lists across LLCs), pipes, a cgroup.
		{"xeon-e5-2x10", []string{"messaging", "-g", "1", "-l", "5", "-p", "-t", "-cgroup", "docker"}},
	} {
		driversAgree(t, c.topo, "v6.6-eevdf", 1, 2, c.args...)
	}
}

// The tool's main thread forks every task (emu.Sim.ForkCPU, fair.c v6.6
// select_task_rq_fair(WF_FORK)): on spr-2s the forks alternate between
// the sockets once the parent's node would run more than imb_numa_nr (2)
// tasks, so one group's 40 tasks are on both sockets, 20 and 20 within
// imb_numa_nr, each on a core of its own. Placing them in Spread's order
// put the whole group on socket 0, the one place a real -g 1 run never
// has it (the group then ran twice as fast as published: 198 k against
// 101 k).
func TestHackbenchForkPlacement(t *testing.T) {
	m := machine(t, "spr-2s")
	s := setUp(t, m, "hackbench", "-g", "1", "-f", "20", "--threads", "--pipe", "-l", "1")
	perNode := make([]int, len(m.Nodes))
	cores := map[int]bool{}
	for _, p := range s.Tasks() {
		c := p.CPU()
		perNode[m.CPUs[c].Node]++
		if cores[m.CPUs[c].Core] {
			t.Errorf("two tasks of the group on core %d while others are idle", m.CPUs[c].Core)
		}
		cores[m.CPUs[c].Core] = true
	}
	if d := perNode[0] - perNode[1]; d < -2 || d > 2 {
		t.Errorf("tasks per node %v: want the group split between the sockets", perNode)
	}
}

// oneCPU is icl-2s cut down to one CPU: a runqueue's own dynamics, with no
// selection, balancing or coherence traffic.
func oneCPU(t testing.TB) *hwmodel.Machine {
	t.Helper()
	data, err := hwmodel.PresetSpec("icl-2s")
	if err != nil {
		t.Fatal(err)
	}
	s, err := hwmodel.DecodeSpec(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	s.Name = "icl-1cpu"
	s.Layout.Sockets, s.Layout.CoresPerLLC, s.Layout.ThreadsPerCore = 1, 1, 1
	s.NUMADistance = [][]int{{10}}
	m, err := hwmodel.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnixStreamBatches: hackbench over AF_UNIX stream sockets on one CPU
// (`taskset -c 1 hackbench -g 1 -f 20 -l 1000 -s 100`). On the dev VM's
// kernel (6.18, EEVDF) a receiver reads ~87 messages per sleep and a
// sender writes ~150 per switch (perf sched record: 4612 receiver sleeps,
// 2622 sender switch-outs for 400,000 messages; 0.019 switches per
// message). unix_stream_recvmsg() costs what unix_stream_sendmsg() does
// (measured there, 1.39 us each way), so a sender's slice is not spent
// faster than its receivers drain it, and a woken receiver waits for the
// running sender's slice (fair.c v6.6 pick_eevdf(): RUN_TO_PARITY) and
// reads a batch. Priced as UDP (send 5/3 of receive) the receivers ran
// ahead of their share, kept a positive lag, preempted the senders at
// every wakeup (check_preempt_wakeup_fair(), v6.6-v6.12) and read 10-18
// messages per wakeup (0.10-0.14 switches per message, 5-7x the kernel's).
// With the senders sharing each channel (chanRoom) they block less and
// are preempted more, as the kernel's are: at -l 300 the model read 113.3
// (v6.6) and 43.7 (v6.12) messages per receiver sleep and wrote 140.8 and
// 53.6 per sender switch at seed 1, the kernel 86.7 and 128.1 on a later
// run (scripts/hb-real, loaded VM); the bounds, a third of the kernel's,
// still catch the UDP-priced regime. Which regime a run settles in is
// sensitive to small changes of the paths' costs (the socket's lines,
// emu.UnixSock, moved seed 1 from 60.7 to 29.8 messages per sleep under
// v6.12 and seed 3 from 51.3 to 152.9), so the bounds hold for the median
// of seeds 1-5, not for one seed.
func TestUnixStreamBatches(t *testing.T) {
	skipUnderRace(t)
	m := oneCPU(t)
	for _, feat := range []string{"v6.6-eevdf", "v6.12-eevdf"} {
		var sleeps, switches []float64
		for seed := uint64(1); seed <= 5; seed++ {
			w, err := build(m, "hackbench", "-g", "1", "-f", "20", "-l", "300", "-s", "100")
			if err != nil {
				t.Fatal(err)
			}
			runFeat(t, m, w, feat, seed)
			// The children in creation order: 20 receivers, then 20 senders.
			var recvSleeps, sendSwitches int64
			for i, tk := range w.(*msgBench).children {
				if st := tk.Stats; i < 20 {
					recvSleeps += st.NrVolSwitch
				} else {
					sendSwitches += st.NrVolSwitch + st.NrInvolSwitch
				}
			}
			msgs := float64(20 * 20 * 300)
			sleeps = append(sleeps, msgs/float64(recvSleeps))
			switches = append(switches, msgs/float64(sendSwitches))
		}
		t.Logf("%s, seeds 1-5: messages per receiver sleep %.1f, writes per sender switch %.1f", feat, sleeps, switches)
		slices.Sort(sleeps)
		slices.Sort(switches)
		perSleep, perSwitch := sleeps[2], switches[2]
		if perSleep < 30 || perSwitch < 40 {
			t.Errorf("%s: median %.1f messages per receiver sleep (want >= 30), %.1f writes per sender switch (want >= 40): the kernel's are ~87 and ~128-150",
				feat, perSleep, perSwitch)
		}
	}
}
