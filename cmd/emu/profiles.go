package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/felixge/fgprof"
)

// startProfiles starts the Go CPU profile and fgprof of the emulator;
// stop ends them and returns the first error writing either (an error
// names its flag).
func startProfiles(cpuFile, fgFile string) (stop func() error, err error) {
	var stops []func() error
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		// runtime/pprof drops the profile's write errors: keep the first.
		ew := &errWriter{w: f}
		if err := pprof.StartCPUProfile(ew); err != nil {
			f.Close()
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		stops = append(stops, func() error {
			pprof.StopCPUProfile()
			return closeProfile("-cpuprofile", f, ew.err)
		})
	}
	if fgFile != "" {
		f, err := os.Create(fgFile)
		if err != nil {
			return nil, fmt.Errorf("-fgprof: %w", err)
		}
		t0 := time.Now()
		fstop := fgprof.Start(f, fgprof.FormatPprof)
		stops = append(stops, func() error {
			return closeProfile("-fgprof", f, stopFgprof(fstop, t0))
		})
	}
	return func() error {
		var first error
		for _, s := range stops {
			if err := s(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}, nil
}

// errWriter keeps the first error of its writes.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// closeProfile closes a profile's file, returning err (the writing's)
// or the close's, named by flag.
func closeProfile(flag string, f *os.File, err error) error {
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// fgprofMinRun is how long fgprof must have run before its stop: its
// export divides by the sample rate it measured (fgprof v0.9.5,
// Start()'s stop function: sampleCount / duration), an integer divide
// by zero when its 99 Hz ticker never fired.
const fgprofMinRun = 3 * time.Second / 99

// stopFgprof stops fgprof, waiting out fgprofMinRun first, and turns a
// panic of its export (no sample despite the wait, on a loaded host)
// into an error.
func stopFgprof(stop func() error, t0 time.Time) (err error) {
	if d := time.Since(t0); d < fgprofMinRun {
		time.Sleep(fgprofMinRun - d)
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("no profile written: fgprof took no sample in the run's %v of host time (%v)", time.Since(t0).Round(time.Millisecond), v)
		}
	}()
	return stop()
}
