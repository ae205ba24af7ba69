package eevdf

import (
	"fmt"
	"math/bits"
)

// Fixed-point constants for 64-bit kernels (kernel/sched/sched.h,
// include/linux/sched.h, kernel/sched/fair.c).
const (
	// SchedFixedpointShift is SCHED_FIXEDPOINT_SHIFT: the extra resolution
	// scale_load() adds to weights on 64-bit kernels.
	SchedFixedpointShift = 10
	// Nice0Load is NICE_0_LOAD = scale_load(1024): the scaled weight of a
	// nice-0 entity, the unit of LoadWeight.Weight.
	Nice0Load = 1024 << SchedFixedpointShift

	// wmultConst is WMULT_CONST (~0U) and wmultShift WMULT_SHIFT: inverse
	// weights are ≈ 2^32/w.
	wmultConst = ^uint32(0)
	wmultShift = 32

	// MinNice and MaxNice bound the nice range the tables cover.
	MinNice = -20
	MaxNice = 19
)

// PrioToWeight is sched_prio_to_weight[] (kernel/sched/core.c): the
// unscaled load weight for nice -20 … 19, index nice+20. Neighbouring
// entries differ by ≈1.25×, i.e. about 10% CPU per nice step.
var PrioToWeight = [40]uint32{
	/* -20 */ 88761, 71755, 56483, 46273, 36291,
	/* -15 */ 29154, 23254, 18705, 14949, 11916,
	/* -10 */ 9548, 7620, 6100, 4904, 3906,
	/*  -5 */ 3121, 2501, 1991, 1586, 1277,
	/*   0 */ 1024, 820, 655, 526, 423,
	/*   5 */ 335, 272, 215, 172, 137,
	/*  10 */ 110, 87, 70, 56, 45,
	/*  15 */ 36, 29, 23, 18, 15,
}

// PrioToWmult is sched_prio_to_wmult[] (kernel/sched/core.c): the
// precomputed inverse 2^32/PrioToWeight[i], which set_load_weight() and
// reweight_task() store in load_weight.inv_weight for tasks.
var PrioToWmult = [40]uint32{
	/* -20 */ 48388, 59856, 76040, 92818, 118348,
	/* -15 */ 147320, 184698, 229616, 287308, 360437,
	/* -10 */ 449829, 563644, 704093, 875809, 1099582,
	/*  -5 */ 1376151, 1717300, 2157191, 2708050, 3363326,
	/*   0 */ 4194304, 5237765, 6557202, 8165337, 10153587,
	/*   5 */ 12820798, 15790321, 19976592, 24970740, 31350126,
	/*  10 */ 39045157, 49367440, 61356676, 76695844, 95443717,
	/*  15 */ 119304647, 148102320, 186737708, 238609294, 286331153,
}

func prioIndex(nice int) int {
	if nice < MinNice || nice > MaxNice {
		panic(fmt.Sprintf("eevdf: nice %d outside [%d, %d]", nice, MinNice, MaxNice))
	}
	return nice - MinNice
}

// NiceToWeight returns the scaled load weight of a nice level,
// scale_load(sched_prio_to_weight[nice+20]); NiceToWeight(0) == Nice0Load.
// This is the unit Reweight and LoadWeight.Set take.
func NiceToWeight(nice int) uint64 {
	return ScaleLoad(uint64(PrioToWeight[prioIndex(nice)]))
}

// ScaleLoad is scale_load(): unscaled weight → NICE_0_LOAD units.
func ScaleLoad(w uint64) uint64 { return w << SchedFixedpointShift }

// ScaleLoadDown is scale_load_down() on 64-bit: w>>10, but never below 2
// for a non-zero weight, so that tiny group shares keep a usable weight.
func ScaleLoadDown(w uint64) uint64 {
	if w == 0 {
		return 0
	}
	return max(2, w>>SchedFixedpointShift)
}

