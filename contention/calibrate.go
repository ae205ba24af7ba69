package contention

import (
	"fmt"
	"github.com/rqemu/rqemu/weave"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/rqemu/rqemu/hwmodel"
)

// CalibrateOptions size the calibration probes.
type CalibrateOptions struct {
	PingPongRounds int           // round trips per batch (default 200000)
	HammerDur      time.Duration // per hammer configuration (default 300 ms)
	PipeRounds     int           // round trips per batch (default 3000)
	FaultPages     int           // pages first-touched per batch (default 4096: 16 MiB)
}

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
	if o.FaultPages <= 0 {
		o.FaultPages = 4096
	}
}

// CalibRow is one measured figure beside the host preset's predictions,
// before and after applying the calibration measured in the same run.
type CalibRow struct {
	Probe     string  `json:"probe"`
	CPUs      string  `json:"cpus"`
	Unit      string  `json:"unit"`
	Measured  float64 `json:"measured"`
	Predicted float64 `json:"predicted"`
	After     float64 `json:"predicted_after_calibration"`
}

// CalibReport is what Calibrate found.
type CalibReport struct {
	Host  string           `json:"host"`
	Rows  []CalibRow       `json:"rows"`
	Calib *hwmodel.Calib   `json:"calibration"`
	Notes []string         `json:"notes,omitempty"`
	After *hwmodel.Machine `json:"-"`
}

// Calibrate measures the host with the physical probes: a CAS ping-pong
// for each distance class present among the allowed CPUs, an atomic-add
// hammer with 1 and 2 writers on one line and on padded lines, and a pipe
// round trip through the real kernel on two CPUs and on one. Each figure is
// reported next to what the host machine m predicts, and next to what it
// predicts once the measurements are applied as a calibration.
func Calibrate(m *hwmodel.Machine, opt CalibrateOptions) (*CalibReport, error) {
	opt.defaults()
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	rep := &CalibReport{Host: m.Description}
	cal := &hwmodel.Calib{Host: host, Date: time.Now().UTC().Format("2006-01-02"), PingPongNS: map[string]float64{}}
	rep.Calib = cal
	type pred struct {
		row int
		f   func(*hwmodel.Machine) float64
	}
	var preds []pred
	add := func(probe, cpus, unit string, measured float64, f func(*hwmodel.Machine) float64) {
		rep.Rows = append(rep.Rows, CalibRow{Probe: probe, CPUs: cpus, Unit: unit, Measured: measured, Predicted: f(m)})
		preds = append(preds, pred{len(rep.Rows) - 1, f})
	}

	// Ping-pong per class, on the first allowed pair of each class.
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
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		p, ok := pairs[c]
		if !ok {
			continue
		}
		r, err := PingPong(p[0], p[1], opt.PingPongRounds)
		if err != nil {
			return nil, fmt.Errorf("ping-pong %d-%d: %w", p[0], p[1], err)
		}
		cal.PingPongNS[c.String()] = round2(r.MedianNs)
		a, b := p[0], p[1]
		add("ping-pong one-way, "+c.String(), fmt.Sprintf("%d-%d", a, b), "ns", r.MedianNs,
			func(m *hwmodel.Machine) float64 { return weave.PredictPingPong(m, a, b) })
	}
	if len(pairs) == 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("only %d CPU allowed: no ping-pong or two-writer figures", len(allowed)))
	}

	// Hammer: one writer, then two on the closest pair.
	h1, err := Hammer(allowed[:1], true, opt.HammerDur)
	if err != nil {
		return nil, fmt.Errorf("hammer: %w", err)
	}
	cal.RMWLocalNS = round2(h1.NsPerOp)
	c0 := allowed[0]
	add("hammer 1 writer (ns/op)", fmt.Sprint(c0), "ns", h1.NsPerOp,
		func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, []int{c0}, true) })
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		p, ok := pairs[c]
		if !ok {
			continue
		}
		cpus := []int{p[0], p[1]}
		hs, err := Hammer(cpus, true, opt.HammerDur)
		if err != nil {
			return nil, fmt.Errorf("hammer: %w", err)
		}
		hp, err := Hammer(cpus, false, opt.HammerDur)
		if err != nil {
			return nil, fmt.Errorf("hammer: %w", err)
		}
		cal.Hammer2Class = c.String()
		cal.Hammer2SharedNS = round2(hs.NsPerOp)
		cal.Hammer2PaddedNS = round2(hp.NsPerOp)
		list := fmt.Sprintf("%d,%d", p[0], p[1])
		add("hammer 2 writers, one line (aggregate ns/op)", list, "ns", hs.NsPerOp,
			func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, cpus, true) })
		add("hammer 2 writers, padded lines (aggregate ns/op)", list, "ns", hp.NsPerOp,
			func(m *hwmodel.Machine) float64 { return weave.PredictHammer(m, cpus, false) })
		break
	}

	// Pipe round trips through the real kernel.
	if p, ok := firstPair(pairs); ok {
		r, err := PipeRoundTrip(p[0], p[1], opt.PipeRounds)
		if err != nil {
			return nil, fmt.Errorf("pipe: %w", err)
		}
		cal.PipeRTTUS = round2(r.UsecsPerOp)
		a, b := p[0], p[1]
		add("pipe round trip, 2 CPUs", fmt.Sprintf("%d-%d", a, b), "us", r.UsecsPerOp,
			func(m *hwmodel.Machine) float64 { return m.PredictPipeRTT(a, b) / 1000 })
	}
	r1, err := PipeRoundTrip(c0, c0, opt.PipeRounds)
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	cal.PipeRTT1US = round2(r1.UsecsPerOp)
	add("pipe round trip, 1 CPU", fmt.Sprint(c0), "us", r1.UsecsPerOp,
		func(m *hwmodel.Machine) float64 { return m.PredictPipeRTT(c0, c0) / 1000 })

	// One user page fault (first touch of a private page), as a forked
	// child's copy-on-write faults cost.
	pf, err := PageFaults(c0, opt.FaultPages, 5)
	if err != nil {
		return nil, fmt.Errorf("page faults: %w", err)
	}
	cal.PageFaultUS = round2(pf.UsPerFault)
	add("page fault, first touch of a private page", fmt.Sprint(c0), "us", pf.UsPerFault,
		func(m *hwmodel.Machine) float64 { return m.Costs.NS[hwmodel.OpPageFault] / 1000 })

	after, err := cal.Apply(m, weave.PredictHammer)
	if err != nil {
		return nil, err
	}
	rep.After = after
	for _, p := range preds {
		rep.Rows[p.row].After = p.f(after)
	}
	return rep, nil
}

