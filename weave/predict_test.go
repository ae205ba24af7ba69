package weave

import (
	"github.com/rqemu/rqemu/hwmodel"
	"math"
	"os"
	"testing"
)

// kvmHost is the development VM's host machine, from its recorded sysfs.
func kvmHost(t *testing.T) *hwmodel.Machine {
	t.Helper()
	id := hwmodel.HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596, LineBytes: 64, L1dKiB: 32, L2KiB: 1024, L3KiB: 32768}
	s, err := hwmodel.HostSpec(os.DirFS("../hwmodel/testdata/sysfs/kvm-2vcpu-genoa"), id)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hwmodel.Build(s)
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
	c, err := hwmodel.LoadCalibFile("../hwmodel/testdata/calib/kvm-2vcpu-genoa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cm, err := c.Apply(m, PredictHammer)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what      string
		predicted float64
		measured  float64
	}{
		{"ping-pong llc", PredictPingPong(cm, 0, 1), c.PingPongNS["llc"]},
		{"hammer 1 writer", PredictHammer(cm, []int{0}, true), c.RMWLocalNS},
		{"hammer 2 writers, one line", PredictHammer(cm, []int{0, 1}, true), c.Hammer2SharedNS},
		{"hammer 2 writers, padded", PredictHammer(cm, []int{0, 1}, false), c.Hammer2PaddedNS},
		{"pipe round trip 2 CPUs", cm.PredictPipeRTT(0, 1) / 1000, c.PipeRTTUS},
		{"pipe round trip 1 CPU", cm.PredictPipeRTT(0, 0) / 1000, c.PipeRTT1US},
		{"page fault", cm.Costs.NS[hwmodel.OpPageFault] / 1000, c.PageFaultUS},
	} {
		ratio := tc.predicted / tc.measured
		t.Logf("%-28s measured %8.2f predicted %8.2f ratio %.2f", tc.what, tc.measured, tc.predicted, ratio)
		if math.Abs(ratio-1) > 0.25 {
			t.Errorf("%s: predicted %.2f vs measured %.2f after calibration (ratio %.2f)", tc.what, tc.predicted, tc.measured, ratio)
		}
	}
	// exit_mmap moves with the page fault: the same ratio to the preset's.
	pf := cm.Costs.NS[hwmodel.OpPageFault] / m.Costs.NS[hwmodel.OpPageFault]
	if ex := cm.Costs.NS[hwmodel.OpExitMMAP] / m.Costs.NS[hwmodel.OpExitMMAP]; math.Abs(ex/pf-1) > 0.01 {
		t.Errorf("calibrated exit_mmap moved x%.3f, the page fault x%.3f: want the same", ex, pf)
	}
	// The sources say where the numbers came from now.
	if src := cm.Spec.Latency.LLC.Source; src[:3] != "[C]" {
		t.Errorf("calibrated latency source %q does not say [C]", src)
	}
	// The hammer stays saturated: 2 writers on one line are slower per
	// op than 2 on padded lines, and faster than one RMW per transfer.
	if sh, pad := PredictHammer(cm, []int{0, 1}, true), PredictHammer(cm, []int{0, 1}, false); sh <= pad || sh >= cm.Lat.Transfer[hwmodel.ClassLLC] {
		t.Errorf("calibrated hammer: shared %.2f, padded %.2f, transfer %.2f", sh, pad, cm.Lat.Transfer[hwmodel.ClassLLC])
	}
}

// TestPingPongEqualsClassLatency: two CPUs alternating RMWs pay one
// transfer each at exactly the preset's latency for their class.
func TestPingPongEqualsClassLatency(t *testing.T) {
	for _, name := range hwmodel.PresetNames() {
		if name == hwmodel.HostPreset {
			continue
		}
		m := mustLoad(t, name)
		for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
			a, b, ok := m.PairOf(c)
			if !ok {
				continue
			}
			if got, want := PredictPingPong(m, a, b), m.Lat.Transfer[c]; math.Abs(got-want) > 1e-9 {
				t.Errorf("%s %v (%d-%d): ping-pong %.3f ns, want %.3f", name, c, a, b, got, want)
			}
		}
	}
}

// TestHammerSaturates: aggregate throughput of N writers on one line does
// not grow with N, and stays far above one RMW per transfer (the burst
// effect) where the preset says the core keeps the line.
func TestHammerSaturates(t *testing.T) {
	for _, name := range []string{"spr-2s", "epyc-9654-2s", "hikey-8"} {
		m := mustLoad(t, name)
		llc := m.LLCs[0]
		// writers on distinct cores of one LLC
		var cpus []int
		for _, c := range llc {
			if m.CPUs[c].Thread == 0 {
				cpus = append(cpus, c)
			}
		}
		two := PredictHammer(m, cpus[:2], true)
		for n := 3; n <= len(cpus) && n <= 16; n++ {
			got := PredictHammer(m, cpus[:n], true)
			if got < 0.9*two {
				t.Errorf("%s: %d writers %.2f ns/op aggregate vs %.2f for 2: throughput grew with N", name, n, got, two)
			}
		}
		lat := m.Lat.Transfer[m.Class(cpus[0], cpus[1])]
		wantPerOp := (lat + float64(m.Lat.Burst)*m.Lat.RMWLocal) / float64(m.Lat.Burst)
		if math.Abs(two-wantPerOp) > 0.1*wantPerOp {
			t.Errorf("%s: 2 writers %.2f ns/op, want ~%.2f (transfer + burst x RMW per burst)", name, two, wantPerOp)
		}
		one := PredictHammer(m, cpus[:1], true)
		if math.Abs(one-m.Lat.RMWLocal) > 0.1*m.Lat.RMWLocal {
			t.Errorf("%s: 1 writer %.2f ns/op, want RMWLocal %.2f", name, one, m.Lat.RMWLocal)
		}
		padded := PredictHammer(m, cpus[:2], false)
		if padded > 0.6*m.Lat.RMWLocal {
			t.Errorf("%s: 2 writers on padded lines %.2f ns/op aggregate, want ~RMWLocal/2 = %.2f", name, padded, m.Lat.RMWLocal/2)
		}
	}
}
