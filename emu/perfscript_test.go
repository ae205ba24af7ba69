package emu

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// stackcollapse is the fold of Brendan Gregg's stackcollapse-perf.pl
// (FlameGraph): a header line "comm pid ... event:" starts a sample, each
// "\taddr func+off (dso)" line is a frame (leaf first), the blank line
// ends it and adds one to "comm;root;...;leaf" (the offsets stripped).
func stackcollapse(t *testing.T, text string) map[string]int {
	t.Helper()
	header := regexp.MustCompile(`^(\S.+?)\s+(\d+)/*(\d+)*\s+`)
	frame := regexp.MustCompile(`^\s*(\w+)\s*(.+) \((\S*)\)`)
	out := map[string]int{}
	var comm string
	var stack []string
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "":
			if comm != "" {
				for i, j := 0, len(stack)-1; i < j; i, j = i+1, j-1 {
					stack[i], stack[j] = stack[j], stack[i]
				}
				out[strings.Join(append([]string{comm}, stack...), ";")]++
			}
			comm, stack = "", nil
		case frame.MatchString(line) && comm != "":
			m := frame.FindStringSubmatch(line)
			stack = append(stack, regexp.MustCompile(`\+0x[0-9a-f]+$`).ReplaceAllString(m[2], ""))
		case header.MatchString(line):
			comm = strings.TrimSpace(header.FindStringSubmatch(line)[1])
		default:
			t.Fatalf("stackcollapse: line %q is neither a sample header nor a frame", line)
		}
	}
	return out
}

// chainSim runs mixedWorkload for 20 ms on topo (v6.6-eevdf, serial)
// with the call chains recorded.
func chainSim(t *testing.T, topo string) *Sim {
	t.Helper()
	s, err := New(Config{Machine: machine(t, topo), Features: mustFeatures(t, "v6.6-eevdf"), Seed: 1, Check: true, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	s.EnableCallChains()
	mixedWorkload(t, s)
	s.Run(20 * ms)
	return s
}

// -perf-script folds into the chains of -profile: every folded stack's
// samples are its chain's share at 4000 Hz, and the folded stacks hold
// the chains -profile prints (a flame graph of the same profile).
func TestPerfScriptFolds(t *testing.T) {
	skipUnderRace(t)
	s := chainSim(t, "spr-2s")
	var b bytes.Buffer
	if err := s.WritePerfScript(&b); err != nil {
		t.Fatal(err)
	}
	folded := stackcollapse(t, b.String())
	if len(folded) == 0 {
		t.Fatalf("nothing folded:\n%.2000s", b.String())
	}
	total := 0
	for _, n := range folded {
		total += n
	}
	var ns int64
	chains := 0
	for _, rq := range s.cpus {
		for _, v := range rq.calls.ns {
			ns += v
			if v > 0 {
				chains++
			}
		}
	}
	// Each CPU's chain rounds down to whole samples.
	if want := int(ns * profileSampleHz / 1e9); total > want || total < want-chains {
		t.Errorf("%d samples folded, want about %d (%d ns at %d Hz)", total, want, ns, profileSampleHz)
	}
	found := false
	for k := range folded {
		if strings.Count(k, ";") >= 2 && !strings.HasPrefix(k, "swapper;") {
			found = true
		}
	}
	if !found {
		t.Errorf("no multi-frame kernel stack among %d folded stacks: %v", len(folded), folded)
	}
}

// -pprof reads back as the chains: go tool pprof's own parser
// (profile.Parse) finds every chain's ns, and `go tool pprof -top` prints
// the functions the profile charged most.
func TestPprofReadsBack(t *testing.T) {
	s := chainSim(t, "hikey-8")
	var b bytes.Buffer
	if err := s.WritePprof(&b, "test"); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var got, want int64
	deep := false
	for _, smp := range p.Sample {
		got += smp.Value[1]
		deep = deep || len(smp.Location) >= 2
	}
	for _, rq := range s.cpus {
		for _, v := range rq.calls.ns {
			want += v
		}
	}
	if got != want || !deep {
		t.Errorf("pprof holds %d ns (multi-frame stacks: %v), the chains %d", got, deep, want)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to run pprof -top")
	}
	f := filepath.Join(t.TempDir(), "emu.pprof")
	if err := os.WriteFile(f, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gobin, "tool", "pprof", "-top", "-sample_index=cpu", f).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("do_idle")) {
		t.Errorf("go tool pprof -top: %v\n%s", err, out)
	}
}
