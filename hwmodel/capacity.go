package hwmodel

// Capacity is the private-cache capacity model: a line a CPU holds stays
// in its L1d only while the CPU's own traffic since its last touch of the
// line is under the L1d's size, in its L2 while under the L2's, in the
// LLC while under the LLC's; past that it comes from memory. A touch of a
// line the CPU still holds (a coherence hit) then costs the level it has
// aged to, beyond an L1 hit.
//
// Simplified: LRU by bytes, every byte of traffic a distinct line (a
// stream: payload copies, fresh skbs), so the age is the bytes the CPU
// moved since its last touch; no associativity, no prefetch; an SMT
// sibling's and the other cores' traffic through a shared L2 or LLC does
// not age the CPU's lines; the coherence state is kept (an aged line is
// still held: others snoop it as before); memory is mem_local, wherever
// the line's home.
type Capacity struct {
	// Bytes are the sizes of the L1d, the L2 and the LLC (per instance,
	// caches.*_kib); LLC 0 without an L3.
	L1, L2, LLC int64
	// PS[lvl] is the price of a hit at level lvl beyond an L1 hit, in ps.
	PS [NumLevels]int64
}

// Cache levels a held line is found in (Capacity.Level).
const (
	LevelL1 uint8 = iota
	LevelL2
	LevelLLC
	LevelMem
	NumLevels
)

// Capacity returns the machine's capacity model, or false when its spec
// gives no latency_ns.l2_hit (lines never age).
func (m *Machine) Capacity() (Capacity, bool) {
	if m.Lat.L2Hit == 0 {
		return Capacity{}, false
	}
	c := Capacity{L1: int64(m.Caches.L1dKiB) << 10, L2: int64(m.Caches.L2KiB) << 10, LLC: int64(m.Caches.L3KiB) << 10}
	c.PS[LevelL2] = PS(m.Lat.L2Hit)
	c.PS[LevelLLC] = PS(m.Lat.LLCHit)
	c.PS[LevelMem] = PS(m.Lat.MemLocal)
	return c, true
}

// Level is where a line last touched age bytes of the CPU's own traffic
// ago is found: LevelL1 under the L1d's size, then the L2, the LLC (none
// without an L3), then memory.
func (c *Capacity) Level(age int64) uint8 {
	switch {
	case age < c.L1:
		return LevelL1
	case age < c.L2:
		return LevelL2
	case c.LLC > 0 && age < c.LLC:
		return LevelLLC
	}
	return LevelMem
}
