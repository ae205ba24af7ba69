package pelt

import "testing"

// Benchmarks step the clock by 1 ms (about one period crossing per call,
// the kernel's tick-driven case) unless noted.

func BenchmarkDecayLoad(b *testing.B) {
	var sink uint64
	n := uint64(0)
	for b.Loop() {
		sink += DecayLoad(47742<<10, n&1023)
		n++
	}
	_ = sink
}

func BenchmarkUpdateSE(b *testing.B) {
	var sa Avg
	now := uint64(0)
	for b.Loop() {
		now += 1_000_000
		UpdateSE(now, &sa, true, 1, true, 1024)
	}
}

// BenchmarkUpdateSEWithinPeriod: 100 µs steps, mostly no boundary crossed.
func BenchmarkUpdateSEWithinPeriod(b *testing.B) {
	var sa Avg
	now := uint64(0)
	for b.Loop() {
		now += 100_000
		UpdateSE(now, &sa, true, 1, true, 1024)
	}
}

func BenchmarkUpdateBlockedSE(b *testing.B) {
	var sa Avg
	runFor(&sa, 100*periodNs, 1_000_000, 1024)
	base := sa
	now := sa.LastUpdateTime
	for b.Loop() {
		now += 1_000_000
		if now-base.LastUpdateTime > 1000*periodNs {
			sa, now = base, base.LastUpdateTime+1_000_000
		}
		UpdateBlockedSE(now, &sa, 1024)
	}
}

func BenchmarkUpdateCfsRqLoadAvg(b *testing.B) {
	var cfs Avg
	var prop Propagation
	r := Removed{Nr: 1, LoadAvg: 3, UtilAvg: 2, RunnableAvg: 2}
	now := uint64(0)
	for b.Loop() {
		now += 1_000_000
		cfs.LoadAvg += 3
		cfs.UtilAvg += 2
		cfs.RunnableAvg += 2
		UpdateCfsRqLoadAvg(now, &cfs, r, &prop, 4096, 4, true)
	}
}

func BenchmarkAttachDetach(b *testing.B) {
	var cfs, se Avg
	for k := uint64(1); k <= 100; k++ {
		UpdateCfsRq(k*periodNs+5000, &cfs, 2048, 2, true)
		UpdateSE(k*periodNs+5000, &se, true, 1, true, 1024)
	}
	for b.Loop() {
		Attach(&cfs, &se, 1024)
		Detach(&cfs, &se, 1024)
	}
}

func BenchmarkPropagateEntity(b *testing.B) {
	h := newHierarchy(100 * periodNs)
	for b.Loop() {
		h.grqProp.Add(1000)
		PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW)
		h.grqProp.Add(-1000)
		PropagateEntity(&h.root, &h.rootProp, &h.gse, h.gseW, &h.grq, &h.grqProp, h.grqW)
	}
}
