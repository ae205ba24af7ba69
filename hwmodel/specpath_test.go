package hwmodel

import (
	"bytes"
	"strings"
	"testing"
)

// Load's Edit changes the one number it sets and nothing else: the spec
// encoded before and after differs in that number's value line only, for
// every sourced number a preset gives, and the machine built carries it.
func TestLoadEditChangesOneNumber(t *testing.T) {
	for _, preset := range []string{"spr-2s", "icl-2s", "epyc-9654-2s"} {
		for _, path := range SourcedPaths() {
			var before, after bytes.Buffer
			var old float64
			m, err := Load(preset, LoadOptions{Edit: func(s *Spec) error {
				src, err := s.Sourced(path)
				if err != nil || src == nil {
					return err
				}
				old = src.Value
				if err := s.Encode(&before); err != nil {
					return err
				}
				if err := s.SetValue(path, fitEditValue(path, old)); err != nil {
					return err
				}
				return s.Encode(&after)
			}})
			if err != nil {
				t.Fatalf("%s %s: %v", preset, path, err)
			}
			if before.Len() == 0 {
				continue // the preset leaves it out
			}
			b, a := strings.Split(before.String(), "\n"), strings.Split(after.String(), "\n")
			if len(a) != len(b) {
				t.Fatalf("%s %s: %d lines before, %d after", preset, path, len(b), len(a))
			}
			var diff []int
			for i := range b {
				if a[i] != b[i] {
					diff = append(diff, i)
				}
			}
			key := path[strings.IndexByte(path, '.')+1:] + ":"
			if len(diff) != 1 || !strings.Contains(a[diff[0]], "value:") || !strings.HasSuffix(strings.TrimSpace(a[diff[0]-1]), key) {
				t.Errorf("%s %s: lines %v changed, want only its value line", preset, path, diff)
			}
			if path == "latency_ns.smt_yield" && m.Lat.SMTYield != fitEditValue(path, old) {
				t.Errorf("%s: machine's SMTYield %v, want %v", preset, m.Lat.SMTYield, fitEditValue(path, old))
			}
			if path == "costs_cycles.pipe_write" && m.Costs.Cycles[OpPipeWrite] != fitEditValue(path, old) {
				t.Errorf("%s: machine's pipe_write %v cycles, want %v", preset, m.Costs.Cycles[OpPipeWrite], fitEditValue(path, old))
			}
		}
	}
}

// fitEditValue is a valid new value for path: a fraction for smt_yield,
// a whole number for the counts, otherwise 1.5x.
func fitEditValue(path string, old float64) float64 {
	switch path {
	case "latency_ns.smt_yield":
		return old / 2
	case "latency_ns.burst", "latency_ns.mlp":
		return old + 1
	}
	return old * 1.5
}

func TestSpecPathErrors(t *testing.T) {
	s := &Spec{Name: "x"}
	if err := s.SetValue("latency_ns.nope", 1); err == nil || !strings.Contains(err.Error(), "latency_ns.smt_yield") {
		t.Errorf("unknown path: %v, want an error listing the paths", err)
	}
	if err := s.SetValue("costs_cycles.pipe_write", 1); err == nil || !strings.Contains(err.Error(), "does not give it") {
		t.Errorf("absent number: %v", err)
	}
	if _, err := Load("host", LoadOptions{Edit: func(*Spec) error { return nil }}); err == nil {
		t.Error("Edit on the host preset: no error")
	}
}
