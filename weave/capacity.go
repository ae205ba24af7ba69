package weave

import (
	"slices"

	"github.com/rqemu/rqemu/hwmodel"
)

// capacityAges prices a CPU's touch of a line it holds by how far the
// line has aged out of its private caches (hwmodel.Capacity): the bytes
// the CPU moved (Log.Touch) since its own last touch of the line. It is a
// function of each CPU's own log alone, taken in log order as the weave
// adds it, so it is the same however the engine cuts time into epochs
// and whichever driver ran the CPUs.
type capacityAges struct {
	cap hwmodel.Capacity
	on  bool
	// last[cpu][line] is the CPU's traffic (Log.Touch) at its last touch
	// of the line; 0 for a line it never touched since its traffic last
	// grew from 0. Made for a CPU when its traffic first grows, grown to
	// the lines it touches (dense: a lookup per access).
	last [][]int64
}

// level returns where CPU cpu, having moved foot bytes so far (not 0),
// finds line at this touch, and records the touch. The caller skips it
// when the model is off or the CPU has moved nothing (hwmodel.LevelL1).
func (a *capacityAges) level(cpu int, line LineID, foot int64) uint8 {
	for len(a.last) <= cpu {
		a.last = append(a.last, nil)
	}
	m := a.last[cpu]
	if int(line) >= len(m) {
		m = slices.Grow(m, int(line)+1-len(m))[:int(line)+1]
		a.last[cpu] = m
	}
	prev := m[line]
	m[line] = foot
	return a.cap.Level(foot - prev)
}
