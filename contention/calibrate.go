package contention

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/weave"
)

// CalibrateOptions size the calibration probes.
type CalibrateOptions struct {
	PingPongRounds int           // round trips per batch (default 200000)
	HammerDur      time.Duration // per hammer configuration (default 300 ms)
	PipeRounds     int           // round trips per batch (default 3000)
	StreamRounds   int           // system calls and messages per batch of the stream probe (default 20000)
	FaultPages     int           // pages first-touched per batch (default 4096: 16 MiB)
	ForkPages      int           // pages a forked child copies per batch (default 1024)
	// Repeats is how many times the whole set of probes runs (default
	// 3), one round after another, so that a burst of other work on the
	// host lands in one round's samples rather than in all of one probe's.
	Repeats int
	// MaxSpread is the widest spread (IQR/median of a probe's samples)
	// Calibrate fits: 0 is DefaultMaxSpread, negative never refuses.
	MaxSpread float64
	// Settle is how long, at most, Calibrate first waits for the machine
	// to quiet down (Settle; 0: it does not wait).
	Settle time.Duration
}

// QuickCalibrate are the options of emu calibrate -quick (and of emu
// reproduce -fit): fewer rounds per batch, a few seconds in all.
var QuickCalibrate = CalibrateOptions{PingPongRounds: 2000, HammerDur: 20 * time.Millisecond, PipeRounds: 100, StreamRounds: 2000, FaultPages: 256, ForkPages: 256, Repeats: 5,
	Settle: DefaultSettle}

// DefaultSettle is how long emu calibrate and reproduce -fit wait, at
// most, for the machine to quiet down before their probes.
const DefaultSettle = 20 * time.Second

func (o *CalibrateOptions) defaults() {
	if o.PingPongRounds <= 0 {
		o.PingPongRounds = 200000
	}
	if o.HammerDur <= 0 {
		o.HammerDur = 300 * time.Millisecond
	}
	if o.PipeRounds <= 0 {
		o.PipeRounds = 3000
	}
	if o.StreamRounds <= 0 {
		o.StreamRounds = 20000
	}
	if o.FaultPages <= 0 {
		o.FaultPages = 4096
	}
	if o.ForkPages <= 0 {
		o.ForkPages = 1024
	}
	if o.Repeats <= 0 {
		o.Repeats = 3
	}
	if o.MaxSpread == 0 {
		o.MaxSpread = DefaultMaxSpread
	}
}

// CalibRow is one measured figure beside the host preset's predictions,
// before and after applying the calibration measured in the same run.
// Measured is the median of the probe's samples (its batches over every
// repeat), Spread their IQR/median.
type CalibRow struct {
	Probe     string  `json:"probe"`
	CPUs      string  `json:"cpus"`
	Unit      string  `json:"unit"`
	Measured  float64 `json:"measured"`
	Spread    float64 `json:"spread"`
	Samples   int     `json:"samples"`
	Predicted float64 `json:"predicted"`
	After     float64 `json:"predicted_after_calibration"`
}

// CalibReport is what Calibrate found.
type CalibReport struct {
	Host  string         `json:"host"`
	Rows  []CalibRow     `json:"rows"`
	Calib *hwmodel.Calib `json:"calibration"`
	Notes []string       `json:"notes,omitempty"`
	// OtherLoad is the share of the CPUs' time other processes used
	// while the probes ran (LoadMeter), -1 if unknown.
	OtherLoad float64 `json:"other_load"`
	// Settled is how long Calibrate waited for the machine to quiet down
	// first, and SettleLoad the others' share of the CPUs in its last
	// sample (-1: not measured).
	Settled    time.Duration    `json:"settled_ns"`
	SettleLoad float64          `json:"settle_load"`
	After      *hwmodel.Machine `json:"-"`
}

// probeSet accumulates one probe's samples over the repeats.
type probeSet struct {
	probe, cpus, unit string
	samples           []float64
	predict           func(*hwmodel.Machine) float64
	set               func(*hwmodel.Calib, float64) // where the median goes; nil: a check only
}

// spreadChecked reports whether p's spread can make the host too noisy
// to fit: the probes whose medians the calibration applies. The checks
// (set nil: the copy-on-write shootdown) and the first-touch fault once
// the copy-on-write fault is measured (it supersedes it:
// hwmodel.Calib.applyPageFault) are printed with their spread only.
func spreadChecked(p, firstTouch, cow *probeSet) bool {
	return p.set != nil && !(p == firstTouch && len(cow.samples) > 0)
}

