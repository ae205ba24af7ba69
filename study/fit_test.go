package study

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
)

// On a separable objective (a sum of one function per coordinate, each a
// random table over its grid) coordinate descent finds the brute-force
// minimum over the grids, from any start, on or off the grids, and
// evaluates no point twice.
func TestDescendIsBruteForceOnSeparable(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 42))
		k := 1 + rng.IntN(4)
		grids := make([][]float64, k)
		tables := make([]map[float64]float64, k)
		start := make([]float64, k)
		for i := range k {
			n := 1 + rng.IntN(6)
			tables[i] = map[float64]float64{}
			for j := range n {
				v := float64(j) + 1
				grids[i] = append(grids[i], v)
				tables[i][v] = math.Round(rng.Float64()*20) / 2 // ties happen
			}
			if rng.IntN(3) == 0 {
				start[i] = 0.5 // off the grid
				tables[i][0.5] = math.Round(rng.Float64()*20) / 2
			} else {
				start[i] = grids[i][rng.IntN(n)]
			}
		}
		obj := func(p []float64) float64 {
			var s float64
			for i, v := range p {
				s += tables[i][v]
			}
			return s
		}
		// Brute force over the grids (and the start's off-grid values).
		bruteMin := math.Inf(1)
		var walk func(i int, p []float64)
		walk = func(i int, p []float64) {
			if i == k {
				bruteMin = min(bruteMin, obj(p))
				return
			}
			cands := slices.Clone(grids[i])
			if !slices.Contains(cands, start[i]) {
				cands = append(cands, start[i])
			}
			for _, v := range cands {
				walk(i+1, append(slices.Clone(p), v))
			}
		}
		walk(0, nil)
		seen := map[string]bool{}
		best, bestF, err := descend(grids, start, 10, func(pts [][]float64) ([]float64, error) {
			var out []float64
			for _, p := range pts {
				if seen[fmt.Sprint(p)] {
					t.Errorf("seed %d: %v evaluated twice", seed, p)
				}
				seen[fmt.Sprint(p)] = true
				out = append(out, obj(p))
			}
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if bestF != bruteMin || obj(best) != bestF {
			t.Errorf("seed %d: descent %v = %v, brute force %v", seed, best, bestF, bruteMin)
		}
	}
}

// A non-separable objective: the descent ends without a move in its last
// round or after -rounds rounds, never worse than the start.
func TestDescendNeverWorse(t *testing.T) {
	grids := [][]float64{{1, 2, 3}, {1, 2, 3}}
	obj := func(p []float64) float64 { return (p[0]-p[1])*(p[0]-p[1]) + 0.1*p[0] }
	for _, rounds := range []int{1, 2, 5} {
		best, f, err := descend(grids, []float64{3, 1}, rounds, func(pts [][]float64) ([]float64, error) {
			var out []float64
			for _, p := range pts {
				out = append(out, obj(p))
			}
			return out, nil
		})
		if err != nil || f > obj([]float64{3, 1}) || obj(best) != f {
			t.Errorf("rounds %d: %v %v %v", rounds, best, f, err)
		}
	}
}

// Every family fits to exactly the rows reproduce's rollup runs on its
// presets: the calibration studies' rows (not -all's extras, not those
// waiting for a kernel profile, not host-pipe's) on a family preset.
func TestFitRowsAreTheFamilysRows(t *testing.T) {
	for _, fam := range Families {
		var want []FitRow
		for _, st := range studies {
			if st.Set != "calibration" || st.Custom != nil {
				continue
			}
			for _, r := range st.Rows {
				if !r.Extra && r.Needs == "" && slices.Contains(fam.Presets, r.Topo) {
					want = append(want, FitRow{st.Name, r.Label})
				}
			}
		}
		if !slices.Equal(fam.Rows, want) {
			t.Errorf("%s: rows %v, want %v", fam.Name, fam.Rows, want)
		}
		if len(fam.Consts) == 0 || len(fam.Consts) > 3 || fam.Consts[0].Paths[0] != "latency_ns.smt_yield" {
			t.Errorf("%s: %d constants (want 1-3, smt_yield first)", fam.Name, len(fam.Consts))
		}
		for _, c := range fam.Consts {
			if _, err := ParseVary(c.Name()+"="+strings.Trim(strings.ReplaceAll(fmtGrid(c.Grid), " ", ""), "{}"), fam); err != nil {
				t.Errorf("%s: %v", fam.Name, err)
			}
			for _, p := range c.Paths {
				for _, topo := range fam.Presets {
					spec, _ := presetSpec(topo)
					src, _ := spec.Sourced(p)
					if src == nil || !(strings.HasPrefix(src.Source, "[E]") || strings.HasPrefix(src.Source, "[C]")) {
						t.Errorf("%s: %s %s is not an [E] estimate or a [C] fit", fam.Name, topo, p)
					}
				}
			}
		}
	}
}

// The candidate's values reach only the family's presets, and the cache
// keeps candidates apart.
func TestSpecValuesOnlyTheirTopos(t *testing.T) {
	v := &SpecValues{Topos: []string{"spr-2s"}, Paths: []string{"latency_ns.smt_yield"}, Values: []float64{0.7}}
	if v.edit("icl-2s") != nil {
		t.Error("an spr candidate edits icl-2s")
	}
	m, err := hwmodel.Load("spr-2s", hwmodel.LoadOptions{Edit: v.edit("spr-2s")})
	if err != nil || m.Lat.SMTYield != 0.7 {
		t.Errorf("spr-2s smt_yield %v, %v; want 0.7", m.Lat.SMTYield, err)
	}
	a := &Runner{Engine: Engine{Values: v}}
	b := &Runner{Engine: Engine{Values: &SpecValues{Topos: v.Topos, Paths: v.Paths, Values: []float64{0.6}}}}
	run := Run{Topo: "spr-2s", Workload: "pipe"}
	if a.key(run, 1) == b.key(run, 1) {
		t.Error("two candidates share a cache key")
	}
}

