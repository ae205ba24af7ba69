package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/contention"
	"github.com/rqemu/rqemu/emu"
	"github.com/rqemu/rqemu/hwmodel"
)

const reproduceUsage = `usage: emu reproduce [flags] STUDY

Runs a published scheduler study (../shared/experiments.md) end to end,
scaled in duration or loops (never in topology), and prints the emulated
result of every setting beside the published figure and their ratio.

studies:
%s
examples:
  emu reproduce tgload-udprr                 # ~5 min on 2 cores
  emu reproduce -l 0.01 tgload-udprr         # shorter runs, noisier
  emu reproduce host-pipe                    # runs the real perf bench too`

// study is one reproducible experiment.
type study struct {
	name, doc string
	run       func(r *reproducer) error
}

var studies = []study{
	{"tgload-udprr", "netperf UDP_RR 100%/75% of CPUs in one cgroup on spr-2s, v6.6-eevdf vs +TG_LOAD_RATELIMIT (Aaron Lu's ratelimit patch)", reproTgloadUDPRR},
	{"host-pipe", "perf bench sched pipe and messaging: the real kernel here beside the emulated host preset", reproHostPipe},
}

// reproducer carries a reproduce run's settings.
type reproducer struct {
	e       engineFlags
	dur     float64 // virtual seconds per duration-bound run
	seeds   int
	all     bool
	out     io.Writer
	stderr  io.Writer
	stop    <-chan struct{}
	perfCmd string
	fit     bool
}

func runReproduce(args []string, stdout, stderr io.Writer) error {
	var names strings.Builder
	for _, s := range studies {
		fmt.Fprintf(&names, "  %-14s %s\n", s.name, s.doc)
	}
	r := &reproducer{out: stdout, stderr: stderr}
	fs := newFlags("reproduce", fmt.Sprintf(reproduceUsage, names.String()), stderr)
	fs.StringVar(&r.e.driver, "driver", "parallel", "engine driver: parallel or serial (same bytes)")
	fs.Uint64Var(&r.e.seed, "seed", 1, "first seed")
	fs.IntVar(&r.seeds, "seeds", 1, "seeds per setting (mean ±stddev when more than one)")
	fs.DurationVar(&r.e.epoch, "epoch", 0, "epoch length (0: the exact lookahead)")
	fs.Float64Var(&r.dur, "l", 0.02, "virtual seconds per duration-bound run (netperf -l)")
	fs.BoolVar(&r.all, "all", false, "also run the settings the publication reports as within noise")
	fs.StringVar(&r.perfCmd, "perf", "perf", "the perf binary host-pipe runs (skipped when not found)")
	fs.StringVar(&r.e.calib, "calib", "", "calibration FILE for the host preset (host-pipe)")
	fs.BoolVar(&r.fit, "fit", false, "host-pipe: calibrate the host preset first (emu calibrate -quick, a few seconds), unless -calib is given")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("reproduce: need exactly one STUDY, got %d arguments", fs.NArg())
	}
	if r.e.driver != "parallel" && r.e.driver != "serial" {
		return usagef("-driver: %q is not a driver (allowed: parallel, serial)", r.e.driver)
	}
	if !(r.dur > 0) || r.dur > 100 {
		return usagef("-l: virtual seconds must be in (0, 100], got %g", r.dur)
	}
	if r.seeds < 1 || r.seeds > 100 {
		return usagef("-seeds: must be in [1, 100], got %d", r.seeds)
	}
	for _, s := range studies {
		if s.name == fs.Arg(0) {
			stop, unlisten := interrupts()
			defer unlisten()
			r.stop = stop
			return s.run(r)
		}
	}
	var allowed []string
	for _, s := range studies {
		allowed = append(allowed, s.name)
	}
	return usagef("reproduce: unknown study %q (allowed: %s)", fs.Arg(0), strings.Join(allowed, ", "))
}

