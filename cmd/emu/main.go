// Command emu is rqemu's command line: it emulates the Linux scheduler's
// runqueues of a big machine on a small one.
//
//	emu run [flags]           run a workload on an emulated machine
//	emu compare [flags]       compare two feature sets over seeds (lkp table)
//	emu reproduce STUDY       run a published study beside its figures
//	emu topo NAME|FILE        print a machine (lscpu/lstopo style)
//	emu calibrate             measure this host, compare with the host preset
//	emu features [SET]        list the scheduler switches and kernel profiles
//
// Run `emu CMD -h` or `emu help CMD` for a command's flags and examples,
// `emu --version` for the module version and the commit it was built from.
//
// Exit status: 0 success; 1 the run failed (it did not finish within its
// virtual-time bound, or an output could not be written); 2 bad input (an
// unknown topology, a malformed spec, a bad flag: the message names the
// flag or field and the allowed values); 3 an internal error (a recovered
// panic: a bug in rqemu, never the input's fault); 130 and 143 a run
// stopped by SIGINT or SIGTERM, after printing the result so far.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/rqemu/rqemu/emu"
)

// Exit statuses besides 0, 2 (bad input) and 128+signal.
const (
	exitFailed = 1
	exitCrash  = 3
)

// usageError is bad input: the message names the flag or field, and the
// command exits with status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"run", "run a workload (hackbench, netperf, schbench, ...) on an emulated machine", runRun},
	{"compare", "base vs patched feature set over seeds: the kernel test robot's table", runCompare},
	{"reproduce", "run a published study (tgload-udprr, host-pipe) beside its published figures", runReproduce},
	{"fit", "fit a preset family's constants to its calibration rows (issue 42)", runFit},
	{"topo", "print a machine: counts, cache/LLC tree, NUMA, latency by distance class", runTopo},
	{"calibrate", "measure this host (ping-pong, hammer, pipe) against the host preset", runCalibrate},
	{"features", "list the scheduler features and kernel profiles", runFeatures},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			code = crash(v, stderr)
		}
	}()
	switch {
	case len(args) == 0:
		mainUsage(stderr)
		return 2
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		mainUsage(stderr)
		return 0
	case args[0] == "help":
		return help(args[1:], stdout, stderr)
	case args[0] == "--version" || args[0] == "-version" || args[0] == "version":
		fmt.Fprintln(stdout, version())
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			return exitCode(err, stderr)
		}
	}
	fmt.Fprintf(stderr, "emu: unknown command %q\n\n", args[0])
	mainUsage(stderr)
	return 2
}

// help is `emu help [CMD]`: the top-level usage, or CMD's (its -h), on
// stdout.
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		mainUsage(stdout)
		return 0
	}
	for _, c := range commands {
		if c.name == args[0] {
			return exitCode(c.run([]string{"-h"}, stdout, stdout), stderr)
		}
	}
	fmt.Fprintf(stderr, "emu help: unknown command %q\n\n", args[0])
	mainUsage(stderr)
	return 2
}

// version is `emu --version`: the module's version and the commit it was
// built from, as the Go toolchain stamps them (go build and go install
// do; go run and go test leave the commit out).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "emu: no build information (built without module support)"
	}
	var rev, when, dirty string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.time":
			when = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = ", with uncommitted changes"
			}
		}
	}
	commit := "commit unknown (not stamped: go build and go install stamp it; go run, go test and -buildvcs=false leave it out)"
	if rev != "" {
		commit = "commit " + rev
		if when != "" {
			commit += " (" + when + ")"
		}
		commit += dirty
	}
	return fmt.Sprintf("emu %s %s, %s, %s", bi.Main.Path, bi.Main.Version, commit, bi.GoVersion)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "emu:", err)
	var ue *usageError
	if errors.As(err, &ue) || isInputError(err) {
		return 2
	}
	if errors.Is(err, errInterrupted) {
		return 128 + int(caughtSignal())
	}
	return exitFailed
}

// crash reports a recovered panic: an internal error, whatever the input,
// with the stack where it was raised (a CPU's, for a panic while the
// engine stepped it).
func crash(v any, stderr io.Writer) int {
	stack := debug.Stack()
	msg := fmt.Sprint(v)
	if p, ok := v.(*emu.CPUPanic); ok {
		msg, stack = p.Error(), p.Stack
	}
	fmt.Fprintf(stderr, "\nemu: internal error (a bug in rqemu, not a problem with the input; please report it with the command line): %s\n\n%s", msg, stack)
	return exitCrash
}

func mainUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: emu COMMAND [flags]")
	fmt.Fprintln(w, "\nrqemu emulates the Linux scheduler's runqueues of a big machine on a small one.")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'emu COMMAND -h' or 'emu help COMMAND' for the command's flags and examples,")
	fmt.Fprintln(w, "'emu --version' for the version and commit.")
}

// newFlags returns a flag set whose parse errors are usage errors.
func newFlags(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("emu "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fmt.Fprintln(stderr, "flags:")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, turning errors into usage errors (exit 2).
func parse(fs *flag.FlagSet, args []string) error {
	return quietParse(fs, "", func() error { return fs.Parse(args) })
}
