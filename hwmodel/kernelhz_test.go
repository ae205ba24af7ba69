package hwmodel

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestKernelHZ: the running kernel's CONFIG_HZ from /proc/config.gz, else
// /boot/config-RELEASE, else none (the preset's hz stands); a malformed
// or out-of-range value is no value, and the note names the source.
func TestKernelHZ(t *testing.T) {
	const cfg250 = "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_HZ_250=y\nCONFIG_HZ=250\nCONFIG_SCHED_HRTICK=y\n"
	const cfg1000 = "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n"
	for _, tc := range []struct {
		name       string
		proc, boot []byte
		hz         int
		note       string
	}{
		{"proc", gz(t, cfg250), []byte(cfg1000), 250, "/proc/config.gz"},
		{"boot when no proc", nil, []byte(cfg1000), 1000, "/boot/config-6.18.0"},
		{"boot when proc is not gzip", []byte(cfg250), []byte(cfg1000), 1000, "/boot/config-6.18.0"},
		{"boot when proc lacks HZ", gz(t, "CONFIG_SMP=y\n"), []byte(cfg1000), 1000, "/boot/config-6.18.0"},
		{"neither", nil, nil, 0, "preset's"},
		{"malformed", gz(t, "CONFIG_HZ=fast\n"), []byte("CONFIG_HZ=\n"), 0, "preset's"},
		{"out of range", gz(t, "CONFIG_HZ=24\n"), []byte("CONFIG_HZ=100000\n"), 0, "preset's"},
		{"comment only", nil, []byte("# CONFIG_HZ is not set\n"), 0, "preset's"},
	} {
		hz, note := kernelHZ(tc.proc, tc.boot, "6.18.0")
		if hz != tc.hz || !strings.Contains(note, tc.note) {
			t.Errorf("%s: hz %d (%q), want %d and a note naming %q", tc.name, hz, note, tc.hz, tc.note)
		}
	}
}

// TestHostSpecTakesKernelHZ: a detected host runs at its kernel's tick
// (the spec's hz), not the stand-in preset's, when the identity knows it.
func TestHostSpecTakesKernelHZ(t *testing.T) {
	for _, hz := range []int{0, 250} {
		id := HostIdentity{Vendor: "amd", Model: "AMD EPYC", Arch: "x86_64", FreqMHz: 2596.14, KernelHZ: hz}
		s, err := HostSpec(os.DirFS(filepath.Join("testdata", "sysfs", "kvm-2vcpu-genoa")), id)
		if err != nil {
			t.Fatal(err)
		}
		want := hz
		if hz == 0 {
			p, err := PresetSpec(hostPresetFor(id.Vendor, id.Arch))
			if err != nil {
				t.Fatal(err)
			}
			ps, err := DecodeSpec(bytes.NewReader(p))
			if err != nil {
				t.Fatal(err)
			}
			want = ps.HZ
		}
		if s.HZ != want {
			t.Errorf("identity hz %d: spec hz %d, want %d", hz, s.HZ, want)
		}
	}
}
