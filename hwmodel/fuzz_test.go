package hwmodel

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSpec: any bytes given as a spec file are decoded and built without
// a panic, and rejected (if at all) with a *SpecError naming a field; a
// machine that builds prints (emu topo). Seeds: every preset, the tiny
// explicit spec of the tests and the recorded hosts.
func FuzzSpec(f *testing.F) {
	for _, name := range PresetNames() {
		if name == HostPreset {
			continue // detected, not a spec file
		}
		data, err := PresetSpec(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(tinySpec))
	hosts, _ := filepath.Glob("testdata/host/*.yaml")
	for _, h := range hosts {
		data, err := os.ReadFile(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSpec(bytes.NewReader(data))
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) || se.Field == "" {
				t.Fatalf("decode error %v is not a *SpecError naming a field", err)
			}
			return
		}
		m, err := Build(s)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) || se.Field == "" {
				t.Fatalf("build error %v is not a *SpecError naming a field", err)
			}
			return
		}
		if err := m.WriteTopo(io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteTopoJSON(io.Discard); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzCalib: any bytes given as a calibration file are decoded, and if
// valid applied to a machine without SMT and to one with SMT and two
// sockets, without a panic; errors from applying are *SpecErrors (-calib).
func FuzzCalib(f *testing.F) {
	seed, err := os.ReadFile("testdata/calib/kvm-2vcpu-genoa.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("host: x\npingpong_ns: {smt: 10, socket: 80, remote: 150}\nhammer2_class: smt\nhammer2_shared_ns: 3\n"))
	f.Add([]byte("host: x\npipe_rtt_us: 1e6\npipe_rtt_1cpu_us: 0.001\n"))
	f.Add([]byte("pingpong_ns: {llc: .nan}\n"))
	f.Add([]byte("host: x\nsyscall_ns: 1079\npipe_msg_ns: 2743\nunix_msg_ns: 3556\npipe_rtt_1cpu_us: 8.37\npipe_rtt_us: 22.39\n"))
	f.Add([]byte("host: x\nsyscall_ns: 1e6\npipe_msg_ns: 1\npipe_rtt_1cpu_us: 0.001\n"))
	id := HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596, LineBytes: 64, L1dKiB: 32, L2KiB: 1024, L3KiB: 32768}
	hs, err := HostSpec(os.DirFS("testdata/sysfs/kvm-2vcpu-genoa"), id)
	if err != nil {
		f.Fatal(err)
	}
	host, err := Build(hs)
	if err != nil {
		f.Fatal(err)
	}
	xeon, err := Load("xeon-e5-2x10", LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCalib(data)
		if err != nil {
			return
		}
		for _, m := range []*Machine{host, xeon} {
			if _, err := c.Apply(m, closedHammer); err != nil {
				var se *SpecError
				if !errors.As(err, &se) {
					t.Fatalf("apply error %v is not a *SpecError", err)
				}
			}
		}
	})
}