// Calibrate measures the host with the physical probes: a CAS ping-pong
// for each distance class present among the allowed CPUs, an atomic-add
// hammer with 1 and 2 writers on one line and on padded lines, a pipe
// round trip through the real kernel on two CPUs and on one, a bare system
// call and a 100-byte message through a pipe and an AF_UNIX socket on one
// thread (StreamCosts), a page fault, and a forked child's copy-on-write fault, exit and reap
// (ForkFaults). The whole set runs opt.Repeats times; each figure is the median
// of its samples (every batch of every repeat; one per repeat for the
// hammer), reported with its spread next to what the host machine m
// predicts, and next to what it predicts once the medians are applied as
// a calibration. When a spread exceeds opt.MaxSpread the report comes
// with a *NoisyError, and its calibration must not be used.
func Calibrate(m *hwmodel.Machine, opt CalibrateOptions) (*CalibReport, error) {
	opt.defaults()
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	rep := &CalibReport{Host: m.Description, SettleLoad: -1}
	if opt.Settle > 0 {
		rep.Settled, rep.SettleLoad = Settle(opt.Settle, DefaultSettleLoad)
	}
	cal := &hwmodel.Calib{Host: host, Date: time.Now().UTC().Format("2006-01-02"), PingPongNS: map[string]float64{}}
	rep.Calib = cal

	// The first allowed pair of each distance class.
	pairs := map[hwmodel.Class][2]int{}
	for i, a := range allowed {
		for _, b := range allowed[i+1:] {
			if a >= m.NumCPUs() || b >= m.NumCPUs() {
				continue
			}
			c := m.Class(a, b)
			if _, ok := pairs[c]; !ok {
				pairs[c] = [2]int{a, b}
			}
		}
	}
	if len(pairs) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("only %d CPU allowed: no ping-pong or two-writer figures", len(allowed)))
	}
	c0 := allowed[0]
	var sets []*probeSet
	add := func(p *probeSet) *probeSet { sets = append(sets, p); return p }

	type pingPair struct {
		a, b int
		set  *probeSet
	}
	var pings []pingPair
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		p, ok := pairs[c]
		if !ok {
			continue
		}
		a, b, name := p[0], p[1], c.String()
		pings = append(pings, pingPair{a, b, add(&probeSet{probe: "ping-pong one-way, " + name, cpus: fmt.Sprintf("%d-%d", a, b), unit: "ns",
			predict: func(m *hwmodel.Machine) float64 { return weave.PredictPingPong(m, a, b) },
			set:     func(cal *hwmodel.Calib, v float64) { cal.PingPongNS[name] = round2(v) }})})
	}
	h1 := add(&probeSet{probe: "hammer 1 writer (ns/op)", cpus: fmt.Sprint(c0), unit: "ns",
		predict: func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, []int{c0}, true) },
		set:     func(cal *hwmodel.Calib, v float64) { cal.RMWLocalNS = round2(v) }})
	// Two writers on the closest pair.
	var h2 []*probeSet
	var h2cpus []int
	if c, p, ok := firstPair(pairs); ok {
		cpus, list, name := []int{p[0], p[1]}, fmt.Sprintf("%d,%d", p[0], p[1]), c.String()
		h2cpus = cpus
		h2 = []*probeSet{
			add(&probeSet{probe: "hammer 2 writers, one line (aggregate ns/op)", cpus: list, unit: "ns",
				predict: func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, cpus, true) },
				set: func(cal *hwmodel.Calib, v float64) {
					cal.Hammer2Class, cal.Hammer2SharedNS = name, round2(v)
				}}),
			add(&probeSet{probe: "hammer 2 writers, padded lines (aggregate ns/op)", cpus: list, unit: "ns",
				predict: func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, cpus, false) },
				set:     func(cal *hwmodel.Calib, v float64) { cal.Hammer2PaddedNS = round2(v) }}),
		}
	}
	// Pipe round trips through the real kernel.
	var pipe2 *probeSet
	_, p2, have2 := firstPair(pairs)
	if have2 {
		a, b := p2[0], p2[1]
		pipe2 = add(&probeSet{probe: "pipe round trip, 2 CPUs", cpus: fmt.Sprintf("%d-%d", a, b), unit: "us",
			predict: func(m *hwmodel.Machine) float64 { return m.PredictPipeRTT(a, b) / 1000 },
			set:     func(cal *hwmodel.Calib, v float64) { cal.PipeRTTUS = round2(v) }})
	}
	pipe1 := add(&probeSet{probe: "pipe round trip, 1 CPU", cpus: fmt.Sprint(c0), unit: "us",
		predict: func(m *hwmodel.Machine) float64 { return m.PredictPipeRTT(c0, c0) / 1000 },
		set:     func(cal *hwmodel.Calib, v float64) { cal.PipeRTT1US = round2(v) }})
	// A bare system call and a message through a pipe and an AF_UNIX
	// socket with nobody asleep: what the round trips cannot split from
	// the wakeup and the switch.
	sysc := add(&probeSet{probe: "system call, getppid(2)", cpus: fmt.Sprint(c0), unit: "ns",
		predict: func(m *hwmodel.Machine) float64 { return m.Costs.NS[hwmodel.OpSyscall] },
		set:     func(cal *hwmodel.Calib, v float64) { cal.SyscallNS = round2(v) }})
	pipeMsg := add(&probeSet{probe: "pipe message (100 B) written, read back", cpus: fmt.Sprint(c0), unit: "ns",
		predict: func(m *hwmodel.Machine) float64 { return m.PredictStreamMsg(false) },
		set:     func(cal *hwmodel.Calib, v float64) { cal.PipeMsgNS = round2(v) }})
	unixMsg := add(&probeSet{probe: "AF_UNIX message (100 B) written, read back", cpus: fmt.Sprint(c0), unit: "ns",
		predict: func(m *hwmodel.Machine) float64 { return m.PredictStreamMsg(true) },
		set:     func(cal *hwmodel.Calib, v float64) { cal.UnixMsgNS = round2(v) }})
	// One user page fault (first touch of a private page), as a forked
	// child's copy-on-write faults cost.
	fault := add(&probeSet{probe: "page fault, first touch of a private page", cpus: fmt.Sprint(c0), unit: "us",
		predict: func(m *hwmodel.Machine) float64 { return m.Costs.NS[hwmodel.OpPageFault] / 1000 },
		set:     func(cal *hwmodel.Calib, v float64) { cal.PageFaultUS = round2(v) }})
	// A forked child's copy-on-write faults (what a tool's children
	// pay), and the same fault while the mm runs on a second CPU, which
	// adds the TLB shootdown's IPI: a check of the model's IPI price.
	cow := add(&probeSet{probe: "copy-on-write fault after fork(), in the child", cpus: fmt.Sprint(c0), unit: "us",
		predict: func(m *hwmodel.Machine) float64 { return m.Costs.NS[hwmodel.OpPageFault] / 1000 },
		set:     func(cal *hwmodel.Calib, v float64) { cal.CoWFaultUS = round2(v) }})
	var cowRemote *probeSet
	other := -1
	if have2 {
		a, b := p2[0], p2[1]
		other = b
		if a != c0 {
			other = a
		}
		cowRemote = add(&probeSet{probe: "copy-on-write fault, mm running on the other CPU", cpus: fmt.Sprintf("%d-%d", c0, other), unit: "us",
			predict: func(m *hwmodel.Machine) float64 { return m.PredictCoWShootdown(c0, other) / 1000 }})
	}
	var exitUs, exitBaseUs []float64

	load := StartLoad()
	for range opt.Repeats {
		for _, p := range pings {
			r, err := PingPong(p.a, p.b, opt.PingPongRounds)
			if err != nil {
				return nil, fmt.Errorf("ping-pong %d-%d: %w", p.a, p.b, err)
			}
			p.set.samples = append(p.set.samples, r.BatchNs...)
		}
		r, err := Hammer(allowed[:1], true, opt.HammerDur)
		if err != nil {
			return nil, fmt.Errorf("hammer: %w", err)
		}
		h1.samples = append(h1.samples, r.NsPerOp)
		for i, set := range h2 {
			r, err := Hammer(h2cpus, i == 0, opt.HammerDur)
			if err != nil {
				return nil, fmt.Errorf("hammer: %w", err)
			}
			set.samples = append(set.samples, r.NsPerOp)
		}
		if pipe2 != nil {
			r, err := PipeRoundTrip(p2[0], p2[1], opt.PipeRounds)
			if err != nil {
				return nil, fmt.Errorf("pipe: %w", err)
			}
			pipe2.samples = append(pipe2.samples, r.BatchUsecs...)
		}
		r1, err := PipeRoundTrip(c0, c0, opt.PipeRounds)
		if err != nil {
			return nil, fmt.Errorf("pipe: %w", err)
		}
		pipe1.samples = append(pipe1.samples, r1.BatchUsecs...)
		st, err := StreamCosts(c0, opt.StreamRounds)
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		sysc.samples = append(sysc.samples, st.SyscallNs...)
		pipeMsg.samples = append(pipeMsg.samples, st.PipeMsgNs...)
		unixMsg.samples = append(unixMsg.samples, st.UnixMsgNs...)
		pf, err := PageFaults(c0, opt.FaultPages, 5)
		if err != nil {
			return nil, fmt.Errorf("page faults: %w", err)
		}
		fault.samples = append(fault.samples, pf.BatchUs...)
		fr, err := ForkFaults(c0, other, opt.ForkPages, 5)
		if err != nil {
			return nil, fmt.Errorf("fork faults: %w", err)
		}
		cow.samples = append(cow.samples, fr.CoWUs...)
		if cowRemote != nil {
			cowRemote.samples = append(cowRemote.samples, fr.CoWRemoteUs...)
		}
		exitUs, exitBaseUs = append(exitUs, fr.ExitUs...), append(exitBaseUs, fr.ExitBaseUs...)
	}
	rep.OtherLoad = load.Other()

	var names []string
	var robust []Robust
	for _, p := range sets {
		r := RobustOf(p.samples)
		if spreadChecked(p, fault, cow) {
			names, robust = append(names, p.probe), append(robust, r)
		}
		if p.set != nil {
			p.set(cal, r.Median)
		}
		rep.Rows = append(rep.Rows, CalibRow{Probe: p.probe, CPUs: p.cpus, Unit: p.unit, Measured: r.Median,
			Spread: r.Spread, Samples: r.N, Predicted: p.predict(m)})
	}
	ex, base := RobustOf(exitUs), RobustOf(exitBaseUs)
	rep.Notes = append(rep.Notes, fmt.Sprintf("exit and reap of a forked child of this process: %.0f us holding %d copied pages, %.0f us without them (IQR/median %.2f, %.2f): %.3f us per page (not priced: exit_mmap scales with the page fault)",
		ex.Median, opt.ForkPages, base.Median, ex.Spread, base.Spread, (ex.Median-base.Median)/float64(opt.ForkPages)))
	after, err := cal.Apply(m, weave.PredictHammer)
	if err != nil {
		return nil, err
	}
	rep.After = after
	for i, p := range sets {
		rep.Rows[i].After = p.predict(after)
	}
	return rep, CheckSpread(names, robust, opt.MaxSpread, rep.OtherLoad)
}