// runOne runs a workload with the given flags and returns the finished run.
func (r *reproducer) runOne(m *hwmodel.Machine, features string, seed uint64, name string, args ...string) (*bench.Result, error) {
	spec, err := bench.Lookup(name)
	if err != nil {
		return nil, err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mk := spec.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	w, err := mk(m)
	if err != nil {
		return nil, err
	}
	f, _, err := emu.ParseFeatures(features)
	if err != nil {
		return nil, err
	}
	cfg := runConfig(&r.e, m, f)
	cfg.Seed = seed
	cfg.Stop = r.stop
	t0 := time.Now()
	res, err := bench.Execute(w, cfg)
	if err != nil {
		return nil, err
	}
	if res.Interrupted {
		return nil, errInterrupted
	}
	fmt.Fprintf(r.stderr, "emu reproduce: %s %s on %s, %s, seed %d: %.1f s host\n", name, strings.Join(args, " "), m.Name, features, seed, time.Since(t0).Seconds())
	return res, nil
}

// busyShare is a symbol's share of the non-idle virtual time, in %: what
// a cycles profile shows (halted idle CPUs count no cycles).
func busyShare(s *emu.Sim, sym string) float64 {
	idle := s.SymbolNS("do_idle")
	var all int64
	for _, p := range s.Profile(nil) {
		all += p.NS
	}
	return 100 * float64(s.SymbolNS(sym)) / float64(max(all-idle, 1))
}

func reproTgloadUDPRR(r *reproducer) error {
	m, err := hwmodel.Load("spr-2s", hwmodel.LoadOptions{})
	if err != nil {
		return err
	}
	type setting struct {
		pct       int
		pub, pubR float64 // published per-client tps, base and ratelimited
	}
	settings := []setting{{100, 9703, 28011}, {75, 13779, 36105}}
	if r.all {
		settings = append(settings, setting{50, 0, 0}, setting{25, 0, 0})
	}
	feats := []string{"v6.6-eevdf", "v6.6-eevdf,+TG_LOAD_RATELIMIT"}
	fmt.Fprintf(r.out, "tgload-udprr: netperf UDP_RR on %s (%d CPUs), clients in one cgroup (/docker), %.0f ms virtual per run, %d seed(s) from %d\n",
		m.Name, len(m.CPUs), r.dur*1e3, r.seeds, r.e.seed)
	fmt.Fprintf(r.out, "published: Aaron Lu, \"sched/fair: ratelimit update to tg->load_avg\" (v6.7), lkp netperf.Throughput_tps per client\n\n")
	type row struct {
		s          setting
		base, rl   []float64
		baseRes    *bench.Result
		wake, migr float64
	}
	var rows []row
	for _, st := range settings {
		rw := row{s: st}
		clients := max(1, len(m.CPUs)*st.pct/100)
		for seed := r.e.seed; seed < r.e.seed+uint64(r.seeds); seed++ {
			for i, f := range feats {
				res, err := r.runOne(m, f, seed, "netperf", "-t", "UDP_RR", "-nr", fmt.Sprintf("%d%%", st.pct),
					"-l", strconv.FormatFloat(r.dur, 'g', -1, 64), "-cgroup", "docker")
				if err != nil {
					return err
				}
				mt := res.Workload.Metrics(res.Sim)
				perClient := mt.Values[mt.Primary] / float64(clients)
				if i == 0 {
					rw.base = append(rw.base, perClient)
					if seed == r.e.seed {
						rw.baseRes = res
						c := counters(res.Sim)
						rw.wake, rw.migr = c["rate.wakeups_per_sec"], c["rate.migrations_per_sec"]
					}
				} else {
					rw.rl = append(rw.rl, perClient)
				}
			}
		}
		rows = append(rows, rw)
	}
	fmt.Fprintf(r.out, "%-9s | %25s %25s %9s | %9s %9s %9s | %s\n", "nr_client", "emulated base tps/client", "+TG_LOAD_RATELIMIT", "change", "pub base", "pub +RL", "change", "emu/pub base")
	for _, rw := range rows {
		mb, sb := meanStd(rw.base)
		mr, sr := meanStd(rw.rl)
		pubB, pubR, pubC, ratio := "n/a", "n/a", "noise", "n/a"
		if rw.s.pub > 0 {
			pubB, pubR = fmt.Sprintf("%.0f", rw.s.pub), fmt.Sprintf("%.0f", rw.s.pubR)
			pubC = fmt.Sprintf("%+.1f%%", 100*(rw.s.pubR-rw.s.pub)/rw.s.pub)
			ratio = fmt.Sprintf("%.2f", mb/rw.s.pub)
		}
		fmt.Fprintf(r.out, "%-9s | %17.0f %s %17.0f %s %+8.1f%% | %9s %9s %9s | %s\n", fmt.Sprintf("%d%%", rw.s.pct),
			mb, fmtStd(sb), mr, fmtStd(sr), 100*(mr-mb)/mb, pubB, pubR, pubC, ratio)
	}
	for _, rw := range rows {
		if rw.s.pct != 100 || rw.baseRes == nil {
			continue
		}
		s := rw.baseRes.Sim
		fmt.Fprintf(r.out, "\nbase profile at 100%% (share of non-idle cycles; published in parentheses):\n")
		fmt.Fprintf(r.out, "  update_cfs_group %5.1f%% (≈25%%)\n  update_load_avg  %5.1f%% (≈16%%)\n", busyShare(s, "update_cfs_group"), busyShare(s, "update_load_avg"))
		fmt.Fprintf(r.out, "  wakeups/s        %5.2f M (≈4.2 M)\n  migrations/s     %5.2f M (≈2.8 M)\n\n", rw.wake/1e6, rw.migr/1e6)
		prof := s.Profile(nil)
		idle := s.SymbolNS("do_idle")
		var all int64
		for _, p := range prof {
			all += p.NS
		}
		fmt.Fprintf(r.out, "top of the base profile at 100%% (%% of non-idle cycles):\n")
		n := 0
		for _, p := range prof {
			if p.Symbol == "do_idle" {
				continue
			}
			mark := "[k]"
			if p.User {
				mark = "[.]"
			}
			fmt.Fprintf(r.out, "  %6.2f%%  %s %s\n", 100*float64(p.NS)/float64(max(all-idle, 1)), mark, p.Symbol)
			if n++; n == 12 {
				break
			}
		}
	}
	return nil
}

var (
	perfUsecsOp  = regexp.MustCompile(`(?m)^\s*([0-9.]+) usecs/op`)
	perfTotalSec = regexp.MustCompile(`Total time: ([0-9.]+) \[sec\]`)
)

// realPerf runs the real perf bench and returns its output, or why not.
func (r *reproducer) realPerf(args ...string) (string, error) {
	path, err := exec.LookPath(r.perfCmd)
	if err != nil {
		return "", fmt.Errorf("%s not found", r.perfCmd)
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

func reproHostPipe(r *reproducer) error {
	m, err := hwmodel.Load("host", hwmodel.LoadOptions{Calib: r.e.calib})
	if err != nil {
		return err
	}
	calibNote := "uncalibrated: the preset's generic kernel costs"
	switch {
	case r.e.calib != "":
		calibNote = "calibrated from " + r.e.calib
	case r.fit:
		rep, err := contention.Calibrate(m, contention.CalibrateOptions{PingPongRounds: 20000, HammerDur: 100 * time.Millisecond, PipeRounds: 500})
		if err != nil {
			return err
		}
		if m, err = rep.Calib.Apply(m); err != nil {
			return err
		}
		calibNote = "calibrated just now (emu calibrate -quick)"
	}
	fmt.Fprintf(r.out, "host-pipe: the real kernel here vs the emulated host preset (%d CPUs, %s), v6.6-eevdf\n\n", len(m.CPUs), calibNote)
	type bench2 struct {
		what     string
		perfArgs []string
		wname    string
		wargs    []string
		metric   string
		re       *regexp.Regexp
	}
	for _, b := range []bench2{
		{"perf bench sched pipe -l 20000", []string{"pipe", "-l", "20000"}, "pipe", []string{"-l", "20000"}, "usecs/op", perfUsecsOp},
		{"perf bench sched messaging -l 20", []string{"messaging", "-l", "20"}, "messaging", []string{"-l", "20"}, "Total time [sec]", perfTotalSec},
	} {
		res, err := r.runOne(m, emu.DefaultProfile, r.e.seed, b.wname, b.wargs...)
		if err != nil {
			return err
		}
		var emuOut strings.Builder
		if err := res.Workload.Report(&emuOut, res.Sim); err != nil {
			return err
		}
		emuVal := parseFirst(b.re, emuOut.String())
		realOut, rerr := r.realPerf(b.perfArgs...)
		fmt.Fprintf(r.out, "== %s (%s)\n", b.what, b.metric)
		if rerr != nil {
			fmt.Fprintf(r.out, "  real:     skipped (%v)\n", rerr)
			fmt.Fprintf(r.out, "  emulated: %.3f\n\n", emuVal)
			continue
		}
		realVal := parseFirst(b.re, realOut)
		fmt.Fprintf(r.out, "  real:     %.3f\n  emulated: %.3f\n  emulated/real: %.2f\n\n", realVal, emuVal, emuVal/max(realVal, 1e-9))
	}
	if r.e.calib == "" && !r.fit {
		fmt.Fprintf(r.out, "The host preset's kernel costs come from its spec: pass -fit (or -calib FILE from emu calibrate -o) to fit them to this machine.\n")
	}
	return nil
}

func parseFirst(re *regexp.Regexp, s string) float64 {
	mm := re.FindStringSubmatch(s)
	if mm == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(mm[1], 64)
	return v
}
