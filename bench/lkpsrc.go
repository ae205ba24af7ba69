package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LKPSource is an lkp-tests checkout ($LKP_SRC) whose own parsers, Ruby
// scripts at programs/PROGRAM/parse, read workloads' output in place of
// the ports (LKPStats).
type LKPSource struct {
	dir  string
	ruby string
}

// OpenLKPSource checks that dir is an lkp-tests checkout with a parser
// for each of the workloads that lkp has one for, and that Ruby, which
// runs them, is installed (when one is needed). Its errors name LKP_SRC
// and what it must be.
func OpenLKPSource(dir string, workloads ...string) (*LKPSource, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("LKP_SRC=%s: not a directory (it must be an lkp-tests checkout: git clone https://github.com/intel/lkp-tests)", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("LKP_SRC=%s: %v", dir, err)
	}
	needed := false
	for _, w := range workloads {
		prog := LKPProgram(w)
		if prog == "" {
			continue
		}
		needed = true
		p := filepath.Join(abs, "programs", prog, "parse")
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			hint := ""
			if _, err := os.Stat(filepath.Join(abs, "stats", prog)); err == nil {
				hint = "; this checkout has stats/" + prog + ", the layout before 2023: update it"
			}
			return nil, fmt.Errorf("LKP_SRC=%s: no programs/%s/parse, lkp's parser of %s (LKP_SRC must be an lkp-tests checkout from 2023 on, e.g. %.12s%s)",
				dir, prog, w, LKPCommit, hint)
		}
	}
	ruby, err := exec.LookPath("ruby")
	if err != nil && needed {
		return nil, fmt.Errorf("LKP_SRC=%s: lkp's parsers are Ruby scripts and ruby is not on PATH (Debian: apt-get install ruby ruby-activesupport)", dir)
	}
	return &LKPSource{dir: abs, ruby: ruby}, nil
}

// Dir is the checkout's absolute path.
func (s *LKPSource) Dir() string { return s.dir }

// Parse runs lkp's programs/PROGRAM/parse on out (its stdin), with
// LKP_SRC set to the checkout, and reads the KEY: VALUE lines it prints
// (ParseLKPStatsText). A parser that exits non-zero is an error quoting
// the end of its stderr.
func (s *LKPSource) Parse(program, out string) (map[string]float64, error) {
	script := filepath.Join(s.dir, "programs", program, "parse")
	cmd := exec.Command(s.ruby, script)
	cmd.Env = append(os.Environ(), "LKP_SRC="+s.dir)
	cmd.Stdin = strings.NewReader(out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 4 {
			msg = strings.Join(lines[:4], "\n") + "\n..."
		}
		return nil, fmt.Errorf("lkp's %s (LKP_SRC=%s): %v\n%s", strings.TrimPrefix(script, s.dir+"/"), s.dir, err, msg)
	}
	return ParseLKPStatsText(stdout.String()), nil
}

// Stats is LKPStats with lkp's own parser: the workload's report, as
// LKPOutput frames it, through programs/PROGRAM/parse, its keys named
// PROGRAM.KEY; nil for a workload lkp has no parser for.
func (s *LKPSource) Stats(workload, report string) (map[string]float64, error) {
	prog := LKPProgram(workload)
	if prog == "" {
		return nil, nil
	}
	st, err := s.Parse(prog, LKPOutput(workload, report))
	if err != nil {
		return nil, err
	}
	return LKPPrefixed(prog, st), nil
}
