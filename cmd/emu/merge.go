package main

import (
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rqemu/rqemu/bench"
	"github.com/rqemu/rqemu/hwmodel"
)

const mergeUsage = `usage: emu merge [-base FEATURES] FILE.ndjson|DIR ...

Reads NDJSON records (emu run -o, emu reproduce -o, emu sweep; a DIR
means its *.ndjson files) and prints emu compare's table (lkp-tests'
compare.rb layout) for each group of runs that differ only in their
feature set and seed: the base feature set (-base, or the first one met)
against each other one, the seeds as the samples. A group with one feature
set prints its means alone.

examples:
  emu merge udprr.ndjson
  emu merge -base v6.6-eevdf out/`

// mergeGroup is the runs of one machine, workload and command line.
type mergeGroup struct {
	topo, workload string
	args           []string
	features       []string // in the order met
	bySide         map[string][]*record
}

// groupRecords groups records by machine, workload and arguments, in
// the order first met.
func groupRecords(recs []*record) []*mergeGroup {
	var groups []*mergeGroup
	index := map[string]*mergeGroup{}
	for _, r := range recs {
		key := fmt.Sprintf("%s|%s|%q|%d|%s", r.Config.Topo, r.Config.Workload, r.Config.Args, r.Config.EpochNS, r.Config.Driver)
		g := index[key]
		if g == nil {
			g = &mergeGroup{topo: r.Config.Topo, workload: r.Config.Workload, args: r.Config.Args, bySide: map[string][]*record{}}
			index[key] = g
			groups = append(groups, g)
		}
		if _, ok := g.bySide[r.Config.Features]; !ok {
			g.features = append(g.features, r.Config.Features)
		}
		g.bySide[r.Config.Features] = append(g.bySide[r.Config.Features], r)
	}
	for _, g := range groups {
		for _, rs := range g.bySide {
			sort.SliceStable(rs, func(i, j int) bool { return rs[i].Seed < rs[j].Seed })
		}
	}
	return groups
}

func (r *record) sample() sample {
	return sample{metrics: r.Result, lkp: r.LKP, counters: r.Counters, profile: r.Profile}
}

// samplesFor pairs the two sides by seed: only seeds both sides ran.
func samplesFor(a, b []*record) (sa, sb []sample) {
	bySeed := map[uint64]*record{}
	for _, r := range b {
		bySeed[r.Seed] = r
	}
	for _, r := range a {
		if o, ok := bySeed[r.Seed]; ok {
			sa, sb = append(sa, r.sample()), append(sb, o.sample())
		}
	}
	return sa, sb
}

func runMerge(args []string, stdout, stderr io.Writer) error {
	var base string
	fs := newFlags("merge", mergeUsage, stderr)
	fs.StringVar(&base, "base", "", "the base feature set (default: the first met in each group)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usagef("merge: need at least one FILE.ndjson or DIR")
	}
	recs, err := readRecords(fs.Args())
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return usagef("merge: no records in %s", strings.Join(fs.Args(), " "))
	}
	warnPartial(stderr, recs)
	if err := lkpReparse(recs, stderr); err != nil {
		return err
	}
	writeMerge(stdout, recs, base)
	return nil
}

// lkpReparse replaces the records' lkp metrics with what lkp's own
// parsers ($LKP_SRC) read from their reports, when LKP_SRC is set; a
// record without a report (NDJSON written before records kept it) keeps
// its own, with a warning.
func lkpReparse(recs []*record, stderr io.Writer) error {
	var workloads []string
	seen := map[string]bool{}
	for _, r := range recs {
		if !seen[r.Config.Workload] {
			seen[r.Config.Workload] = true
			workloads = append(workloads, r.Config.Workload)
		}
	}
	src, err := lkpSourceFor(workloads...)
	if src == nil {
		return err
	}
	type job struct {
		r   *record
		lkp map[string]float64
		err error
	}
	var jobs []*job
	noReport := 0
	for _, r := range recs {
		switch {
		case bench.LKPProgram(r.Config.Workload) == "":
		case r.Report == "":
			noReport++
		default:
			jobs = append(jobs, &job{r: r})
		}
	}
	if noReport > 0 {
		fmt.Fprintf(stderr, "emu merge: warning: %d of the %d records carry no report (\"report\"), so lkp's parsers cannot read them: their lkp rows are those recorded\n", noReport, len(recs))
	}
	// Each parser is a ruby process: several at once, as many as CPUs.
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			j.lkp, j.err = src.Stats(j.r.Config.Workload, j.r.Report)
			<-sem
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return j.err
		}
		j.r.LKP = j.lkp
	}
	return nil
}

// warnPartial says, once, how many records are of runs that did not
// finish (interrupted, or stopped at their bound): their numbers cover
// only the time run, and the tables mix them with the others.
func warnPartial(w io.Writer, recs []*record) {
	var stopped, short int
	for _, r := range recs {
		switch {
		case r.Interrupted:
			stopped++
		case !r.Complete:
			short++
		}
	}
	if stopped > 0 {
		fmt.Fprintf(w, "emu merge: warning: %d of the %d records are of interrupted runs (\"interrupted\": true): their numbers cover only the time run\n", stopped, len(recs))
	}
	if short > 0 {
		fmt.Fprintf(w, "emu merge: warning: %d of the %d records are of runs that did not finish (\"complete\": false): their numbers cover only the time run\n", short, len(recs))
	}
}

// writeMerge prints the tables of the records' groups.
func writeMerge(w io.Writer, recs []*record, base string) {
	for _, g := range groupRecords(recs) {
		st := &setup{m: &hwmodel.Machine{Name: g.topo}, spec: bench.Spec{Name: g.workload}, wargs: g.args}
		b := g.features[0]
		if _, ok := g.bySide[base]; ok {
			b = base
		}
		if len(g.features) == 1 {
			var s []sample
			for _, r := range g.bySide[b] {
				s = append(s, r.sample())
			}
			writeCompare(w, st, []string{b, b}, [][]sample{s, s})
			continue
		}
		for _, f := range g.features {
			if f == b {
				continue
			}
			sa, sb := samplesFor(g.bySide[b], g.bySide[f])
			writeCompare(w, st, []string{b, f}, [][]sample{sa, sb})
		}
	}
}
