package bench

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	gold "github.com/rqemu/rqemu/internal/golden"
)

// golden compares got with testdata/<name> (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { gold.Check(t, name, got) }

func machine(t testing.TB, name string) *hwmodel.Machine {
	t.Helper()
	m, err := hwmodel.Load(name, hwmodel.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// build parses a workload's flags for a machine, as emu run does; a
// command line that does not parse is a *FlagError too.
func build(topo *hwmodel.Machine, name string, args ...string) (Workload, error) {
	w, err := Build(name, args, topo)
	var pe *ParseError
	if errors.As(err, &pe) {
		var fe *FlagError
		if errors.As(pe.Err, &fe) {
			return nil, pe.Err
		}
		return nil, &FlagError{Flag: "flags", Msg: pe.Err.Error()}
	}
	return w, err
}

// runW runs a workload on a preset with the serial driver and the
// conservation checks on, and returns the result and the report.
func runW(t testing.TB, topo, feat string, seed uint64, name string, args ...string) (*Result, string) {
	t.Helper()
	m := machine(t, topo)
	w, err := build(m, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return runFeat(t, m, w, feat, seed)
}

// setUp builds a workload on m and sets it up on a new Sim (seed 1)
// without running it: where its tasks start.
func setUp(t testing.TB, m *hwmodel.Machine, name string, args ...string) *emu.Sim {
	t.Helper()
	w, err := build(m, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := emu.New(emu.Config{Machine: m, Seed: 1, Driver: "serial"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Setup(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// runWorkload runs a built workload on m (v6.6-eevdf, seed 1) as runW.
func runWorkload(t testing.TB, m *hwmodel.Machine, w Workload) (*Result, string) {
	t.Helper()
	return runFeat(t, m, w, "v6.6-eevdf", 1)
}

func runFeat(t testing.TB, m *hwmodel.Machine, w Workload, feat string, seed uint64) (*Result, string) {
	t.Helper()
	f, _, err := emu.ParseFeatures(feat)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(w, RunConfig{Machine: m, Features: f, Seed: seed, Driver: "serial", Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("%T on %s did not complete", w, m.Name)
	}
	var b bytes.Buffer
	if err := w.Report(&b, res.Sim); err != nil {
		t.Fatal(err)
	}
	return res, b.String()
}

// metric runs a workload and returns its primary metric.
func metric(t testing.TB, topo, feat string, name string, args ...string) float64 {
	t.Helper()
	res, _ := runW(t, topo, feat, 1, name, args...)
	m := res.Workload.Metrics(res.Sim)
	v, ok := m.Values[m.Primary]
	if !ok {
		t.Fatalf("%s: primary metric %q missing from %v", name, m.Primary, m.Values)
	}
	return v
}

// driversAgree runs a workload (args[0], its flags after) under the
// serial and the parallel driver and fails unless both complete with the
// same bytes: the report, /proc/schedstat and every task's counters.
func driversAgree(t *testing.T, topo, feat string, seed uint64, workers int, args ...string) {
	t.Helper()
	serial := runBytes(t, topo, feat, seed, "serial", workers, args...)
	parallel := runBytes(t, topo, feat, seed, "parallel", workers, args...)
	if !bytes.Equal(serial, parallel) {
		t.Errorf("%s %s %v: serial and parallel drivers differ:\nserial:\n%s\nparallel:\n%s", topo, feat, args, serial, parallel)
	}
}

// runBytes runs a workload with a driver and returns its report, the
// /proc/schedstat counters and every task's counters.
func runBytes(t *testing.T, topo, feat string, seed uint64, driver string, workers int, args ...string) []byte {
	t.Helper()
	m := machine(t, topo)
	f, _, err := emu.ParseFeatures(feat)
	if err != nil {
		t.Fatal(err)
	}
	w, err := build(m, args[0], args[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(w, RunConfig{Machine: m, Features: f, Seed: seed, Driver: driver, Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("%s %v, %s driver: run did not complete", topo, args, driver)
	}
	var b bytes.Buffer
	if err := w.Report(&b, res.Sim); err != nil {
		t.Fatal(err)
	}
	if err := res.Sim.WriteSchedstat(&b); err != nil {
		t.Fatal(err)
	}
	if err := res.Sim.WriteTaskStats(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
