package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// statusLine is a progress report on stderr: one line rewritten in place
// (\r, then ESC[K to erase it) on a terminal; on anything else (a file, a
// pipe, a CI log) plain lines, at most one every plainEvery and the final
// one, so that a log gets no control characters.
type statusLine struct {
	w       io.Writer
	tty     bool
	last    time.Time
	printed bool
}

// plainEvery is how often a statusLine writes to a non-terminal.
const plainEvery = 10 * time.Second

func newStatusLine(w io.Writer) *statusLine { return &statusLine{w: w, tty: isTerminal(w)} }

// show writes text as the current status; final ends the line (a
// terminal's) or is always written (a log's).
func (s *statusLine) show(text string, final bool) {
	if s.tty {
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(s.w, "\r%s   %s", text, end)
		s.printed = !final
		return
	}
	if now := time.Now(); final || !s.printed || now.Sub(s.last) >= plainEvery {
		fmt.Fprintln(s.w, text)
		s.last, s.printed = now, true
	}
}

// note writes a line of its own (a warning), erasing a terminal's status
// line first; the next show draws the status again.
func (s *statusLine) note(text string) {
	s.clear()
	fmt.Fprintln(s.w, text)
}

// clear erases a terminal's status line, if one is shown.
func (s *statusLine) clear() {
	if s.tty && s.printed {
		fmt.Fprint(s.w, "\r\033[K")
		s.printed = false
	}
}

// isTerminal reports whether w is a terminal (TCGETS succeeds on it).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
