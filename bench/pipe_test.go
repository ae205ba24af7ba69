package bench

import (
	"errors"
	"testing"
)

func TestPipeGolden(t *testing.T) {
	_, out := runW(t, "hikey-8", "v6.6-eevdf", 1, "pipe", "-l", "2000")
	golden(t, "pipe/hikey-8.golden", []byte(out))
}

// More loops take proportionally longer; the per-op time stays put.
func TestPipeLoops(t *testing.T) {
	short := metric(t, "xeon-e5-2x10", "v6.6-eevdf", "pipe", "-l", "1000")
	long := metric(t, "xeon-e5-2x10", "v6.6-eevdf", "pipe", "-l", "4000")
	if r := long / short; r < 0.8 || r > 1.25 {
		t.Errorf("ops/sec at 4000 loops / at 1000 = %.3f, want ≈1", r)
	}
}

// A cgroup adds the group levels' work to every wakeup: fewer ops/s.
func TestPipeCgroupCosts(t *testing.T) {
	root := metric(t, "xeon-e5-2x10", "v6.6-eevdf", "pipe", "-l", "2000")
	nested := metric(t, "xeon-e5-2x10", "v6.6-eevdf", "pipe", "-l", "2000", "-cgroup", "system.slice/docker")
	if nested >= root {
		t.Errorf("ops/s in a 2-level cgroup %.0f >= at the root %.0f", nested, root)
	}
}

func TestPipeBadLoops(t *testing.T) {
	_, err := build(machine(t, "hikey-8"), "pipe", "-l", "-5")
	var fe *FlagError
	if !errors.As(err, &fe) || fe.Flag != "-l" {
		t.Fatalf("err = %v, want a FlagError on -l", err)
	}
}
