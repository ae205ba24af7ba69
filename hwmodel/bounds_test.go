package hwmodel

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreqBounds: freq_mhz and freq_ref_mhz reject NaN, infinities and
// denormals (a comparison with NaN is false, so "<= 0 || > 10000" let it
// through), and at the extremes allowed every cost converts to a
// positive int64 of ns (issue 40, item 2).
func TestFreqBounds(t *testing.T) {
	data, err := PresetSpec("hikey-8")
	if err != nil {
		t.Fatal(err)
	}
	spec := func() *Spec {
		s, err := DecodeSpec(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		field     string
		freq, ref float64
	}{
		{"freq_mhz", math.NaN(), 0}, {"freq_mhz", 1e-300, 0}, {"freq_mhz", math.Inf(1), 0},
		{"freq_mhz", 0.5, 0}, {"freq_mhz", 10001, 0},
		{"freq_ref_mhz", 1200, math.NaN()}, {"freq_ref_mhz", 1200, 1e-300}, {"freq_ref_mhz", 1200, math.Inf(1)},
	} {
		s := spec()
		s.FreqMHz, s.FreqRefMHz = c.freq, c.ref
		_, err := Build(s)
		var se *SpecError
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("freq_mhz %v, freq_ref_mhz %v: error %v, want one naming %s", c.freq, c.ref, err, c.field)
		}
	}
	s := spec()
	s.FreqMHz = 1
	for op := KernelOp(0); op < NumKernelOps; op++ {
		*kernelOps[op].field(&s.Costs) = &Sourced{Value: MaxSourced, Source: "[E] the bound"}
	}
	m, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	for op := KernelOp(0); op < NumKernelOps; op++ {
		if ns := m.Cost(op); ns <= 0 || ns > 1e10 {
			t.Errorf("%s: %d ns at 1 MHz and %g cycles", kernelOps[op].name, ns, float64(MaxSourced))
		}
	}
}

// TestYAMLBounds: the structural pre-scan passes every preset, host spec
// and calibration file of the repository, and stops documents past its
// bounds at the line where they pass them (issue 40, item 6).
func TestYAMLBounds(t *testing.T) {
	var docs [][]byte
	for _, name := range PresetNames() {
		if name == HostPreset {
			continue
		}
		d, err := PresetSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	for _, pat := range []string{"testdata/host/*.yaml", "testdata/calib/*.yaml"} {
		files, _ := filepath.Glob(pat)
		for _, f := range files {
			d, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, d)
		}
	}
	for i, d := range docs {
		if err := checkYAMLBounds(d, specBounds); err != nil {
			t.Errorf("document %d: %v", i, err)
		}
	}
	keys := func(n int, sep string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "k%d: 1%s", i, sep)
		}
		return b.String()
	}
	items := func(n int) string { return strings.Repeat("- 1\n", n) }
	for _, c := range []struct {
		name, doc, want string
	}{
		{"257 block keys", keys(257, "\n"), "line 257: a mapping of more than 256 keys"},
		{"256 block keys", keys(256, "\n"), ""},
		{"257 flow keys", "{" + keys(257, ", ") + "}", "line 1: a mapping of more than 256 keys"},
		{"257 quoted keys", strings.NewReplacer("k", `"k`, ":", `":`).Replace(keys(257, "\n")), "line 257: a mapping of more than 256 keys"},
		{"8193 items", "l:\n" + items(8193), "line 8194: a list of more than 8192 items"},
		{"8192 items under a key", "l:\n" + items(8192) + "m: 1\n", ""},
		{"flow list of 8193", "l: [" + strings.Repeat("1, ", 8192) + "1]", "a list of more than 8192 items"},
		{"17 levels of flow", "a: " + strings.Repeat("[", 17), "nested deeper than 16"},
		{"17 levels of blocks", func() string {
			var b strings.Builder
			for i := range 17 {
				b.WriteString(strings.Repeat(" ", i) + "k:\n")
			}
			return b.String()
		}(), "nested deeper than 16"},
		{"brackets in a quoted string", `a: "` + strings.Repeat("[", 100) + `"`, ""},
		{"brackets in a block scalar", "a: |\n  " + strings.Repeat("[", 100) + "\nb: 1\n", ""},
		{"brackets in a comment", "a: 1 # " + strings.Repeat("[", 100), ""},
	} {
		err := checkYAMLBounds([]byte(c.doc), specBounds)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
