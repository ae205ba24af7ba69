package hwmodel

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
)

// kvmHost is the development VM's host machine, from its recorded sysfs.
func kvmHost(t *testing.T) *Machine {
	t.Helper()
	id := HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596, LineBytes: 64, L1dKiB: 32, L2KiB: 1024, L3KiB: 32768}
	s, err := HostSpec(os.DirFS("testdata/sysfs/kvm-2vcpu-genoa"), id)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// closedHammer is the two-writer hammer's closed form, (transfer + burst x
// RMW) / burst (weave's TestHammerSaturates holds the replay to it within
// 10%): the calibration tests here check the fit's errors and bounds; the
// fit itself runs the replay in weave's TestCalibrationFits.
func closedHammer(m *Machine, cpus []int, _ bool) float64 {
	if len(cpus) < 2 {
		return m.Lat.RMWLocal
	}
	b := float64(m.Lat.Burst)
	return (m.Lat.Transfer[m.Class(cpus[0], cpus[1])] + b*m.Lat.RMWLocal) / b
}

func TestCalibErrors(t *testing.T) {
	m := kvmHost(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", "host: x\nping_ns: {}\n", "ping_ns"},
		{"unknown class", "host: x\npingpong_ns: {cluster: 3}\n", "pingpong_ns.cluster"},
		{"class absent", "host: x\npingpong_ns: {remote: 100}\n", "pingpong_ns.remote"},
		{"empty", "", "empty"},
		{"negative", "host: x\nrmw_local_ns: -2\n", "rmw_local_ns"},
		{"NaN", "host: x\npipe_rtt_us: .nan\n", "pipe_rtt_us"},
		{"huge", "host: x\nhammer2_padded_ns: 1e300\n", "hammer2_padded_ns"},
		{"zero ping-pong", "host: x\npingpong_ns: {llc: 0}\n", "pingpong_ns.llc"},
		{"unknown hammer class", "host: x\nhammer2_class: cluster\nhammer2_shared_ns: 4\n", "hammer2_class"},
		{"hammer without class", "host: x\nhammer2_shared_ns: 4\n", "hammer2_class"},
		{"smt on a host without", "host: x\npingpong_ns: {smt: 10}\n", "pingpong_ns.smt"},
		{"negative page fault", "host: x\npage_fault_us: -1\n", "page_fault_us"},
		{"negative copy-on-write fault", "host: x\ncow_fault_us: -1\n", "cow_fault_us"},
		{"exit path of an unknown tool", "host: x\nexit_path_us: {stress-ng: 100}\n", "exit_path_us.stress-ng"},
		{"zero exit path", "host: x\nexit_path_us: {perf: 0}\n", "exit_path_us.perf"},
		{"negative system call", "host: x\nsyscall_ns: -1\n", "syscall_ns"},
		{"NaN pipe message", "host: x\npipe_msg_ns: .nan\n", "pipe_msg_ns"},
		{"huge unix message", "host: x\nunix_msg_ns: 1e300\n", "unix_msg_ns"},
		{"unix message under its system calls", "host: x\nsyscall_ns: 900\nunix_msg_ns: 1500\n", "AF_UNIX stream message costs 1500 ns"},
	} {
		path := dir + "/" + tc.name + ".yaml"
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCalibFile(path)
		if err == nil {
			_, err = c.Apply(m, closedHammer)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// TestCalibPricesFault: page_fault is the tools' children's copy-on-write
// fault, so a measured cow_fault_us prices it in place of the first-touch
// page_fault_us, and exit_mmap moves by the same ratio; without it the
// first touch prices it.
func TestCalibPricesFault(t *testing.T) {
	m := kvmHost(t)
	pf0, ex0 := m.Costs.NS[OpPageFault], m.Costs.NS[OpExitMMAP]
	for _, tc := range []struct {
		name   string
		c      Calib
		wantUS float64
	}{
		{"first touch only", Calib{Host: "x", PageFaultUS: 10}, 10},
		{"copy-on-write measured", Calib{Host: "x", PageFaultUS: 10, CoWFaultUS: 15}, 15},
		{"copy-on-write only", Calib{Host: "x", CoWFaultUS: 15}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, err := tc.c.Apply(m, closedHammer)
			if err != nil {
				t.Fatal(err)
			}
			pf, ex := after.Costs.NS[OpPageFault], after.Costs.NS[OpExitMMAP]
			if math.Abs(pf-1000*tc.wantUS) > 1 {
				t.Errorf("page_fault %.0f ns, want %.0f", pf, 1000*tc.wantUS)
			}
			if r, want := ex/ex0, pf/pf0; math.Abs(r/want-1) > 1e-3 {
				t.Errorf("exit_mmap moved x%.4f, the page fault x%.4f: want alike", r, want)
			}
		})
	}
}

// TestCalibExitPath: a measured exit path reaches the machine, per tool,
// in ns; without one the machine has none.
func TestCalibExitPath(t *testing.T) {
	m := kvmHost(t)
	c, err := DecodeCalib([]byte("host: x\nexit_path_us: {perf: 4321.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.Apply(m, closedHammer)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.ExitPathNS["perf"]; got != 4321500 {
		t.Errorf("ExitPathNS[perf] = %v, want 4321500", got)
	}
	if m.ExitPathNS != nil || after.ExitPathNS["hackbench"] != 0 {
		t.Errorf("exit paths where none was measured: %v, %v", m.ExitPathNS, after.ExitPathNS)
	}
}

// TestCalibStreamFit: the stream probes price the system call and the
// pipe's and the AF_UNIX socket's paths outright (each in the preset's
// write:read ratio), and the one-CPU pipe round trip scales only the rest
// of the local path, so every measured figure comes back from the closed
// forms; the cross-CPU fit still closes the two-CPU round trip.
func TestCalibStreamFit(t *testing.T) {
	m := kvmHost(t)
	c := &Calib{Host: "x", SyscallNS: 1079, PipeMsgNS: 2743, UnixMsgNS: 3556, PipeRTT1US: 8.37, PipeRTTUS: 22.39}
	cm, err := c.Apply(m, closedHammer)
	if err != nil {
		t.Fatal(err)
	}
	a, b, _ := cm.PairOf(ClassLLC)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got/want-1) > 0.001 {
			t.Errorf("%s: %.2f after calibration, measured %.2f", what, got, want)
		}
	}
	near("getppid", cm.Costs.NS[OpSyscall], c.SyscallNS)
	near("pipe message", cm.PredictStreamMsg(false), c.PipeMsgNS)
	near("unix message", cm.PredictStreamMsg(true), c.UnixMsgNS)
	near("one-CPU pipe round trip", cm.PredictPipeRTT(0, 0), 1000*c.PipeRTT1US)
	near("two-CPU pipe round trip", cm.PredictPipeRTT(a, b), 1000*c.PipeRTTUS)
	for _, p := range [][2]KernelOp{{OpPipeWrite, OpPipeRead}, {OpUnixSend, OpUnixRecv}} {
		near(p[0].String()+":"+p[1].String(), cm.Costs.NS[p[0]]/cm.Costs.NS[p[1]], m.Costs.NS[p[0]]/m.Costs.NS[p[1]])
	}
	// The rest of the local path moves by one scale.
	k := cm.Costs.NS[OpSchedule] / m.Costs.NS[OpSchedule]
	for _, op := range []KernelOp{OpTTWU, OpEnqueue, OpDequeue, OpPickNext, OpUpdateLoadAvg} {
		near(op.String()+" scale", cm.Costs.NS[op]/m.Costs.NS[op], k)
	}
	if src := cm.Spec.Costs.Syscall.Source; !strings.HasPrefix(src, "[C] one getppid(2)") {
		t.Errorf("syscall source %q does not say it was measured", src)
	}
	// Without the stream figures the one-CPU round trip scales the whole
	// local path, the system call included.
	c0 := &Calib{Host: "x", PipeRTT1US: 8.37}
	cm0, err := c0.Apply(m, closedHammer)
	if err != nil {
		t.Fatal(err)
	}
	near("round trip alone", cm0.PredictPipeRTT(0, 0), 1000*c0.PipeRTT1US)
	near("syscall scale without stream figures", cm0.Costs.NS[OpSyscall]/m.Costs.NS[OpSyscall], cm0.Costs.NS[OpSchedule]/m.Costs.NS[OpSchedule])
}

// TestCalibStreamContradiction: a message that costs no more than its two
// system calls cannot be split; Apply says which figures disagree.
func TestCalibStreamContradiction(t *testing.T) {
	c := &Calib{Host: "x", SyscallNS: 2000, PipeMsgNS: 3000}
	_, err := c.Apply(kvmHost(t), closedHammer)
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "pipe message costs 3000 ns, no more than its two system calls") {
		t.Errorf("error %v, want a -calib error naming the pipe message and the system calls", err)
	}
}
