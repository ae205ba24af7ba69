package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestStatusLine: on a log (not a terminal) the progress report is plain
// lines, the first and the final one here, with no carriage return or
// escape sequence; on a terminal one line rewritten in place and erased.
func TestStatusLine(t *testing.T) {
	var log bytes.Buffer
	s := newStatusLine(&log)
	if s.tty {
		t.Fatal("a bytes.Buffer taken for a terminal")
	}
	s.show("emu sweep: 1/3 written", false)
	s.show("emu sweep: 2/3 written", false) // within plainEvery: not written
	s.show("emu sweep: 3/3 written", true)
	s.clear()
	if got, want := log.String(), "emu sweep: 1/3 written\nemu sweep: 3/3 written\n"; got != want {
		t.Errorf("log got %q, want %q", got, want)
	}
	if strings.ContainsAny(log.String(), "\r\x1b") {
		t.Errorf("control characters in a log: %q", log.String())
	}

	var term bytes.Buffer
	s = &statusLine{w: &term, tty: true}
	s.show("emu: 0.1 s", false)
	s.show("emu: 0.2 s", false)
	s.clear()
	if got, want := term.String(), "\remu: 0.1 s   \remu: 0.2 s   \r\x1b[K"; got != want {
		t.Errorf("terminal got %q, want %q", got, want)
	}

	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file taken for a terminal")
	}
}

// TestUnknownFlagSuggests: an unknown flag names the closest defined one,
// and hackbench's real -F/--fifo says SCHED_FIFO is not modeled; exit 2.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-workload", "hackbench", "--group", "2"}, "did you mean -groups?"},
		{[]string{"run", "-topology", "hikey-8"}, "did you mean -topo?"},
		{[]string{"run", "-workload", "hackbench", "-F"}, "SCHED_FIFO is not modeled"},
		{[]string{"run", "-workload", "hackbench", "--fifo"}, "SCHED_FIFO is not modeled"},
	} {
		code, _, errs := runEmu(tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}
