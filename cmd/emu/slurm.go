package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"

	"github.com/rqemu/rqemu/study"
)

// Slurm's forms of a time limit (sbatch --time: minutes, MM:SS,
// HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) and of a memory size (--mem: a
// number with an optional K, M, G or T suffix).
var (
	slurmTimeRE = regexp.MustCompile(`^([0-9]+|[0-9]+:[0-5]?[0-9]|[0-9]+:[0-5]?[0-9]:[0-5]?[0-9]|[0-9]+-[0-9]+(:[0-5]?[0-9](:[0-5]?[0-9])?)?)$`)
	slurmMemRE  = regexp.MustCompile(`^[1-9][0-9]{0,8}[KMGT]?$`)
)

// checkSlurmLimits rejects a -slurm-time or -slurm-mem that sbatch would.
func checkSlurmLimits(t, mem string) error {
	if !slurmTimeRE.MatchString(t) {
		return usagef("-slurm-time: %q is not a Slurm time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)", t)
	}
	if !slurmMemRE.MatchString(mem) {
		return usagef("-slurm-mem: %q is not a Slurm memory size (a number with K, M, G or T, e.g. 2G)", mem)
	}
	return nil
}

// slurmOwnFlags are sweep's flags that shape the script, not the runs:
// the array tasks' command line leaves them out (true: takes a value).
var slurmOwnFlags = map[string]bool{"slurm": false, "slurm-time": true, "slurm-mem": true}

// writeSlurm prints an sbatch script whose array task i runs point i.
func writeSlurm(w io.Writer, o *sweepOpts, args []string, n int) {
	var keep []string
	for i := 0; i < len(args); i++ {
		name, _, glued := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if takes, ok := slurmOwnFlags[name]; ok && strings.HasPrefix(args[i], "-") {
			if takes && !glued {
				i++ // its value
			}
			continue
		}
		keep = append(keep, study.ShellQuote(args[i]))
	}
	fmt.Fprintf(w, "#!/bin/bash\n#SBATCH --job-name=rqemu-sweep\n#SBATCH --array=0-%d\n#SBATCH --cpus-per-task=%d\n#SBATCH --time=%s\n#SBATCH --mem=%s\n#SBATCH --output=slurm-%%A_%%a.out\n",
		n-1, max(1, runtime.NumCPU()), o.slurmTime, o.slurmMem)
	fmt.Fprintf(w, "# %d points; each array task runs one and appends its NDJSON record.\n", n)
	fmt.Fprintf(w, "# Afterwards: %s merge %s\n", study.ShellQuote(o.emu), study.ShellQuote(o.out))
	fmt.Fprintf(w, "set -euo pipefail\nexec %s sweep -index \"$SLURM_ARRAY_TASK_ID\" %s\n", study.ShellQuote(o.emu), strings.Join(keep, " "))
}