// tinyFit is a fit of hikey-8's pipe costs to a made-up published
// pipe rate (a test study): real runs, a fraction of a second each.
func tinyFit(jobs int, out *bytes.Buffer) *Fit {
	st := &Study{Name: "tiny-pipe", Set: "calibration", Doc: "perf bench sched pipe on hikey-8",
		Settings: []Setting{{"base", "v6.6-eevdf"}},
		Rows: []Row{{Label: "pipe", Topo: "hikey-8", Workload: "pipe", Args: []string{"-l", "{L}"},
			Length: Length{Default: 2000, Quick: 1000, Int: true, Unit: "loops"}}},
		Metrics: []Metric{{Name: "ops/s", Key: "ops_per_sec", Pub: 30000}}}
	fam := &Family{Name: "tiny", Presets: []string{"hikey-8"}, Rows: []FitRow{{"tiny-pipe", "pipe"}}}
	c := Const{Paths: []string{"costs_cycles.pipe_write", "costs_cycles.pipe_read"}, Grid: []float64{450, 9000, 18000}, Why: "test"}
	return &Fit{Family: fam, Consts: []Const{c}, Quick: true, Seed: 1, Rounds: 3, Jobs: jobs, Driver: "parallel", Out: out, all: []*Study{st}}
}

// The same fit prints the same bytes twice and with -j 1 and -j 2, and
// moves the costs toward the published rate (30000 ops/s, slower than
// the preset's 50000).
func TestFitSameBytes(t *testing.T) {
	var outs []string
	var res *FitResult
	for _, j := range []int{1, 1, 2} {
		var out bytes.Buffer
		r, err := tinyFit(j, &out).Run()
		if err != nil {
			t.Fatal(err)
		}
		res = r
		outs = append(outs, out.String())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		t.Errorf("outputs differ:\n%s\n---\n%s\n---\n%s", outs[0], outs[1], outs[2])
	}
	text := outs[0]
	for _, want := range []string{"eval 1: costs_cycles.pipe_write=450", "eval 3:", "best:", "tiny-pipe  pipe", "pipe_read: {value: ", "[C] fitted by `emu fit -family tiny -scale quick` to tiny-pipe pipe"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if !(res.BestF < res.StartF) || res.Best[0] == 450 {
		t.Errorf("best %v (objective %v), start 450 (%v): the fit did not move toward 30000 ops/s", res.Best, res.BestF, res.StartF)
	}
	if i := slices.Index(res.Paths, "costs_cycles.pipe_read"); i < 0 || res.Values[i] != res.Best[0] {
		t.Errorf("pipe_read %v, want tied to pipe_write %v", res.Values, res.Best[0])
	}
}

func TestFitObjective(t *testing.T) {
	for _, c := range []struct {
		ps   []Pair
		want float64
	}{
		{[]Pair{{Emulated: 100, Lo: 100, Hi: 100}}, 0},
		{[]Pair{{Emulated: 200, Lo: 100, Hi: 100}, {Emulated: 50, Lo: 100, Hi: 100}}, math.Ln2 * math.Ln2},
		{[]Pair{{Emulated: -5, Lo: 48.8, Hi: 48.8}}, math.Ln10 * math.Ln10},
		{[]Pair{{Emulated: 1e6, Lo: 1, Hi: 1}}, math.Ln10 * math.Ln10},
		{[]Pair{{Emulated: -2.5, Lo: -3, Hi: -2}}, 0},
	} {
		if got := fitObjective(c.ps); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: %v, want %v", c.ps, got, c.want)
		}
	}
}

// -check names every [C] constant of the family's presets that the fit's
// result does not reproduce, and one that the fit does not vary.
func TestFitCheck(t *testing.T) {
	// spr's presets as they would read with smt_yield fitted.
	f := &Fit{Family: LookupFamily("spr"), spec: func(topo string) (*hwmodel.Spec, error) {
		s, err := presetSpec(topo)
		if err == nil {
			s.Latency.SMTYield.Source = "[C] test"
		}
		return s, err
	}}
	names, values, err := f.Fitted()
	if err != nil || len(names) != 2 {
		t.Fatalf("spr's [C] constants: %v %v", names, err)
	}
	res := &FitResult{}
	for i, n := range names {
		_, p, _ := strings.Cut(n, " ")
		if !slices.Contains(res.Paths, p) {
			res.Paths, res.Values = append(res.Paths, p), append(res.Values, values[i])
		}
	}
	if bad, err := f.Check(res); err != nil || len(bad) != 0 {
		t.Errorf("the presets' own values: %v %v", bad, err)
	}
	res.Values[0] *= 1.25
	if bad, _ := f.Check(res); len(bad) == 0 || !strings.Contains(bad[0], "the fit gives") {
		t.Errorf("a moved value: %v", bad)
	}
	if bad, _ := f.Check(&FitResult{}); len(bad) != len(names) || !strings.Contains(bad[0], "does not vary it") {
		t.Errorf("nothing varied: %v", bad)
	}
}
