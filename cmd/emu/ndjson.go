package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/hwmodel"
	"github.com/rqemu/rqemu/study"
)

// record is one run in an NDJSON results file (emu run -o, emu reproduce
// -o, emu sweep): one compact JSON object per line, which emu merge and
// emu plot read back, and jq reads as well.
type record struct {
	Config   recordConfig `json:"config"`
	Seed     uint64       `json:"seed"`
	Host     hostInfo     `json:"host"`
	Study    *recordStudy `json:"study,omitempty"`
	Sweep    *recordSweep `json:"sweep,omitempty"`
	Complete bool         `json:"complete"`
	// Interrupted: SIGINT or SIGTERM stopped the run; its numbers cover
	// the time run (emu merge warns).
	Interrupted bool          `json:"interrupted"`
	Result      bench.Metrics `json:"result"`
	// LKP are lkp-tests' parsers' metrics of the workload's output.
	LKP map[string]float64 `json:"lkp,omitempty"`
	// Report is the workload's output (what emu run prints), which
	// emu merge runs lkp's own parsers on when LKP_SRC is set.
	Report   string             `json:"report,omitempty"`
	Counters map[string]float64 `json:"counters"`
	// Profile is each symbol's share of all the time (idle included, as
	// perf report and compare's perf-profile rows have it), top 40.
	Profile    map[string]float64 `json:"profile,omitempty"`
	Histograms []bench.Histogram  `json:"histograms,omitempty"`
}

type recordConfig struct {
	Topo     string   `json:"topo"`
	CPUs     int      `json:"cpus"`
	Features string   `json:"features"`
	Workload string   `json:"workload"`
	Args     []string `json:"args"`
	// Params are the workload's flags as set (name: value), the axes a
	// sweep varies and emu plot -x reads.
	Params  map[string]string `json:"params"`
	EpochNS int64             `json:"epoch_ns"`
	Driver  string            `json:"driver"`
	// Sched are the tunables in force (those the kernel has), by their
	// -sched names: emu plot -x and -by read them as axes.
	Sched map[string]uint64 `json:"sched,omitempty"`
	// WindowFromSec is -window-from (s): the counters, profile and lkp
	// keys are the window's.
	WindowFromSec float64 `json:"window_from_sec,omitempty"`
	// WindowToSec is -window-to (s): the window's end and the run's.
	WindowToSec float64 `json:"window_to_sec,omitempty"`
}

type hostInfo struct {
	Hostname    string  `json:"hostname"`
	Vendor      string  `json:"vendor"`
	Model       string  `json:"model"`
	Arch        string  `json:"arch"`
	CPUs        int     `json:"cpus"`
	Go          string  `json:"go"`
	OS          string  `json:"os"`
	HostSeconds float64 `json:"host_seconds"`
}

type recordStudy struct {
	Name    string `json:"name"`
	Row     string `json:"row"`
	Setting string `json:"setting"`
	Quick   bool   `json:"quick,omitempty"`
}

type recordSweep struct {
	Index int `json:"index"`
	Of    int `json:"of"`
}

var hostOnce = sync.OnceValue(func() hostInfo {
	id := hwmodel.CPUIDIdentity()
	name, _ := os.Hostname()
	return hostInfo{Hostname: name, Vendor: id.Vendor, Model: id.Model, Arch: id.Arch,
		CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS}
})

// newRecord makes the record of an outcome.
func newRecord(o *study.Outcome, driver string) *record {
	h := hostOnce()
	h.HostSeconds = o.HostSec
	prof := map[string]float64{}
	for _, p := range o.Profile {
		prof[p.Symbol] = p.Percent
	}
	if driver == "" {
		driver = "parallel"
	}
	return &record{
		Config: recordConfig{Topo: o.Run.Topo, CPUs: o.CPUs, Features: o.Run.Features, Workload: o.Run.Workload,
			Args: o.Run.Args, Params: study.Params(o.Run.Workload, o.Run.Args), EpochNS: o.EpochNS, Driver: driver, Sched: o.Sched,
			WindowFromSec: o.Run.WindowFrom, WindowToSec: o.Run.WindowTo},
		Seed: o.Seed, Host: h, Complete: o.Complete, Interrupted: o.Interrupted, Result: o.Metrics, LKP: o.LKP, Report: o.Report, Counters: o.Counters,
		Profile: prof, Histograms: o.Histograms,
	}
}

