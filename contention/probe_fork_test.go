package contention

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestForkFaults: every counted batch (the warm-up excluded) gives a
// positive fault time, a remote one where a second CPU is allowed, and
// positive exits; no child is left unreaped and no descriptor open; bad
// sizes are refused.
func TestForkFaults(t *testing.T) {
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	other := -1
	if len(cpus) > 1 {
		other = cpus[1]
	}
	fds := openFDs(t)
	r, err := ForkFaults(cpus[0], other, 64, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantRemote := 3
	if other < 0 {
		wantRemote = 0
	}
	for _, s := range []struct {
		name string
		v    []float64
		n    int
	}{{"cow", r.CoWUs, 3}, {"cow remote", r.CoWRemoteUs, wantRemote}, {"exit", r.ExitUs, 3}, {"exit base", r.ExitBaseUs, 3}} {
		if len(s.v) != s.n {
			t.Errorf("%s: %d samples %v, want %d", s.name, len(s.v), s.v, s.n)
		}
		for _, v := range s.v {
			if !(v > 0) {
				t.Errorf("%s: sample %v, want positive", s.name, v)
			}
		}
	}
	if _, err := unix.Wait4(-1, nil, unix.WNOHANG, nil); !errors.Is(err, unix.ECHILD) {
		t.Errorf("wait4 after the probe: %v, want ECHILD (a child left unreaped)", err)
	}
	if got := openFDs(t); fds >= 0 && got != fds {
		t.Errorf("%d descriptors open after the probe, %d before", got, fds)
	}
	if _, err := ForkFaults(cpus[0], other, 0, 3); err == nil {
		t.Error("ForkFaults with 0 pages: no error")
	}
}

// TestForkChildCopies: the child is a process of its own, not a thread
// (clone without CLONE_VM): its writes land in its copies of the pages,
// so the parent's bytes keep their value, and it reports its time.
func TestForkChildCopies(t *testing.T) {
	const page, pages = 4096, 8
	mem, err := unix.Mmap(-1, 0, pages*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	for i := 0; i < len(mem); i += page {
		mem[i] = 1
	}
	c, err := startChild(unsafe.Pointer(&mem[0]), pages)
	if err != nil {
		t.Fatal(err)
	}
	defer c.kill()
	us, err := c.faults(pages)
	if err != nil {
		t.Fatal(err)
	}
	if !(us > 0) {
		t.Errorf("the child's time per fault %v, want positive", us)
	}
	for i := 0; i < len(mem); i += page {
		if mem[i] != 1 {
			t.Fatalf("page %d holds %d after the child wrote its copy: the child shares the parent's memory", i/page, mem[i])
		}
	}
	if _, err := c.exit(); err != nil {
		t.Fatal(err)
	}
}

// TestExitPerPage: the exit's share per page is the difference of the
// two medians over the pages, so one disturbed exit moves neither.
func TestExitPerPage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		exit, base []float64
		pages      int
		want       float64
	}{
		{"quiet", []float64{900, 910, 905}, []float64{500, 505, 495}, 1000, 0.405},
		{"one preempted exit", []float64{900, 9100, 905, 910, 902}, []float64{500, 505, 495, 501, 499}, 1000, 0.405},
		{"no pages", []float64{900}, []float64{500}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ForkResult{Pages: tc.pages, ExitUs: tc.exit, ExitBaseUs: tc.base}
			if got := r.ExitPerPageUs(); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("ExitPerPageUs = %v, want %v", got, tc.want)
			}
		})
	}
}
