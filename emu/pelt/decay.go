package pelt

import "math/bits"

// DecayLoad returns val·y^n for y^32 = 1/2, in the kernel's fixed point.
//
// pelt.c: decay_load(). y^n = 2^-(n/32) · y^(n%32): a shift, then one
// 64×32-bit multiply by the table entry, keeping the high 64 bits of the
// 96-bit product (mul_u64_u32_shr(val, …, 32)). Past 63 half-lives the
// result is 0 whatever val is.
func DecayLoad(val, n uint64) uint64 {
	if n > maxDecayPeriods {
		return 0
	}
	if n >= LoadAvgPeriod {
		val >>= n / LoadAvgPeriod
		n %= LoadAvgPeriod
	}
	return mulU64U32Shr32(val, runnableAvgYNInv[n])
}

// mulU64U32Shr32 is mul_u64_u32_shr(a, mul, 32): (a·mul) >> 32 without
// losing the product's top bits.
func mulU64U32Shr32(a uint64, mul uint32) uint64 {
	hi, lo := bits.Mul64(a, uint64(mul))
	return hi<<32 | lo>>32
}

// accumulatePeltSegments returns the decayed contribution of a span that
// crossed periods boundaries:
//
//	d1·y^p + 1024·Σ_{n=1}^{p-1} y^n + d3
//
// where d1 is what was left of the old period and d3 the part of the current
// one. The middle sum is LOAD_AVG_MAX − LOAD_AVG_MAX·y^p − 1024, so the cost
// is two decays whatever p is.
//
// pelt.c: __accumulate_pelt_segments(). All three terms are u32 there, so
// the arithmetic is done in uint32 here too.
func accumulatePeltSegments(periods uint64, d1, d3 uint32) uint32 {
	c1 := uint32(DecayLoad(uint64(d1), periods))
	c2 := LoadAvgMax - uint32(DecayLoad(LoadAvgMax, periods)) - periodUnits
	return c1 + c2 + d3
}