// ndjsonWriter appends records to a file, one Write per line (so that
// runs of a sweep appending to one local file do not interleave).
type ndjsonWriter struct {
	mu sync.Mutex
	f  *os.File
}

func openNDJSON(path string) (*ndjsonWriter, error) {
	if path == "" {
		return nil, nil
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &ndjsonWriter{f: f}, nil
}

func (w *ndjsonWriter) write(r *record) error {
	if w == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.f.Write(append(b, '\n'))
	return err
}

func (w *ndjsonWriter) close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}

// readRecords reads NDJSON files, and every *.ndjson file of a directory
// given; a line that is not a record is an error naming file and line.
func readRecords(paths []string) ([]*record, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			m, err := filepath.Glob(filepath.Join(p, "*.ndjson"))
			if err != nil {
				return nil, err
			}
			sort.Strings(m)
			files = append(files, m...)
			continue
		}
		files = append(files, p)
	}
	var out []*record
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		recs, err := decodeRecords(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

func decodeRecords(r io.Reader, name string) ([]*record, error) {
	var out []*record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" {
			continue
		}
		var rec record
		if err := json.Unmarshal([]byte(t), &rec); err != nil {
			return nil, &usageError{msg: fmt.Sprintf("%s:%d: not an emu NDJSON record: %v", name, line, err)}
		}
		if rec.Config.Workload == "" {
			return nil, &usageError{msg: fmt.Sprintf("%s:%d: not an emu NDJSON record: no config.workload", name, line)}
		}
		out = append(out, &rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// value reads a metric of a record by the names study.Outcome.Value
// knows: a workload metric (with or without the workload's prefix), an
// lkp metric, a counter, or profile.SYMBOL.
func (r *record) value(name string) (float64, bool) {
	if v, ok := r.Result.Values[name]; ok {
		return v, true
	}
	if rest, ok := strings.CutPrefix(name, r.Config.Workload+"."); ok {
		if v, ok := r.Result.Values[rest]; ok {
			return v, true
		}
	}
	if v, ok := r.LKP[name]; ok {
		return v, true
	}
	if v, ok := r.Counters[name]; ok {
		return v, true
	}
	if sym, ok := strings.CutPrefix(name, "profile."); ok {
		return r.Profile[sym], true
	}
	return 0, false
}

// axis reads a config value or workload flag of a record: topo,
// features, workload, seed, cpus, a tunable (base_slice_ns, ...), or a
// flag name (nr, g, l, ...).
func (r *record) axis(name string) string {
	switch name {
	case "topo":
		return r.Config.Topo
	case "features":
		return r.Config.Features
	case "workload":
		return r.Config.Workload
	case "seed":
		return fmt.Sprint(r.Seed)
	case "cpus":
		return fmt.Sprint(r.Config.CPUs)
	}
	if v, ok := r.Config.Sched[name]; ok {
		return fmt.Sprint(v)
	}
	return r.Config.Params[strings.TrimLeft(name, "-")]
}

// appendRunRecord appends emu run's result to an NDJSON file.
func appendRunRecord(path string, f *runFlags, featSpec string, st *setup, res *bench.Result, hostSec float64) error {
	run := study.Run{Topo: st.m.Name, Features: featSpec, Workload: st.spec.Name, Args: workloadArgs(st), WindowFrom: f.windowFrom.Seconds(), WindowTo: f.windowTo.Seconds()}
	o := study.Summarize(run, f.seed, res)
	o.HostSec = hostSec
	o.EpochNS = epochNS(f.epoch, res.Sim)
	w, err := openNDJSON(path)
	if err != nil {
		return err
	}
	if err := w.write(newRecord(o, f.driver)); err != nil {
		w.close()
		return err
	}
	return w.close()
}

// workloadArgs are the workload's flags of a run's command line, as
// -name=value (what st.wargs holds).
func workloadArgs(st *setup) []string {
	return append([]string(nil), st.wargs...)
}
