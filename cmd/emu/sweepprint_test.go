package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepPrintNewDir: the commands `emu sweep -print -o DIR/` prints run
// as GNU parallel or xargs would run them, with DIR not there yet: each
// point's `emu run -o DIR/run-NNNN.ndjson` creates it (before, the output
// check refused the missing directory and every point failed).
func TestSweepPrintNewDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out", "sub") + "/"
	code, out, errs := runEmu("sweep", "-print", "-o", dir, "-topo", "hikey-8", "-features", "v6.7-eevdf|v6.6-eevdf",
		"-seeds", "1", "-workload", "pipe", "-l", "100")
	if code != 0 {
		t.Fatalf("sweep -print: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("sweep -print printed %d commands, want 2:\n%s", len(lines), out)
	}
	for _, l := range lines {
		args := strings.Fields(strings.TrimSuffix(l, " >/dev/null"))
		if args[0] != "emu" {
			t.Fatalf("not an emu command: %s", l)
		}
		if code, _, errs := runEmu(args[1:]...); code != 0 {
			t.Fatalf("%s: exit %d: %s", l, code, errs)
		}
	}
	got, _ := filepath.Glob(filepath.Join(dir, "run-*.ndjson"))
	if len(got) != 2 {
		t.Errorf("%d records in %s, want 2", len(got), dir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Error(err)
	}
}