func firstPair(pairs map[hwmodel.Class][2]int) ([2]int, bool) {
	for c := hwmodel.ClassSMT; c < hwmodel.NumClasses; c++ {
		if p, ok := pairs[c]; ok {
			return p, true
		}
	}
	return [2]int{}, false
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// Write prints the report as a table.
func (r *CalibReport) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "host: %s\n\n", r.Host)
	fmt.Fprintf(&b, "%-50s %-7s %12s %12s %7s %14s %7s\n", "probe", "cpus", "measured", "predicted", "ratio", "after calib", "ratio")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "%-50s %-7s %9.2f %-2s %9.2f %-2s %7.2f %11.2f %-2s %7.2f\n", row.Probe, row.CPUs,
			row.Measured, row.Unit, row.Predicted, row.Unit, row.Predicted/row.Measured,
			row.After, row.Unit, row.After/row.Measured)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "\nratio = predicted / measured. 'after calib' applies this run's measurements\n")
	fmt.Fprintf(&b, "(emu calibrate -o FILE; then -calib FILE with -topo host): transfer latency per\n")
	fmt.Fprintf(&b, "class, uncontended RMW, fitted burst %d, two scales on kernel-operation costs\n(the local path from the 1-CPU pipe, the IPI/idle-exit path from the 2-CPU pipe), and the\npage fault (which scales exit_mmap alike).\n", r.After.Lat.Burst)
	_, err := io.WriteString(w, b.String())
	return err
}