// LoadWeight is struct load_weight: a scaled weight and its cached inverse.
type LoadWeight struct {
	// Weight is scaled: NICE_0_LOAD = 1<<20 for a nice-0 entity.
	Weight uint64
	// InvWeight is ≈ 2^32/scale_load_down(Weight); 0 means "not yet
	// computed" and CalcDelta computes it on first use, as the kernel does.
	InvWeight uint32
}

// Set is update_load_set() followed by __update_inv_weight(): it installs
// w and the computed inverse WMULT_CONST/scale_load_down(w). Tasks get the
// table inverse instead; see SetNice.
func (lw *LoadWeight) Set(w uint64) {
	lw.Weight = w
	lw.InvWeight = 0
	lw.updateInvWeight()
}

// SetNice is the load part of set_load_weight() (core.c) for a fair task:
// the table weight and the table inverse.
func (lw *LoadWeight) SetNice(nice int) {
	i := prioIndex(nice)
	lw.Weight = ScaleLoad(uint64(PrioToWeight[i]))
	lw.InvWeight = PrioToWmult[i]
}

// updateInvWeight mirrors fair.c: __update_inv_weight().
func (lw *LoadWeight) updateInvWeight() {
	if lw.InvWeight != 0 {
		return
	}
	w := ScaleLoadDown(lw.Weight)
	switch {
	case w >= uint64(wmultConst):
		lw.InvWeight = 1
	case w == 0:
		lw.InvWeight = wmultConst
	default:
		lw.InvWeight = wmultConst / uint32(w)
	}
}

// CalcDelta mirrors fair.c: __calc_delta(): delta × weight / lw.Weight,
// computed as (delta × (scale_load_down(weight) × lw.InvWeight)) >> 32 with
// the factor renormalised to 32 bits first so that the final product fits
// a 64×32-bit multiply. The result is the kernel's, truncation included;
// it is exact only up to the precision of InvWeight (see the tests for the
// error bound).
//
// It panics if the renormalisation would need a negative shift, which the
// kernel rules out by its callers' contracts (weight ≤ 2^42 scaled, or
// weight ≤ lw.Weight).
func CalcDelta(delta, weight uint64, lw *LoadWeight) uint64 {
	fact := ScaleLoadDown(weight)
	shift := wmultShift

	lw.updateInvWeight()

	// Bring fact under 32 bits (the kernel's first while loop).
	if hi := fact >> 32; hi != 0 {
		n := bits.Len64(hi)
		fact >>= n
		shift -= n
	}

	// mul_u32_u32(fact, inv_weight), then renormalise to 32 bits again.
	fact = uint64(uint32(fact)) * uint64(lw.InvWeight)
	if hi := fact >> 32; hi != 0 {
		n := bits.Len64(hi)
		fact >>= n
		shift -= n
	}
	if shift < 0 {
		panic(fmt.Sprintf("eevdf: CalcDelta(%d, %d, {%d}): negative shift %d", delta, weight, lw.Weight, shift))
	}
	return mulU64U32Shr(delta, uint32(fact), uint(shift))
}

// mulU64U32Shr is mul_u64_u32_shr(): (a × mul) >> shift with a 96-bit
// intermediate, as the x86-64 version does with a 128-bit product.
func mulU64U32Shr(a uint64, mul uint32, shift uint) uint64 {
	hi, lo := bits.Mul64(a, uint64(mul))
	if shift == 0 {
		return lo
	}
	return hi<<(64-shift) | lo>>shift
}

// CalcDeltaFair mirrors fair.c: calc_delta_fair(): the virtual-time
// equivalent delta × NICE_0_LOAD / w of delta ns of service, the identity
// for a nice-0 entity.
func CalcDeltaFair(delta uint64, se *Entity) uint64 {
	if se.Load.Weight != Nice0Load {
		delta = CalcDelta(delta, Nice0Load, &se.Load)
	}
	return delta
}
