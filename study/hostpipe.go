package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
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
	// perf stat -x, prints "COUNT,UNIT,EVENT,..." per event.
	perfStatCount = regexp.MustCompile(`(?m)^\s*([0-9]+),[^,]*,(context-switches|cpu-migrations)\b`)
)

// maxOtherLoad is the share of the CPUs other processes may use during
// the real runs before the comparison is flagged: more than a tenth of
// the machine is no longer "otherwise idle".
const maxOtherLoad = 0.10

// realRun is one run of the real perf bench.
type realRun struct {
	val float64
	// switches and migrations are perf stat's counts over all CPUs
	// during the run, -1 where perf stat could not count.
	switches, migrations float64
	other                float64 // LoadMeter: the share others used, -1 unknown
}

// perfCmd runs the perf binary with args and returns its output.
func (r *Runner) perfCmd(path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v", path, strings.Join(args, " "), err)
	}
	return out.String(), nil
}

// realPerf runs `perf bench sched ARGS` n times, each under `perf stat -a`
// for the context switches and migrations of all CPUs (without them where
// perf stat cannot count), and returns every run, or why none ran.
func (r *Runner) realPerf(n int, re *regexp.Regexp, args ...string) ([]realRun, error) {
	perf := r.perfName()
	path, err := exec.LookPath(perf)
	if err != nil {
		return nil, fmt.Errorf("%s not found", perf)
	}
	bench := append([]string{"bench", "sched"}, args...)
	stat := append([]string{"stat", "-a", "-x,", "-e", "context-switches,cpu-migrations", "--", path}, bench...)
	// The machine quiets down first (the messaging run before leaves
	// hundreds of children exiting): the real figure is this kernel's on
	// an otherwise idle machine, as the comparison asks.
	r.settle()
	var runs []realRun
	for range n {
		load := contention.StartLoad()
		out, err := r.perfCmd(path, stat...)
		run := realRun{switches: -1, migrations: -1}
		if err == nil {
			for _, m := range perfStatCount.FindAllStringSubmatch(out, -1) {
				v, _ := strconv.ParseFloat(m[1], 64)
				if m[2] == "context-switches" {
					run.switches = v
				} else {
					run.migrations = v
				}
			}
		} else {
			load = contention.StartLoad()
			if out, err = r.perfCmd(path, bench...); err != nil {
				return nil, err
			}
		}
		run.other = load.Other()
		if run.val = parseFirst(re, out); !(run.val > 0) {
			return nil, fmt.Errorf("%s %s printed no %s: %q", path, strings.Join(bench, " "), re, out)
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// settle waits, up to Runner.Settle, for the machine to quiet down.
func (r *Runner) settle() {
	if r.Settle > 0 {
		contention.Settle(r.Settle, contention.DefaultSettleLoad)
	}
}

// perfName is the perf binary to run: Runner.Perf, or perf from PATH.
func (r *Runner) perfName() string {
	if r.Perf == "" {
		return "perf"
	}
	return r.Perf
}

// hostPipe runs perf bench sched pipe and messaging on the real kernel
// and on the emulated host preset (calibrated with -fit or -calib).
// calibrate is contention.Calibrate (tests stub it).
var calibrate = contention.Calibrate

func hostPipe(r *Runner, st *Study) (*Summary, error) {
	calibNote := "uncalibrated: the preset's generic kernel costs"
	limit := r.MaxSpread
	if limit <= 0 {
		limit = contention.DefaultMaxSpread
	}
	eng := r.Engine
	w := r.Out
	switch {
	case eng.Calib != "":
		calibNote = "calibrated from " + eng.Calib
	case r.Fit:
		m, err := hwmodel.Load("host", hwmodel.LoadOptions{})
		if err != nil {
			return nil, err
		}
		opt := contention.QuickCalibrate
		opt.MaxSpread = r.MaxSpread
		opt.Settle = r.Settle
		// The rollup's fit (fitFallback) runs uncalibrated where the
		// probes refuse; -fit fails.
		refused := func(err error) string { return fmt.Sprintf("uncalibrated: the fit was refused (%v)", err) }
		rep, err := calibrate(m, opt)
		var noisy *contention.NoisyError
		if errors.As(err, &noisy) && r.fitFallback {
			calibNote = refused(err)
			break
		}
		if errors.As(err, &noisy) {
			fmt.Fprintf(w, "%s: %s\n\nthe fit's probes (emu calibrate -quick):\n", st.Name, st.Doc)
			if werr := rep.Write(w); werr != nil {
				return nil, werr
			}
			return nil, fmt.Errorf("-fit: %w", err)
		}
		if err != nil {
			return nil, err
		}
		engRTT, err := FitPipeCross(rep.Calib)
		if err != nil {
			return nil, fmt.Errorf("-fit: %w", err)
		}
		// The perf children's exit path, a property of the perf binary
		// here (bench's msgBench.exitWork charges it).
		exitNote := "a perf child's exit path not measured"
		r.settle()
		if rb, err := PerfExitPath(r.perfName()); err == nil {
			if err := contention.CheckSpread([]string{"a perf child's exit path"}, []contention.Robust{rb}, limit, -1); err != nil {
				if r.fitFallback {
					calibNote = refused(err)
					break
				}
				return nil, fmt.Errorf("-fit: %w", err)
			}
			rep.Calib.ExitPathUS = map[string]float64{"perf": math.Round(100*rb.Median) / 100}
			exitNote = ExitPathNote(rb)
		} else {
			exitNote += " (" + err.Error() + ")"
		}
		f, err := writeTempCalib(rep.Calib)
		if err != nil {
			return nil, err
		}
		defer os.Remove(f)
		eng.Calib = f
		calibNote = fmt.Sprintf("calibrated just now (emu calibrate -quick: pipe round trip %.2f us on 2 CPUs, %.2f us on 1, the engine's %.2f at pipe_cross_scale %.3f; copy-on-write fault %.2f us; other processes used %.0f%% of the CPUs, after %.2f s waiting for the machine to settle; %s)",
			rep.Calib.PipeRTTUS, rep.Calib.PipeRTT1US, engRTT, rep.Calib.PipeCrossScale, rep.Calib.CoWFaultUS, 100*max(rep.OtherLoad, 0), rep.Settled.Seconds(), exitNote)
	}
	m, err := hwmodel.Load("host", hwmodel.LoadOptions{Calib: eng.Calib, Hammer: weave.PredictHammer})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "%s: %s\n", st.Name, st.Doc)
	fmt.Fprintf(w, "the real kernel here vs the emulated host preset (%d CPUs, %s), %s\n\n", len(m.CPUs), calibNote, emu.DefaultProfile)
	pipeL, msgL, reps := 20000, 20, 5
	if r.Quick {
		pipeL, msgL, reps = 5000, 5, 3
	}
	sum := &Summary{Study: st.Name, Headline: "pipe usecs/op, emulated/real", Pub: "the real perf bench here"}
	for i, b := range []struct {
		what     string
		perfArgs []string
		wname    string
		wargs    []string
		metric   string
		re       *regexp.Regexp
		ops      float64 // per run: round trips, or messages (perf's 10 groups x 20 x 20 per loop)
		opName   string
	}{
		{fmt.Sprintf("perf bench sched pipe -l %d", pipeL), []string{"pipe", "-l", fmt.Sprint(pipeL)}, "pipe", []string{"-l", fmt.Sprint(pipeL)},
			"usecs/op", perfUsecsOp, float64(pipeL), "round trip"},
		{fmt.Sprintf("perf bench sched messaging -l %d", msgL), []string{"messaging", "-l", fmt.Sprint(msgL)}, "messaging", []string{"-l", fmt.Sprint(msgL)},
			"Total time [sec]", perfTotalSec, float64(10 * 20 * 20 * msgL), "message"},
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
		runs, rerr := r.realPerf(reps, b.re, b.perfArgs...)
		fmt.Fprintf(w, "== %s (%s)\n", b.what, b.metric)
		if rerr != nil {
			fmt.Fprintf(w, "  real:     skipped (%v)\n", rerr)
			fmt.Fprintf(w, "  emulated: %.3f\n\n", emuVal)
			if i == 0 {
				sum.Emulated = fmt.Sprintf("%.3f us/op (real: skipped)", emuVal)
			}
			continue
		}
		realVal := writeRealRuns(w, runs, outs[0].Counters, emuVal, b.ops, b.opName, limit)
		// The real tool here is this study's published figure.
		sum.Pairs = append(sum.Pairs, Pair{Study: st.Name, Row: b.wname, Metric: b.metric, Emulated: emuVal, Lo: realVal, Hi: realVal, Format: "%.3f"})
		if i == 0 {
			sum.Emulated = fmt.Sprintf("%.2f (%.3f / %.3f us/op)", emuVal/max(realVal, 1e-9), emuVal, realVal)
		}
	}
	if v, err := os.ReadFile("/proc/sys/kernel/sched_vcpu_pack"); err == nil {
		// Not an upstream sysctl: a guest kernel's own (a Firecracker/PVM
		// guest, 6.18.44-fc, whose kallsyms list a vcpu_pack_room() among
		// fair.c's functions); its source is not public, so not modeled.
		fmt.Fprintf(w, "note: this kernel has kernel.sched_vcpu_pack = %s and a vcpu_pack_room() in its fair class, which upstream\n"+
			"kernels lack and the model does not have: if it keeps wakees on a busy vCPU rather than waking an idle\n"+
			"one, the real pipe pair shares one CPU (2 switches per round trip) where upstream's select_idle_sibling()\n"+
			"spreads it over an idle machine (4, as emulated).\n\n", strings.TrimSpace(string(v)))
	}
	if eng.Calib == "" && !r.Fit {
		fmt.Fprintf(w, "The host preset's kernel costs come from its spec: pass -fit (or -calib FILE from emu calibrate -o) to fit them to this machine.\n\n")
	}
	return sum, nil
}

// writeRealRuns prints the real runs beside the emulated figure: their
// median (the figure compared), spread and load, the event rates per op
// of both, and a warning when the real runs are too noisy to compare
// with an otherwise idle emulated machine. It returns the median.
func writeRealRuns(w io.Writer, runs []realRun, counters map[string]float64, emuVal, ops float64, opName string, limit float64) float64 {
	vals, others := make([]float64, len(runs)), make([]float64, 0, len(runs))
	var list []string
	for i, run := range runs {
		vals[i] = run.val
		list = append(list, fmt.Sprintf("%.3f", run.val))
		if run.other >= 0 {
			others = append(others, run.other)
		}
	}
	rv := contention.RobustOf(vals)
	load := ""
	other := contention.RobustOf(others)
	if other.N > 0 {
		load = fmt.Sprintf("; other processes used %.0f%% of the CPUs", 100*other.Median)
	}
	fmt.Fprintf(w, "  real:     %.3f (median of %d runs: %s; IQR/median %.2f%s)\n", rv.Median, rv.N, strings.Join(list, " "), rv.Spread, load)
	fmt.Fprintf(w, "  emulated: %.3f\n  emulated/real: %.2f\n", emuVal, emuVal/max(rv.Median, 1e-9))

	// Event rates per op over all CPUs: a pipe pair sharing one CPU
	// switches twice per round trip, a pair on two CPUs four times
	// (each CPU to idle and back).
	var sw, mig []float64
	for _, run := range runs {
		if run.switches >= 0 && run.migrations >= 0 {
			sw, mig = append(sw, run.switches/ops), append(mig, run.migrations/ops)
		}
	}
	hint := ""
	if opName == "round trip" {
		hint = " (2 switches: the pair shares one CPU; 4: it spans two, each idling between messages)"
	}
	fmt.Fprintf(w, "  per %s, all CPUs: context switches, migrations%s\n", opName, hint)
	if len(sw) > 0 {
		fmt.Fprintf(w, "    real:     %.3f, %.4f\n", contention.RobustOf(sw).Median, contention.RobustOf(mig).Median)
	} else {
		fmt.Fprintf(w, "    real:     not counted (perf stat -a failed)\n")
	}
	fmt.Fprintf(w, "    emulated: %.3f, %.4f\n", counters["sched.NrSwitches"]/ops, counters["sched.nr_migrations"]/ops)
	var why []string
	if rv.Spread > limit {
		why = append(why, fmt.Sprintf("the runs' IQR/median %.2f exceeds %.2f", rv.Spread, limit))
	}
	if other.N > 0 && other.Median > maxOtherLoad {
		why = append(why, fmt.Sprintf("other processes used %.0f%% of the CPUs (more than %.0f%%)", 100*other.Median, 100*maxOtherLoad))
	}
	if len(why) > 0 {
		fmt.Fprintf(w, "  warning: the real runs are too noisy to compare with the emulated idle machine: %s; rerun on an otherwise idle machine\n",
			strings.Join(why, ", "))
	}
	fmt.Fprintln(w)
	return rv.Median
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
