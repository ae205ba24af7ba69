package main

import (
	"strings"
	"testing"
)

// TestSlurmScript: the sbatch script sets --time and --mem (defaults or
// -slurm-time/-slurm-mem), its array tasks' command line drops the
// script's own flags, and a limit sbatch would refuse is bad input.
func TestSlurmScript(t *testing.T) {
	for _, c := range []struct {
		args       string
		time, mem  string
		wantInExec string
	}{
		{"-slurm -o out/ -topo hikey-8 -workload pipe -l 100,200", "1:00:00", "2G", "-o out/ -topo hikey-8 -workload pipe -l 100,200"},
		{"-slurm -slurm-time 0:30:00 --slurm-mem=1G -o out/ -workload pipe -l 100", "0:30:00", "1G", "-o out/ -workload pipe -l 100"},
		{"-slurm-time=2-00 -slurm -slurm-mem 512M -o out/ -workload pipe -l 100", "2-00", "512M", "-o out/ -workload pipe -l 100"},
	} {
		code, out, errs := runEmu(append([]string{"sweep"}, strings.Fields(c.args)...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.args, code, errs)
		}
		for _, want := range []string{"#SBATCH --time=" + c.time + "\n", "#SBATCH --mem=" + c.mem + "\n", "#SBATCH --array=0-", "-index \"$SLURM_ARRAY_TASK_ID\" " + c.wantInExec + "\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: no %q in:\n%s", c.args, want, out)
			}
		}
	}
	for _, bad := range []string{"-slurm-time 1h", "-slurm-time 1:99:00", "-slurm-mem 2GB", "-slurm-mem 0"} {
		code, _, errs := runEmu(append([]string{"sweep", "-slurm", "-o", "out/", "-workload", "pipe"}, strings.Fields(bad)...)...)
		flagName := strings.Fields(bad)[0]
		if code != 2 || !strings.Contains(errs, flagName+":") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want 2 naming %s once", bad, code, errs, flagName)
		}
	}
}
