package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/emu"
)

// shortBound runs a workload under a safety bound of lim ns instead of
// its own, as if the bound had been reached.
type shortBound struct {
	Workload
	lim int64
}

func (w shortBound) Limit() int64 { return w.lim }

// TestSafetyBoundStoppedEarly: hackbench, messaging and pipe stopped by
// their safety bound print a "stopped early" line over the work done, as
// an interrupted run does (issue 44; pipe printed none), and their
// LoopsDone is the share of the work done.
func TestSafetyBoundStoppedEarly(t *testing.T) {
	m := machine(t, "hikey-8")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"hackbench", []string{"-g", "1", "-l", "1000"}, "of the 400000 messages were sent"},
		{"messaging", []string{"-g", "1", "-l", "1000"}, "of the 400000 messages were sent"},
		{"pipe", []string{"-l", "100000"}, "of the 100000 round trips were done"},
	} {
		w, err := build(m, c.name, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		f, _, _ := emu.ParseFeatures("v6.6-eevdf")
		res, err := Execute(shortBound{w, 20_000_000}, RunConfig{Machine: m, Features: f, Seed: 1, Driver: "serial"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete {
			t.Fatalf("%s: complete within 20 ms: the test needs a longer run", c.name)
		}
		var b bytes.Buffer
		if err := w.Report(&b, res.Sim); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "stopped early: 0.020 s ran") || !strings.Contains(b.String(), c.want) {
			t.Errorf("%s stopped by its bound: no \"stopped early\" line with %q:\n%s", c.name, c.want, b.String())
		}
		if f := w.(LoopProgress).LoopsDone(); !(f > 0 && f < 1) {
			t.Errorf("%s: LoopsDone %g after 20 ms of a longer run", c.name, f)
		}
	}
}
