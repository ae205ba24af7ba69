package study

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

var (
	perfUsecsOp  = regexp.MustCompile(`(?m)^\s*([0-9.]+) usecs/op`)
	perfTotalSec = regexp.MustCompile(`Total time: ([0-9.]+) \[sec\]`)
)

// realPerf runs the real perf bench and returns its output, or why not.
func (r *Runner) realPerf(args ...string) (string, error) {
	perf := r.Perf
	if perf == "" {
		perf = "perf"
	}
	path, err := exec.LookPath(perf)
	if err != nil {
		return "", fmt.Errorf("%s not found", perf)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append([]string{"bench", "sched"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s bench sched %s: %v", path, strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// hostPipe runs perf bench sched pipe and messaging on the real kernel
// and on the emulated host preset (calibrated with -fit or -calib).
func hostPipe(r *Runner, st *Study) (*Summary, error) {
	calibNote := "uncalibrated: the preset's generic kernel costs"
	eng := r.Engine
	switch {
	case eng.Calib != "":
		calibNote = "calibrated from " + eng.Calib
	case r.Fit:
		m, err := hwmodel.Load("host", hwmodel.LoadOptions{})
		if err != nil {
			return nil, err
		}
		rep, err := contention.Calibrate(m, contention.CalibrateOptions{PingPongRounds: 20000, HammerDur: 100 * time.Millisecond, PipeRounds: 500})
		if err != nil {
			return nil, err
		}
		f, err := writeTempCalib(rep.Calib)
		if err != nil {
			return nil, err
		}
		defer os.Remove(f)
		eng.Calib = f
		calibNote = "calibrated just now (emu calibrate -quick)"
	}
	m, err := hwmodel.Load("host", hwmodel.LoadOptions{Calib: eng.Calib, Hammer: weave.PredictHammer})
	if err != nil {
		return nil, err
	}
	w := r.Out
	fmt.Fprintf(w, "%s: %s\n", st.Name, st.Doc)
	fmt.Fprintf(w, "the real kernel here vs the emulated host preset (%d CPUs, %s), %s\n\n", len(m.CPUs), calibNote, emu.DefaultProfile)
	pipeL, msgL := 20000, 20
	if r.Quick {
		pipeL, msgL = 5000, 5
	}
	sum := &Summary{Study: st.Name, Headline: "pipe usecs/op, emulated/real", Pub: "the real perf bench here"}
	for i, b := range []struct {
		what     string
		perfArgs []string
		wname    string
		wargs    []string
		metric   string
		re       *regexp.Regexp
	}{
		{fmt.Sprintf("perf bench sched pipe -l %d", pipeL), []string{"pipe", "-l", fmt.Sprint(pipeL)}, "pipe", []string{"-l", fmt.Sprint(pipeL)}, "usecs/op", perfUsecsOp},
		{fmt.Sprintf("perf bench sched messaging -l %d", msgL), []string{"messaging", "-l", fmt.Sprint(msgL)}, "messaging", []string{"-l", fmt.Sprint(msgL)}, "Total time [sec]", perfTotalSec},
	} {
		run := Run{Topo: "host", Features: emu.DefaultProfile, Workload: b.wname, Args: b.wargs}
		reng := r.Engine
		r.Engine = eng
		outs, err := r.do(st, &Row{Label: b.wname}, Setting{Label: "emulated", Features: run.Features}, run)
		r.Engine = reng
		if err != nil {
			return nil, err
		}
		emuVal := parseFirst(b.re, outs[0].Report)
		realOut, rerr := r.realPerf(b.perfArgs...)
		fmt.Fprintf(w, "== %s (%s)\n", b.what, b.metric)
		if rerr != nil {
			fmt.Fprintf(w, "  real:     skipped (%v)\n", rerr)
			fmt.Fprintf(w, "  emulated: %.3f\n\n", emuVal)
			if i == 0 {
				sum.Emulated = fmt.Sprintf("%.3f us/op (real: skipped)", emuVal)
			}
			continue
		}
		realVal := parseFirst(b.re, realOut)
		fmt.Fprintf(w, "  real:     %.3f\n  emulated: %.3f\n  emulated/real: %.2f\n\n", realVal, emuVal, emuVal/max(realVal, 1e-9))
		// The real tool here is this study's published figure.
		sum.Pairs = append(sum.Pairs, Pair{Study: st.Name, Row: b.wname, Metric: b.metric, Emulated: emuVal, Lo: realVal, Hi: realVal, Format: "%.3f"})
		if i == 0 {
			sum.Emulated = fmt.Sprintf("%.2f (%.3f / %.3f us/op)", emuVal/max(realVal, 1e-9), emuVal, realVal)
		}
	}
	if eng.Calib == "" && !r.Fit {
		fmt.Fprintf(w, "The host preset's kernel costs come from its spec: pass -fit (or -calib FILE from emu calibrate -o) to fit them to this machine.\n\n")
	}
	return sum, nil
}

func parseFirst(re *regexp.Regexp, s string) float64 {
	mm := re.FindStringSubmatch(s)
	if mm == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(mm[1], 64)
	return v
}

// writeTempCalib writes c to a temporary file, for the runs to load.
func writeTempCalib(c *hwmodel.Calib) (string, error) {
	f, err := os.CreateTemp("", "rqemu-calib-*.yaml")
	if err != nil {
		return "", err
	}
	if err := c.Write(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}
