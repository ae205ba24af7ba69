package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"time"

	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/study"
)

const reproduceUsage = `usage: emu reproduce [flags] STUDY|all
       emu reproduce -list

Runs a published scheduler study (../shared/experiments.md) end to end,
scaled in duration or loops (never in topology), and prints the emulated
result of every setting beside the published figure (where experiments.md
gives one) and their ratio. For the calibration studies a steady-state
line follows: the headline at the default length and at half of it, and
their relative difference, so you see whether the run is long enough.
"all" runs every study, one table each, then a summary.

studies:
%s
examples:
  emu reproduce -list
  emu reproduce tgload-udprr                 # about a minute of CPU time on 2 cores
  emu reproduce -quick all                   # every study at the shortest meaningful scale
  emu reproduce -j 2 tgload-udprr            # two runs at once: faster on 2 cores
  emu reproduce -seeds 3 -o udprr.ndjson tgload-udprr
  emu reproduce -fit host-pipe               # runs the real perf bench too
  emu reproduce -j 2 lkp-base                # lkp's base runs, then every calibration pair within x1.5`

func runReproduce(args []string, stdout, stderr io.Writer) error {
	var list strings.Builder
	study.WriteList(&list)
	r := &study.Runner{Out: stdout}
	var e engineFlags
	var list1, steady bool
	var out string
	fs := newFlags("reproduce", fmt.Sprintf(reproduceUsage, list.String()), stderr)
	fs.BoolVar(&list1, "list", false, "list the studies and exit")
	fs.StringVar(&e.driver, "driver", "parallel", "engine driver: parallel or serial (same bytes)")
	fs.IntVar(&r.Jobs, "j", 1, "runs of a study executed at once, sharing the host's CPUs as sweep -j does (same bytes; on a host with few CPUs, -j N beats one parallel run at a time)")
	fs.Uint64Var(&r.Seed, "seed", 1, "first seed")
	fs.IntVar(&r.Seeds, "seeds", 0, "seeds per setting (mean ±spread when more than one); 0: the study's own (1, or 8 for lb-spread-llc)")
	fs.DurationVar(&e.epoch, "epoch", 0, "epoch length (0: the exact lookahead)")
	fs.Float64Var(&r.L, "l", 0, "virtual seconds of every duration-bound run (netperf -l, sysbench --time); 0: the study's length")
	fs.BoolVar(&r.Quick, "quick", false, "the shortest meaningful scale (CI, smoke tests)")
	fs.BoolVar(&r.All, "all", false, "also run the extra rows: more points of a range the publication states once, rows the model cannot tell apart")
	fs.BoolVar(&steady, "steady", true, "calibration studies: also run the headline at half length (the steady-state line)")
	fs.StringVar(&r.Perf, "perf", "perf", "the perf binary host-pipe runs (skipped when not found)")
	fs.StringVar(&e.calib, "calib", "", "calibration FILE for the host preset (host-pipe, uclamp-pipe)")
	fs.BoolVar(&r.Fit, "fit", false, "host-pipe: calibrate the host preset first (emu calibrate -quick, a few seconds), unless -calib is given; lkp-base's rollup fits it at the default scale without -fit")
	fs.DurationVar(&r.Settle, "settle", contention.DefaultSettle, "host-pipe: first wait, at most this long, until other processes use under 10% of the CPUs, before the fit's probes and before each real perf bench (0: do not wait)")
	fs.Float64Var(&r.MaxSpread, "max-spread", contention.DefaultMaxSpread, "host-pipe: the widest IQR/median of a probe that -fit fits, or of the real runs that compare cleanly")
	fs.StringVar(&out, "o", "", "append one NDJSON record per run to FILE (emu merge, emu plot read it)")
	fs.BoolVar(&e.progress, "progress", true, "print a line on stderr per run")
	if err := parse(fs, args); err != nil {
		return err
	}
	if list1 {
		study.WriteList(stdout)
		return nil
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("reproduce: need exactly one STUDY (or all), got %d arguments", fs.NArg())
	}
	if err := checkDriver(e.driver); err != nil {
		return err
	}
	if r.Settle < 0 || r.Settle > time.Hour {
		return usagef("-settle: must be from 0 to 1h, got %v", r.Settle)
	}
	if r.Jobs < 1 || r.Jobs > 256 {
		return usagef("-j: runs at once must be in [1, 256], got %d", r.Jobs)
	}
	if e.epoch < 0 || e.epoch > maxEpoch {
		return usagef("-epoch: %v is out of range (allowed: 0, the exact lookahead, up to %v)", e.epoch, maxEpoch)
	}
	if r.L != 0 && (!(r.L > 0) || r.L > 100) {
		return usagef("-l: virtual seconds must be in (0, 100], got %g", r.L)
	}
	if !(r.MaxSpread > 0 && r.MaxSpread <= 1e6) {
		return usagef("-max-spread: must be a number above 0 (an IQR/median; at most 1e6), got %v", r.MaxSpread)
	}
	if r.Seeds < 0 || r.Seeds > 100 {
		return usagef("-seeds: must be in [0, 100] (0: the study's own), got %d", r.Seeds)
	}
	if r.Seed > math.MaxUint64-100 {
		return usagef("-seed: %d leaves no room for the seeds of a cell (at most 100) below 2^64", r.Seed)
	}
	var sel []*study.Study
	if name := fs.Arg(0); name == "all" {
		sel = study.All()
	} else {
		st, err := study.Lookup(name)
		if err != nil {
			return usagef("reproduce: %v", err)
		}
		sel = []*study.Study{st}
	}
	if err := checkOutputs([][2]string{{"-o", out}}); err != nil {
		return err
	}
	w, err := openNDJSON(out)
	if err != nil {
		return err
	}
	defer w.close()
	r.Steady = steady
	r.Rollup = true // lkp-base ends with the calibration count
	stop, unlisten := interrupts()
	defer unlisten()
	r.Engine = study.Engine{Driver: e.driver, Epoch: int64(e.epoch), Calib: e.calib, Stop: stop}
	if r.Jobs > 1 {
		// As sweep -j: the host's CPUs shared among the runs at once.
		r.Engine.Workers = max(1, runtime.GOMAXPROCS(0)/r.Jobs)
	}
	var werr error
	r.OnRun = func(st *study.Study, row, setting string, o *study.Outcome, cached bool) {
		if cached {
			return
		}
		if e.progress {
			fmt.Fprintf(stderr, "emu reproduce: %s %s [%s] %s on %s, seed %d: %.1f s host\n", st.Name, row, setting,
				strings.Join(o.Run.Args, " "), o.Run.Topo, o.Seed, o.HostSec)
		}
		rec := newRecord(o, e.driver)
		rec.Study = &recordStudy{Name: st.Name, Row: row, Setting: setting, Quick: r.Quick}
		if err := w.write(rec); err != nil && werr == nil {
			werr = err
		}
	}
	t0 := time.Now()
	var sums []*study.Summary
	for _, st := range sel {
		sum, err := r.Reproduce(st)
		if errors.Is(err, study.ErrInterrupted) {
			return errInterrupted
		}
		if err != nil {
			return fmt.Errorf("%s: %w", st.Name, err)
		}
		sums = append(sums, sum)
	}
	if len(sel) > 1 {
		study.WriteSummary(stdout, sums, time.Since(t0))
	}
	return werr
}
