package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	"golang.org/x/sys/unix"
)

// caught is the signal that stopped the run (0: none yet), stored by
// the signal goroutine and loaded by the main one.
var caught signalNote

// signalNote is a signal number guarded by mu.
type signalNote struct {
	mu sync.Mutex
	n  int32 // guarded by mu
}

// Store records n.
func (s *signalNote) Store(n int32) {
	s.mu.Lock()
	s.n = n
	s.mu.Unlock()
}

// Load is the last n stored.
func (s *signalNote) Load() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// caughtSignal is the signal that stopped the run: SIGINT unless SIGTERM
// came (tests close the stop channel without a signal).
func caughtSignal() syscall.Signal {
	if n := caught.Load(); n != 0 {
		return syscall.Signal(n)
	}
	return syscall.SIGINT
}

// maxEpoch bounds -epoch: far coarser than any useful schedule, and far
// from overflowing the clock.
const maxEpoch = time.Second

// warnEpoch says, once, what an -epoch past the machine's lookahead
// costs: an event for another CPU (a wakeup, an IPI) takes effect at the
// next barrier, up to an epoch late, so virtual times stretch (a pipe
// round trip waits an epoch per hop).
func warnEpoch(w io.Writer, epoch time.Duration, m *hwmodel.Machine) {
	la := emu.MachineLookahead(m)
	if int64(epoch) <= la {
		return
	}
	fmt.Fprintf(w, "emu: warning: -epoch %v is %.0fx %s's lookahead (%v, the exact schedule's epoch, -epoch 0): a wakeup or IPI for another CPU can take effect up to an epoch late, so virtual times and rates are approximate\n",
		epoch, float64(epoch)/float64(la), m.Name, time.Duration(la))
}

// onceWorkload rejects a repeated -workload: the workload's flags are
// declared by the first, so the usual "last one wins" cannot apply.
func onceWorkload(args []string) error {
	if seen := workloadValues(args); len(seen) > 1 {
		return usagef("-workload: given %d times (%s); give it once", len(seen), strings.Join(seen, ", "))
	}
	return nil
}

// parseFeatureFlag parses a feature-set flag, naming it in the error. An
// empty value is an error (the flag's default is the default profile).
func parseFeatureFlag(flag, spec string) (emu.Features, string, error) {
	if strings.TrimSpace(spec) == "" {
		return 0, "", usagef("%s: empty (allowed: a profile, %s, then +FEATURE/-FEATURE edits; emu features lists them)", flag, strings.Join(emu.ProfileNames(), ", "))
	}
	f, s, err := emu.ParseFeatures(spec)
	if err != nil {
		return 0, "", usagef("%s: %v", flag, err)
	}
	return f, s, nil
}

// checkOutputs checks, before a run, that each output file (flag, path;
// "" is not asked for) can be written: not a directory, not read-only, in
// a directory that exists. The file is left as it was. A FIFO, a device
// or a socket is not opened (opening a FIFO blocks until its reader
// comes, and the close would give that reader an end of file): access(2)
// says whether it may be written, and the write after the run opens it
// as a shell's redirection does, waiting for the reader.
func checkOutputs(outs [][2]string) error {
	for _, o := range outs {
		flag, path := o[0], o[1]
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		existed := err == nil
		switch {
		case existed && fi.IsDir():
			return usagef("%s: %s is a directory (allowed: a file to write)", flag, path)
		case existed && fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0:
			return usagef("%s: %s is read-only (allowed: a file to write)", flag, path)
		case existed && !fi.Mode().IsRegular():
			if err := unix.Access(path, unix.W_OK); err != nil {
				return usagef("%s: cannot write %s: %v", flag, path, err)
			}
			continue
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
		if err != nil {
			return usagef("%s: cannot write %s: %v", flag, path, unwrapPath(err))
		}
		f.Close()
		if !existed {
			os.Remove(path)
		}
	}
	return nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// unfinished is the error of a run that reached its virtual-time bound
// before the workload finished: the result printed covers only that time.
func unfinished(w bench.Workload) error {
	what := "its virtual-time bound"
	if n, ok := w.(bench.LimitNoter); ok {
		what = n.LimitNote()
	}
	return fmt.Errorf("the workload did not finish: the run reached %.3f s of virtual time, %s; the result above covers only that time", float64(w.Limit())/1e9, what)
}
