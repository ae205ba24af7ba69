package hwmodel

import (
	"testing"
)

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
