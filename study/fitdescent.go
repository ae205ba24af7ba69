package study

import (
	"fmt"
	"slices"
)

// descend minimizes an objective over the product of grids by coordinate
// descent: from start, for each coordinate in order, every value of its
// grid is tried with the others held (a line search, evaluated as one
// batch), and the coordinate moves to the best only when that is strictly
// better than where it is; a round is one pass over the coordinates, and
// the descent ends after a round without a move or after rounds rounds.
// start may lie off the grids (a spec's current value): it stays a
// candidate of its coordinate. eval gets the points not evaluated yet,
// in order, and returns their objectives; a point is never evaluated
// twice. On a separable objective one round reaches the minimum over the
// grids (TestDescendIsBruteForceOnSeparable).
func descend(grids [][]float64, start []float64, rounds int, eval func(pts [][]float64) ([]float64, error)) (best []float64, bestF float64, err error) {
	memo := map[string]float64{}
	key := func(p []float64) string { return fmt.Sprint(p) }
	evalAll := func(pts [][]float64) ([]float64, error) {
		var todo [][]float64
		seen := map[string]bool{}
		for _, p := range pts {
			k := key(p)
			if _, ok := memo[k]; !ok && !seen[k] {
				seen[k] = true
				todo = append(todo, p)
			}
		}
		if len(todo) > 0 {
			fs, err := eval(todo)
			if err != nil {
				return nil, err
			}
			for i, p := range todo {
				memo[key(p)] = fs[i]
			}
		}
		out := make([]float64, len(pts))
		for i, p := range pts {
			out[i] = memo[key(p)]
		}
		return out, nil
	}
	cur := slices.Clone(start)
	fs, err := evalAll([][]float64{cur})
	if err != nil {
		return nil, 0, err
	}
	curF := fs[0]
	for range rounds {
		moved := false
		for k, g := range grids {
			var pts [][]float64
			for _, v := range g {
				p := slices.Clone(cur)
				p[k] = v
				pts = append(pts, p)
			}
			fs, err := evalAll(pts)
			if err != nil {
				return nil, 0, err
			}
			for i, f := range fs {
				if f < curF {
					cur, curF, moved = pts[i], f, true
				}
			}
		}
		if !moved {
			break
		}
	}
	return cur, curF, nil
}
