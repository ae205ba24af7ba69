package bench

import (
	"flag"
	"fmt"
	"strings"
)

// ParseArgs parses a workload's command line on fs, where spec's flags
// (and any engine flags) are declared, the way the real tools read it:
//   - short options as getopt(3) and perf's parse-options read them
//     (Getopt): a value glued to its flag (-g2, -l5000) and bool flags
//     run together (-Tp, -pt);
//   - long options as --name or --name=value (the flag package's own
//     --name value also works);
//   - a "--" with options after it starts a second run of options
//     (netperf's test-specific options: -- -m 64 -r 1,1);
//   - other arguments are the positional arguments, handed to spec.Args
//     in order wherever they appear (sysbench's "oltp_read_write run");
//     a workload without Args rejects them with an *ArgError.
//
// Errors are the flag package's (an unknown flag, a malformed value), an
// *ArgError, or spec.Args's.
func ParseArgs(fs *flag.FlagSet, spec Spec, args []string) error {
	args = Getopt(fs, args)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" && spec.Args == nil {
			// netperf's "--" starts its test-specific options (-m,
			// -r): here they share the one flag set.
			args = rest
			continue
		}
		if spec.Args == nil {
			return &ArgError{Arg: rest[0]}
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if spec.Args != nil {
		return spec.Args(pos)
	}
	return nil
}

// ArgError is a positional argument given to a workload that takes none.
type ArgError struct{ Arg string }

func (e *ArgError) Error() string {
	return fmt.Sprintf("unexpected argument %q (flags only)", e.Arg)
}

// Getopt rewrites the short options of args that the flag package
// would not read into ones it does, as getopt(3) reads them: a token
// -XYZ that is not itself a flag, whose X is a one-letter flag, is a
// cluster: each bool flag in it stands alone (-Tp is -T -p), and the
// first flag that takes a value takes the rest of the token (-g2 is
// -g=2, -Tl100 is -T -l=100) or, when nothing is left, the next
// argument (-Tl 100). A token the cluster rule cannot read (an unknown
// letter) is left as it is, for the flag package to reject by its whole
// name. Values of flags that take one are skipped, so a value starting
// with '-' is never rewritten; "--" is kept, and tokens after it are
// read the same way (netperf's test-specific options).
func Getopt(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a == "--" {
			out = append(out, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if f := fs.Lookup(name); f != nil {
			out = append(out, a)
			if !hasValue && !isBoolFlag(f) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if a[1] == '-' {
			out = append(out, a)
			continue
		}
		exp, takesNext, ok := cluster(fs, a[1:])
		if !ok {
			out = append(out, a)
			continue
		}
		out = append(out, exp...)
		if takesNext && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

// cluster reads s (a token without its '-') as getopt's run of short
// options; takesNext says the last one takes the next argument.
func cluster(fs *flag.FlagSet, s string) (exp []string, takesNext, ok bool) {
	for j := 0; j < len(s); j++ {
		c := s[j : j+1]
		f := fs.Lookup(c)
		if f == nil {
			return nil, false, false
		}
		if isBoolFlag(f) {
			exp = append(exp, "-"+c)
			continue
		}
		if j+1 < len(s) {
			return append(exp, "-"+c+"="+s[j+1:]), false, true
		}
		return append(exp, "-"+c), true, true
	}
	return exp, false, true
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
