package study

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rqemu/rqemu/contention"
)

// exitPathRuns is how many traced runs measureExitPath takes.
const exitPathRuns = 11

// PerfExitPath measures a perf child's exit path on this host
// (measureExitPath, exitPathRuns runs of the perf binary perf, "" for
// perf from PATH) and returns the runs' median and spread, or why it
// could not.
func PerfExitPath(perf string) (contention.Robust, error) {
	if perf == "" {
		perf = "perf"
	}
	path, err := exec.LookPath(perf)
	if err != nil {
		return contention.Robust{}, fmt.Errorf("%s not found", perf)
	}
	runs, err := measureExitPath(path, exitPathRuns)
	if err != nil {
		return contention.Robust{}, err
	}
	return contention.RobustOf(runs), nil
}

// measureExitPath times a perf child's exit path on this host: the user
// space between the child's last system call before exit(3) and its
// exit_group(2) (__run_exit_handlers(), _dl_fini(): the destructors of
// every library perf links, binding their symbols lazily, and the faults
// they take). It traces `perf bench sched pipe -l 1`, whose one forked
// child runs a round trip and exits through the same exit(0) as the
// messaging children, under `strace -f -ttt -T` (the path makes no
// system call, so strace stops the child only at its two ends: the
// figure includes about two ptrace stops), runs times, and returns each
// run's µs. It is a different command from the compared messaging run,
// whose timed window it partly explains.
func measureExitPath(perf string, runs int) ([]float64, error) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		return nil, fmt.Errorf("strace not found")
	}
	var out []float64
	for range runs {
		f, err := os.CreateTemp("", "rqemu-exitpath-*.txt")
		if err != nil {
			return nil, err
		}
		name := f.Name()
		f.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, strace, "-f", "-ttt", "-T", "-o", name, perf, "bench", "sched", "pipe", "-l", "1")
		msg, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			os.Remove(name)
			return nil, fmt.Errorf("strace -f perf bench sched pipe -l 1: %v: %s", err, strings.TrimSpace(string(msg)))
		}
		f, err = os.Open(name)
		if err != nil {
			return nil, err
		}
		us, err := childExitPath(f)
		f.Close()
		os.Remove(name)
		if err != nil {
			return nil, err
		}
		out = append(out, us)
	}
	return out, nil
}

// straceLine is one line of strace -f -ttt -T: pid, time, the rest.
var straceLine = regexp.MustCompile(`^(\d+)\s+(\d+\.\d+)\s+(.*)$`)

// straceDur is -T's duration at the end of a finished call.
var straceDur = regexp.MustCompile(`<(\d+\.\d+)>\s*$`)

// childExitPath reads a strace -f -ttt -T log and returns, in µs, the
// exit path of the traced process's child: from the end of its last
// system call before exit_group to exit_group's entry. The first line's
// pid is the parent; the child is the other pid that calls exit_group.
func childExitPath(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	parent := ""
	lastEnd := map[string]float64{} // per pid: the end of its last finished call
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, rest := m[1], m[3]
		t, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		if parent == "" {
			parent = pid
		}
		switch {
		case strings.HasPrefix(rest, "exit_group("):
			if pid == parent {
				continue
			}
			end, ok := lastEnd[pid]
			if !ok {
				return 0, fmt.Errorf("strace log: child %s calls exit_group with no system call before it", pid)
			}
			return 1e6 * (t - end), nil
		case strings.HasPrefix(rest, "+++"), strings.HasPrefix(rest, "---"), strings.HasSuffix(rest, "<unfinished ...>"):
		case strings.HasPrefix(rest, "<..."):
			lastEnd[pid] = t // printed when the call returned
		default:
			if d := straceDur.FindStringSubmatch(rest); d != nil {
				v, _ := strconv.ParseFloat(d[1], 64)
				lastEnd[pid] = t + v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("strace log: no child of pid %s calls exit_group", parent)
}

// ExitPathNote formats a measured perf exit path.
func ExitPathNote(r contention.Robust) string {
	return fmt.Sprintf("a perf child's exit path %.2f ms (strace -f of perf bench sched pipe -l 1, median of %d; IQR/median %.2f)",
		r.Median/1000, r.N, r.Spread)
}
