package bench

import (
	"flag"
	"io"

	"github.com/rqemu/rqemu/hwmodel"
)

// Command is a workload's command line on its way to a Workload: the
// workload's Spec, the flag set its flags are declared on (with whatever
// flags the caller declared there first, emu run's engine flags), and
// the constructor those flags feed. Declare, then Parse, then Build: the
// one sequence every caller (emu run, compare, sweep, the studies, the
// tests) goes through.
type Command struct {
	Spec  Spec
	Flags *flag.FlagSet
	build func(*hwmodel.Machine) (Workload, error)
}

// Declare looks workload name up (an unknown one is Lookup's *FlagError)
// and declares its flags on fs.
func Declare(fs *flag.FlagSet, name string) (*Command, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return &Command{Spec: spec, Flags: fs, build: spec.Flags(fs)}, nil
}

// ParseError is a workload command line that does not parse (ParseArgs's
// error, unchanged in Err): bad input before any machine is looked at.
type ParseError struct{ Err error }

func (e *ParseError) Error() string { return e.Err.Error() }
func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads args on the command's flag set as ParseArgs does; an
// error is a *ParseError.
func (c *Command) Parse(args []string) error {
	if err := ParseArgs(c.Flags, c.Spec, args); err != nil {
		return &ParseError{Err: err}
	}
	return nil
}

// Build validates the parsed flags against m and returns the workload
// (its errors name the flag and the allowed values, as *FlagError).
func (c *Command) Build(m *hwmodel.Machine) (Workload, error) { return c.build(m) }

// Build makes workload name from its own command line args (flags and
// positional arguments, as the real tool reads them) for m, on a flag set
// of its own: Lookup's error for an unknown name, a *ParseError for a
// command line that does not parse, else the constructor's.
func Build(name string, args []string, m *hwmodel.Machine) (Workload, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c, err := Declare(fs, name)
	if err != nil {
		return nil, err
	}
	if err := c.Parse(args); err != nil {
		return nil, err
	}
	return c.Build(m)
}
