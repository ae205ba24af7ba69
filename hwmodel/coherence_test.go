package hwmodel

import (
	"math"
	"testing"
)

// TestPingPongEqualsClassLatency: two CPUs alternating RMWs pay one
// transfer each at exactly the preset's latency for their class.
func TestPingPongEqualsClassLatency(t *testing.T) {
	for _, name := range builtinPresets() {
		m := mustLoad(t, name)
		for c := ClassSMT; c < NumClasses; c++ {
			a, b, ok := m.PairOf(c)
			if !ok {
				continue
			}
			if got, want := m.PredictPingPong(a, b), m.Lat.Transfer[c]; math.Abs(got-want) > 1e-9 {
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
		two := m.PredictHammer(cpus[:2], true)
		for n := 3; n <= len(cpus) && n <= 16; n++ {
			got := m.PredictHammer(cpus[:n], true)
			if got < 0.9*two {
				t.Errorf("%s: %d writers %.2f ns/op aggregate vs %.2f for 2: throughput grew with N", name, n, got, two)
			}
		}
		lat := m.Lat.Transfer[m.Class(cpus[0], cpus[1])]
		wantPerOp := (lat + float64(m.Lat.Burst)*m.Lat.RMWLocal) / float64(m.Lat.Burst)
		if math.Abs(two-wantPerOp) > 0.1*wantPerOp {
			t.Errorf("%s: 2 writers %.2f ns/op, want ~%.2f (transfer + burst x RMW per burst)", name, two, wantPerOp)
		}
		one := m.PredictHammer(cpus[:1], true)
		if math.Abs(one-m.Lat.RMWLocal) > 0.1*m.Lat.RMWLocal {
			t.Errorf("%s: 1 writer %.2f ns/op, want RMWLocal %.2f", name, one, m.Lat.RMWLocal)
		}
		padded := m.PredictHammer(cpus[:2], false)
		if padded > 0.6*m.Lat.RMWLocal {
			t.Errorf("%s: 2 writers on padded lines %.2f ns/op aggregate, want ~RMWLocal/2 = %.2f", name, padded, m.Lat.RMWLocal/2)
		}
	}
}

// TestSharedReadsAreFree: readers of an unmodified shared line pay only
// for their first fill.
func TestSharedReadsAreFree(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	l := m.NewLine(0)
	if c := m.Access(l, 0, Write); c.Kind != Fill {
		t.Fatalf("first write: %+v, want a fill", c)
	}
	for round := 0; round < 3; round++ {
		for _, cpu := range []int{1, 2, 56, 100, 112} {
			c := m.Access(l, cpu, Read)
			if round == 0 && c.NS == 0 {
				t.Errorf("first read by %d was free", cpu)
			}
			if round > 0 && (c.NS != 0 || c.Kind != Hit) {
				t.Errorf("round %d read by %d cost %+v, want a free hit", round, cpu, c)
			}
		}
	}
	// A write invalidates all five copies (and the writer's own old
	// owner copy was downgraded): the farthest sharer sets the cost.
	c := m.Access(l, 0, RMW)
	if c.Kind != Invalidate || c.Invalidated != 5 || c.NS != m.Lat.Transfer[ClassRemote] {
		t.Errorf("write after shared reads: %+v, want invalidation of 5 at the remote latency", c)
	}
	if c := m.Access(l, 1, Read); c.Kind != Transfer || c.NS != m.Lat.Transfer[ClassLLC] {
		t.Errorf("read after the write: %+v, want a same-LLC transfer", c)
	}
}

// TestHomeNode: a same-socket transfer of a line homed on the other
// socket pays the home-remote penalty (hardware.md C2).
func TestHomeNode(t *testing.T) {
	m := mustLoad(t, "spr-2s")
	for _, tc := range []struct {
		home int
		want float64
	}{
		{0, m.Lat.Transfer[ClassLLC]},
		{1, m.Lat.Transfer[ClassLLC] + m.Lat.HomeRemote},
	} {
		l := m.NewLine(tc.home)
		m.Access(l, 0, RMW)
		if c := m.Access(l, 1, RMW); c.NS != tc.want {
			t.Errorf("home node %d: transfer 0->1 costs %v, want %v", tc.home, c.NS, tc.want)
		}
	}
	// Fills: local vs remote DRAM.
	l := m.NewLine(1)
	if c := m.Access(l, 0, Read); c.NS != m.Lat.MemRemote {
		t.Errorf("fill of a line homed remotely: %v, want %v", c.NS, m.Lat.MemRemote)
	}
}
