package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// quietParse runs parse (fs.Parse, or a workload's parse on fs) without
// the flag package's own output: on a bad flag it prints the error and
// then the whole usage, ~100 lines for run. The error becomes a usage
// error naming the flag and the form it takes; -h still prints the usage.
// more is what goes after fs's name in "emu run -h" (" -workload pipe").
func quietParse(fs *flag.FlagSet, more string, parse func() error) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := parse()
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		usage()
		return err
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return err
	}
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) && pe.Unwrap() != nil && !isFlagPackageError(err) {
		err = pe.Unwrap()
	}
	return &usageError{msg: flagErrorMsg(fs, err, fs.Name()+more+" -h lists the flags")}
}

var (
	reInvalid  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
	reNeedsArg = regexp.MustCompile(`^flag needs an argument: -(\S+)$`)
	reUnknown  = regexp.MustCompile(`^flag provided but not defined: -(\S+)$`)
)

func isFlagPackageError(err error) bool {
	m := err.Error()
	return reInvalid.MatchString(m) || reNeedsArg.MatchString(m) || reUnknown.MatchString(m)
}

// flagErrorMsg rewrites a flag package error as "-name: what (allowed:
// form)"; hint says where the flags are listed.
func flagErrorMsg(fs *flag.FlagSet, err error, hint string) string {
	msg := err.Error()
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		val, name, why := m[1], m[2], m[3]
		form := flagForm(fs.Lookup(name))
		if form == "" || (why != "parse error" && why != "value out of range") {
			return fmt.Sprintf("-%s: %q: %s", name, val, why)
		}
		if why == "value out of range" {
			return fmt.Sprintf("-%s: %q is out of range (allowed: %s)", name, val, form)
		}
		return fmt.Sprintf("-%s: %q is not %s", name, val, form)
	}
	if m := reNeedsArg.FindStringSubmatch(msg); m != nil {
		form := flagForm(fs.Lookup(m[1]))
		if form == "" {
			form = "a value"
		}
		return fmt.Sprintf("-%s: needs a value (allowed: %s)", m[1], form)
	}
	if m := reUnknown.FindStringSubmatch(msg); m != nil {
		if why, ok := notModeled[m[1]]; ok {
			return fmt.Sprintf("-%s: %s (%s)", m[1], why, hint)
		}
		if near := closestFlag(fs, m[1]); near != "" {
			return fmt.Sprintf("flag provided but not defined: -%s (did you mean -%s? %s)", m[1], near, hint)
		}
		return fmt.Sprintf("flag provided but not defined: -%s (%s)", m[1], hint)
	}
	return msg
}

// notModeled are real tools' flags the model deliberately lacks, with why.
var notModeled = map[string]string{
	"F":    "SCHED_FIFO is not modeled: only the fair class is (hackbench's -F/--fifo)",
	"fifo": "SCHED_FIFO is not modeled: only the fair class is (hackbench's -F/--fifo)",
}

// closestFlag is the flag of fs nearest to name: one whose name starts
// with it or it with the flag's (longer than one letter), or within two
// edits of it; "" if none is.
func closestFlag(fs *flag.FlagSet, name string) string {
	// Distances in half edits: a prefix match counts as half of one, so
	// --group finds -groups before -cgroup.
	best, bestD := "", 5
	fs.VisitAll(func(f *flag.Flag) {
		d := 2 * editDistance(name, f.Name)
		if len(f.Name) > 1 && len(name) > 1 && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name)) {
			d = min(d, 1)
		}
		if d < bestD || d == bestD && f.Name < best {
			best, bestD = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// flagForm is what a flag's value may be, by its type ("" for a type
// whose own error says it).
func flagForm(f *flag.Flag) string {
	if f == nil {
		return ""
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value":
		return "a whole number, such as " + f.DefValue
	case "*flag.uintValue", "*flag.uint64Value":
		return "a whole number from 0 to 18446744073709551615, such as " + f.DefValue
	case "*flag.float64Value":
		return "a number, such as " + f.DefValue
	case "*flag.durationValue":
		return "a duration with its unit, such as 500us, 10ms or 1.5s"
	case "*flag.boolValue":
		return "true or false (or the flag alone)"
	}
	return ""
}
