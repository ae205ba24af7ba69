package hwmodel

import (
	"fmt"
	"reflect"
	"strings"
)

// The spec's sourced numbers by path, "latency_ns.smt_yield" or
// "costs_cycles.pipe_write": what `emu fit` varies in memory through
// LoadOptions.Edit (study/fit.go).

// sourcedSections are the spec's sections of sourced numbers.
var sourcedSections = []struct {
	name  string
	field func(s *Spec) reflect.Value
}{
	{"latency_ns", func(s *Spec) reflect.Value { return reflect.ValueOf(&s.Latency).Elem() }},
	{"costs_cycles", func(s *Spec) reflect.Value { return reflect.ValueOf(&s.Costs).Elem() }},
}

// SourcedPaths are the paths of every sourced number a spec can give, in
// the spec's order.
func SourcedPaths() []string {
	var out []string
	var s Spec
	for _, sec := range sourcedSections {
		v := sec.field(&s)
		for i := range v.NumField() {
			out = append(out, sec.name+"."+yamlName(v.Type().Field(i)))
		}
	}
	return out
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// field is the *Sourced field at path.
func (s *Spec) field(path string) (reflect.Value, error) {
	secName, name, _ := strings.Cut(path, ".")
	for _, sec := range sourcedSections {
		if sec.name != secName {
			continue
		}
		v := sec.field(s)
		for i := range v.NumField() {
			if yamlName(v.Type().Field(i)) == name {
				return v.Field(i), nil
			}
		}
	}
	return reflect.Value{}, fmt.Errorf("%q is not a sourced number of a spec (allowed: %s)", path, strings.Join(SourcedPaths(), ", "))
}

// Sourced returns the number at path (nil when the spec leaves it out).
func (s *Spec) Sourced(path string) (*Sourced, error) {
	f, err := s.field(path)
	if err != nil {
		return nil, err
	}
	return f.Interface().(*Sourced), nil
}

// SetValue sets the value of the number at path, keeping its source; the
// spec must give the number (an edit never invents one).
func (s *Spec) SetValue(path string, v float64) error {
	f, err := s.field(path)
	if err != nil {
		return err
	}
	old := f.Interface().(*Sourced)
	if old == nil {
		return fmt.Errorf("%s: the spec %q does not give it", path, s.Name)
	}
	f.Set(reflect.ValueOf(&Sourced{Value: v, Source: old.Source}))
	return nil
}