// firstPair is the closest distance class among pairs and its pair.
func firstPair(pairs map[hwmodel.Class][2]int) (hwmodel.Class, [2]int, bool) {
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		if p, ok := pairs[c]; ok {
			return c, p, true
		}
	}
	return 0, [2]int{}, false
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Write prints the report as a table.
func (r *CalibReport) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "host: %s\n\n", r.Host)
	fmt.Fprintf(&b, "%-50s %-7s %12s %7s %12s %7s %14s %7s\n", "probe", "cpus", "measured", "spread", "predicted", "ratio", "after calib", "ratio")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "%-50s %-7s %9.2f %-2s %7.2f %9.2f %-2s %7.2f %11.2f %-2s %7.2f\n", row.Probe, row.CPUs,
			row.Measured, row.Unit, row.Spread, row.Predicted, row.Unit, row.Predicted/row.Measured,
			row.After, row.Unit, row.After/row.Measured)
	}
	if r.SettleLoad >= 0 {
		fmt.Fprintf(&b, "waited %.2f s for the machine to settle first: other processes used %.0f%% of the CPUs in its last %v\n", r.Settled.Seconds(), 100*r.SettleLoad, SettleSample)
	}
	if r.OtherLoad >= 0 {
		fmt.Fprintf(&b, "other processes used %.0f%% of the CPUs while the probes ran\n", 100*r.OtherLoad)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "\nmeasured = the median of the probe's samples (its batches, over every repeat); spread = their IQR/median.\n")
	fmt.Fprintf(&b, "ratio = predicted / measured. 'after calib' applies this run's measurements\n")
	fmt.Fprintf(&b, "(emu calibrate -o FILE; then -calib FILE with -topo host): transfer latency per\n")
	fmt.Fprintf(&b, "class, uncontended RMW, fitted burst %d, the system call and the pipe's and\nAF_UNIX socket's paths from the getppid and message probes, two scales on the other\nkernel-operation costs (the local path from the 1-CPU pipe, the IPI/idle-exit path from the\n2-CPU pipe), and the copy-on-write fault after fork() as page_fault (which scales exit_mmap alike; the first-touch\nfault where it is not measured). The fault with the mm on the other CPU checks the IPI's price\n(the TLB shootdown): no modeled workload pays it.\n", r.After.Lat.Burst)
	_, err := io.WriteString(w, b.String())
	return err
}
