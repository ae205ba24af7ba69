package main

import (
	"errors"
	"strings"

	"github.com/rqemu/rqemu/emu"
)

// schedFlag collects the repeatable -sched NAME=VALUE[,NAME=VALUE...].
type schedFlag []string

func (s *schedFlag) String() string { return strings.Join(*s, ",") }

func (s *schedFlag) Set(v string) error {
	*s = append(*s, v)
	return nil
}

const schedUsage = "a scheduler tunable `NAME=VALUE` as the kernel names it (debugfs sched/NAME or sysctl kernel.NAME; repeatable, the last wins; emu features lists them): "

// parseKernelFlag parses a feature-set flag (-features, -base, -patch),
// which may carry ";sched:NAME=VALUE,..." parts, with the -sched lists
// applied over them. It returns the features, the tunables and the
// canonical spec (ParseKernel), and an error naming the flag at fault.
func parseKernelFlag(flag, spec string, sched []string) (emu.Features, emu.SchedSettings, string, error) {
	var none emu.SchedSettings
	if strings.TrimSpace(spec) == "" {
		_, _, err := parseFeatureFlag(flag, spec)
		return 0, none, "", err
	}
	for _, l := range sched {
		if _, err := emu.ParseSched(l); err != nil {
			return 0, none, "", usagef("-sched: %v", err)
		}
	}
	f, s, canon, err := emu.ParseKernel(spec, sched...)
	if err != nil {
		var se *emu.SchedError
		if errors.As(err, &se) && len(sched) > 0 && !strings.Contains(spec, ";") {
			return 0, none, "", usagef("-sched: %v", err)
		}
		return 0, none, "", usagef("%s: %v", flag, err)
	}
	return f, s, canon, nil
}
