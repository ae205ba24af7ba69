package study

import (
	"math"
	"os"
	"strings"
	"testing"
)

// TestChildExitPath: the child's exit path runs from the end of its last
// finished system call (entry plus -T's duration, or a resumed line's
// time) to its exit_group; the parent's own exit_group is not it.
func TestChildExitPath(t *testing.T) {
	real, err := os.ReadFile("testdata/strace-pipe-l1.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, log string
		want      float64 // µs; 0: an error naming errWant
		errWant   string
	}{
		// strace -f -ttt -T perf bench sched pipe -l 1 on the 2-vCPU
		// PVM guest: the child's write(6) at .272445 took 27 us, its
		// exit_group came at .279679.
		{"perf bench sched pipe -l 1", string(real), 279679 - 272472, ""},
		{"resumed last call", "10 1.000000 execve(\"/x\") = 0 <0.000100>\n" +
			"11 1.000100 read(3,  <unfinished ...>\n" +
			"11 1.002000 <... read resumed>\"\", 4) = 4 <0.001900>\n" +
			"11 1.005000 exit_group(0) = ?\n", 3000, ""},
		{"no child", "10 1.0 execve(\"/x\") = 0 <0.0001>\n10 1.5 exit_group(0) = ?\n", 0, "no child"},
		{"child with no call", "10 1.0 execve(\"/x\") = 0 <0.0001>\n11 1.5 exit_group(0) = ?\n", 0, "no system call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := childExitPath(strings.NewReader(tc.log))
			if tc.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("error %v, want one naming %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 0.5 {
				t.Errorf("exit path %.1f us, want %.1f", got, tc.want)
			}
		})
	}
}
