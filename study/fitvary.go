package study

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rqemu/rqemu/hwmodel"
)

// fitGrid is lo, lo+step, ... up to hi (within a millionth of a step),
// each rounded to 9 significant digits so that 0.1 steps print as 0.3,
// not 0.30000000000000004.
func fitGrid(lo, hi, step float64) []float64 {
	var g []float64
	for i := 0; ; i++ {
		v := lo + float64(i)*step
		if v > hi+step*1e-6 {
			return g
		}
		g = append(g, round9(v))
	}
}

func round9(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 9, 64), 64)
	return f
}

// maxGrid bounds a grid's values (a line search runs every one).
const maxGrid = 64

// ParseVary reads -vary's NAME=GRID: NAME a spec path
// (latency_ns.smt_yield) or tied paths joined with "+"
// (costs_cycles.pipe_write+costs_cycles.pipe_read, the first taking the
// values); GRID lo:hi:step or a list v1,v2,... (a log-step list, say).
// Every path must be a number that each of the family's presets gives,
// and the grid's ends must build on them.
func ParseVary(s string, fam *Family) (Const, error) {
	name, grid, ok := strings.Cut(s, "=")
	if !ok || name == "" || grid == "" {
		return Const{}, fmt.Errorf("%q: want NAME=lo:hi:step or NAME=v1,v2,... (NAME a spec path such as latency_ns.smt_yield, or paths joined with +)", s)
	}
	c := Const{Paths: strings.Split(name, "+"), Why: "-vary"}
	for i, p := range c.Paths {
		if slices.Contains(c.Paths[:i], p) {
			return Const{}, fmt.Errorf("%q: %s is named twice", s, p)
		}
		if !slices.Contains(hwmodel.SourcedPaths(), p) {
			return Const{}, fmt.Errorf("%q: unknown constant %q (allowed: %s)", s, p, strings.Join(hwmodel.SourcedPaths(), ", "))
		}
	}
	g, err := parseGrid(grid)
	if err != nil {
		return Const{}, fmt.Errorf("%q: %v", s, err)
	}
	c.Grid = g
	for _, topo := range fam.Presets {
		start, err := startValues(topo, c)
		if err != nil {
			return Const{}, fmt.Errorf("%q: %v", s, err)
		}
		for _, v := range []float64{g[0], g[len(g)-1]} {
			vals := tiedValues(c, start, v)
			sv := &SpecValues{Topos: []string{topo}, Paths: c.Paths, Values: vals}
			if _, err := hwmodel.Load(topo, hwmodel.LoadOptions{Edit: sv.edit(topo)}); err != nil {
				return Const{}, fmt.Errorf("%q: %g does not build %s: %v", s, v, topo, err)
			}
		}
	}
	return c, nil
}

// parseGrid reads lo:hi:step or v1,v2,...: positive numbers, increasing.
func parseGrid(s string) ([]float64, error) {
	num := func(x string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%q is not a positive number", x)
		}
		return v, nil
	}
	var g []float64
	if parts := strings.Split(s, ":"); len(parts) > 1 {
		if len(parts) != 3 {
			return nil, fmt.Errorf("a range is lo:hi:step, got %q", s)
		}
		var v [3]float64
		for i, p := range parts {
			var err error
			if v[i], err = num(p); err != nil {
				return nil, err
			}
		}
		lo, hi, step := v[0], v[1], v[2]
		if lo > hi {
			return nil, fmt.Errorf("lo %g > hi %g", lo, hi)
		}
		if (hi-lo)/step+1 > maxGrid {
			return nil, fmt.Errorf("%g:%g:%g has more than %d values", lo, hi, step, maxGrid)
		}
		g = fitGrid(lo, hi, step)
	} else {
		for _, p := range strings.Split(s, ",") {
			v, err := num(p)
			if err != nil {
				return nil, err
			}
			if len(g) > 0 && v <= g[len(g)-1] {
				return nil, fmt.Errorf("a list must increase: %g after %g", v, g[len(g)-1])
			}
			g = append(g, v)
		}
		if len(g) > maxGrid {
			return nil, fmt.Errorf("more than %d values", maxGrid)
		}
	}
	return g, nil
}

// startValues are the constant's paths' values in topo's spec.
func startValues(topo string, c Const) ([]float64, error) {
	data, err := hwmodel.PresetSpec(topo)
	if err != nil {
		return nil, err
	}
	spec, err := hwmodel.DecodeSpec(strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	var out []float64
	for _, p := range c.Paths {
		src, err := spec.Sourced(p)
		if err != nil {
			return nil, err
		}
		if src == nil {
			return nil, fmt.Errorf("%s does not give %s", topo, p)
		}
		out = append(out, src.Value)
	}
	return out, nil
}

// tiedValues are the paths' values when the first takes v: the others
// keep their ratio to it in start.
func tiedValues(c Const, start []float64, v float64) []float64 {
	out := []float64{v}
	for _, s := range start[1:] {
		out = append(out, round9(s*v/start[0]))
	}
	return out
}
