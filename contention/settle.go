package contention

import "time"

// Settling. The probes measure this machine, so what else runs on it
// lands in their samples: a build finishing, or the hundreds of children
// a perf bench sched messaging run leaves exiting behind it. Before
// probing, Settle waits (up to a bound) until other processes use less
// than a share of the CPUs over a short sample; the probes' spread check
// still refuses a fit if the machine gets busy again while they run.

// SettleSample is how long each of Settle's load samples is.
const SettleSample = 250 * time.Millisecond

// DefaultSettleLoad is the share of the CPUs other processes may use for
// the machine to count as quiet.
const DefaultSettleLoad = 0.10

// Settle waits until other processes use less than limit of the CPUs
// over one SettleSample, or until max has passed. It returns the time
// waited and the last sample's load, -1 where /proc/stat cannot be read
// (then it does not wait).
func Settle(max time.Duration, limit float64) (time.Duration, float64) {
	return settle(max, limit, func() float64 {
		m := StartLoad()
		time.Sleep(SettleSample)
		return m.Other()
	})
}

// settle is Settle with its sampler: each call takes one sample and
// returns the others' load over it.
func settle(max time.Duration, limit float64, sample func() float64) (time.Duration, float64) {
	var waited time.Duration
	for {
		load := sample()
		waited += SettleSample
		if load < 0 || load < limit || waited >= max {
			return waited, load
		}
	}
}
