package emu

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

var metamorphicN = flag.Int("metamorphic", 1, "TestMetamorphicKernels: random kernels per preset")

// TestMetamorphicKernels: whatever the kernel (a profile with switches
// flipped and tunables set at random), the serial and the parallel driver
// give the same bytes, and the conservation checks hold (Config.Check). The
// kernels are drawn from a seeded generator, one per preset by default and
// -metamorphic N under the flag; a kernel the parser refuses (a tunable its
// kind of kernel lacks, sched_util_clamp_min above _max) is drawn again.
// Skipped under the race detector: scripts/test runs it without.
func TestMetamorphicKernels(t *testing.T) {
	if raceEnabled {
		t.Skip("runs without the race detector (scripts/test)")
	}
	dur := ms
	if testing.Short() {
		dur = ms / 2
	}
	rng := rand.New(rand.NewPCG(20261206, 1))
	for _, topo := range hwmodel.PresetNames() {
		m := machine(t, topo)
		for k := 0; k < *metamorphicN; k++ {
			spec := randomKernel(t, rng)
			seed := rng.Uint64N(1000) + 1
			t.Logf("%s seed %d: %s", topo, seed, spec)
			serial := runDriverKernel(t, m, spec, "serial", seed, dur)
			par := runDriverKernel(t, m, spec, "parallel", seed, dur)
			if !bytes.Equal(serial, par) {
				t.Errorf("%s %q seed %d: serial and parallel differ:\n%s", topo, spec, seed, firstDiff(serial, par))
			}
		}
	}
}

// randomKernel draws a kernel spec (PROFILE,+X,-Y;sched:NAME=V,...) that
// ParseKernel accepts.
func randomKernel(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	profiles, all, knobs := ProfileNames(), AllFeatures(), Knobs()
	for range 100 {
		var b strings.Builder
		b.WriteString(profiles[rng.IntN(len(profiles))])
		for range rng.IntN(5) {
			f := all[rng.IntN(len(all))]
			sign := "+"
			if rng.IntN(2) == 0 {
				sign = "-"
			}
			fmt.Fprintf(&b, ",%s%s", sign, f)
		}
		var sched []string
		for _, kn := range knobs {
			if rng.IntN(3) != 0 {
				continue
			}
			hi := kn.Max
			if strings.HasSuffix(kn.Name, "_ns") {
				hi = min(hi, 10_000_000) // up to 10 ms: runs stay short
			}
			if kn.Name == "nr_migrate" {
				hi = 64
			}
			v := kn.Min
			if hi > kn.Min {
				v += rng.Uint64N(hi - kn.Min + 1)
			}
			sched = append(sched, fmt.Sprintf("%s=%d", kn.Name, v))
		}
		if len(sched) > 0 {
			b.WriteString(";sched:" + strings.Join(sched, ","))
		}
		if _, _, _, err := ParseKernel(b.String()); err == nil {
			return b.String()
		}
	}
	t.Fatal("no valid kernel in 100 draws")
	return ""
}
