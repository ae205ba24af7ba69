package hwmodel

import (
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

// TestCalibrationFits: after applying the development VM's recorded
// calibration, the host preset predicts each measured figure within 25%
// (the hammer is the acceptance; the others are fitted exactly).
func TestCalibrationFits(t *testing.T) {
	m := kvmHost(t)
	c, err := LoadCalibFile("testdata/calib/kvm-2vcpu-genoa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := c.Apply(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what      string
		predicted float64
		measured  float64
	}{
		{"ping-pong llc", cm.PredictPingPong(0, 1), c.PingPongNS["llc"]},
		{"hammer 1 writer", cm.PredictHammer([]int{0}, true), c.RMWLocalNS},
		{"hammer 2 writers, one line", cm.PredictHammer([]int{0, 1}, true), c.Hammer2SharedNS},
		{"hammer 2 writers, padded", cm.PredictHammer([]int{0, 1}, false), c.Hammer2PaddedNS},
		{"pipe round trip 2 CPUs", cm.PredictPipeRTT(0, 1) / 1000, c.PipeRTTUS},
		{"pipe round trip 1 CPU", cm.PredictPipeRTT(0, 0) / 1000, c.PipeRTT1US},
		{"page fault", cm.Costs.NS[OpPageFault] / 1000, c.PageFaultUS},
	} {
		ratio := tc.predicted / tc.measured
		t.Logf("%-28s measured %8.2f predicted %8.2f ratio %.2f", tc.what, tc.measured, tc.predicted, ratio)
		if math.Abs(ratio-1) > 0.25 {
			t.Errorf("%s: predicted %.2f vs measured %.2f after calibration (ratio %.2f)", tc.what, tc.predicted, tc.measured, ratio)
		}
	}
	// exit_mmap moves with the page fault: the same ratio to the preset's.
	pf := cm.Costs.NS[OpPageFault] / m.Costs.NS[OpPageFault]
	if ex := cm.Costs.NS[OpExitMMAP] / m.Costs.NS[OpExitMMAP]; math.Abs(ex/pf-1) > 0.01 {
		t.Errorf("calibrated exit_mmap moved x%.3f, the page fault x%.3f: want the same", ex, pf)
	}
	// The sources say where the numbers came from now.
	if src := cm.Spec.Latency.LLC.Source; src[:3] != "[C]" {
		t.Errorf("calibrated latency source %q does not say [C]", src)
	}
	// The hammer stays saturated: 2 writers on one line are slower per
	// op than 2 on padded lines, and faster than one RMW per transfer.
	if sh, pad := cm.PredictHammer([]int{0, 1}, true), cm.PredictHammer([]int{0, 1}, false); sh <= pad || sh >= cm.Lat.Transfer[ClassLLC] {
		t.Errorf("calibrated hammer: shared %.2f, padded %.2f, transfer %.2f", sh, pad, cm.Lat.Transfer[ClassLLC])
	}
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
	} {
		path := dir + "/" + tc.name + ".yaml"
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCalibFile(path)
		if err == nil {
			_, err = c.Apply(m)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}
