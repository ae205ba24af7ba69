package bench

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	lkpSchbenchInstance = regexp.MustCompile(`^Instance: (\d+)`)
	lkpSchbenchPct      = []struct {
		re   *regexp.Regexp
		key  string
		word int // the value's word: "* 99.0th: N" has the star first
	}{
		{regexp.MustCompile(`50.0th`), "latency_50%_us", 1},
		{regexp.MustCompile(`90.0th`), "latency_90%_us", 1},
		{regexp.MustCompile(`99.0th`), "latency_99%_us", 2},
		{regexp.MustCompile(`99.9th`), "latency_99.9%_us", 1},
	}
	lkpSchbenchMinSep = regexp.MustCompile(`[,=]`)
)

// lkpOrdered is a Ruby Hash of arrays: keys in insertion order.
type lkpOrdered struct {
	keys []string
	vals map[string][]int64
	set  map[string][]bool // for the end latencies: which indexes were assigned
}

func newLKPOrdered() *lkpOrdered {
	return &lkpOrdered{vals: map[string][]int64{}, set: map[string][]bool{}}
}

func (o *lkpOrdered) add(k string, v int64) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = append(o.vals[k], v)
}

// assign is Ruby's a[i] = v, which pads with nil past the end and counts
// a negative index from the end; it reports false where Ruby raises
// IndexError (a negative index before the start).
func (o *lkpOrdered) assign(k string, i int, v int64) bool {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
		o.vals[k] = nil
	}
	a, s := o.vals[k], o.set[k]
	if i < 0 {
		i += len(a)
		if i < 0 {
			return false
		}
	}
	for len(a) <= i {
		a, s = append(a, 0), append(s, false)
	}
	a[i], s[i] = v, true
	o.vals[k], o.set[k] = a, s
	return true
}

// lkpSchbenchStats are lib/statistics.rb's average and relative_stddev
// of a key's values: sum / n, and sqrt(1/n * Σ(v - avg)²) * 100 / avg.
func lkpSchbenchStats(v []int64) (avg, rel float64) {
	var sum int64
	for _, x := range v {
		sum += x
	}
	avg = float64(sum) / float64(len(v))
	var ss float64
	for _, x := range v {
		d := float64(x) - avg
		ss += d * d
	}
	return avg, math.Sqrt(1/float64(len(v))*ss) * 100 / avg
}

// lkpSchbench is lkp-tests' programs/schbench/parse. Each percentile
// line (50.0th, 90.0th, 99.0th, 99.9th) and min=/max= line of the
// Wakeup and Request Latencies sections adds a value to its key; the
// keys print as their mean over every table read (wakeup_latency_99%_us)
// with its relative stddev (_stddev%), both rounded to 2 decimals. The
// percentiles also keep the last table of each "Iteration" (lkp's run
// prints one before each schbench): wakeup_end_latency_99%_us_max is the
// largest over iterations, with its stddev%. Several "Instance: N" add
// per-instance means (wakeup_latency_99%_us.instance2). nil where the
// parser fails (a percentile line before any Iteration: IndexError).
func lkpSchbench(out string) map[string]float64 {
	wakeup, request := newLKPOrdered(), newLKPOrdered()
	wakeupEnd, requestEnd := newLKPOrdered(), newLKPOrdered()
	type instStats struct{ wakeup, request *lkpOrdered }
	per := map[int64]*instStats{}
	instance, counter := int64(1), -1
	inWakeup, inRequest := false, false
	inst := func() *instStats {
		if per[instance] == nil {
			per[instance] = &instStats{newLKPOrdered(), newLKPOrdered()}
		}
		return per[instance]
	}
	for _, line := range rubyLines(out) {
		if m := lkpSchbenchInstance.FindStringSubmatch(line); m != nil {
			instance, _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		switch {
		case strings.HasPrefix(line, "Iteration"):
			counter++
			continue
		case strings.HasPrefix(line, "Wakeup Latencies percentiles"):
			inWakeup, inRequest = true, false
			continue
		case strings.HasPrefix(line, "Request Latencies percentiles"):
			inWakeup, inRequest = false, true
			continue
		case strings.HasPrefix(line, "RPS percentiles"):
			inWakeup, inRequest = false, false
			continue
		}
		pct := false
		for _, p := range lkpSchbenchPct {
			if !p.re.MatchString(line) {
				continue
			}
			pct = true
			v := rubyToI(field(strings.Fields(line), p.word))
			switch {
			case inWakeup:
				wakeup.add(p.key, v)
				if !wakeupEnd.assign(p.key, counter, v) {
					return nil
				}
				inst().wakeup.add(p.key, v)
			case inRequest:
				request.add(p.key, v)
				if !requestEnd.assign(p.key, counter, v) {
					return nil
				}
				inst().request.add(p.key, v)
			}
			break
		}
		if pct || !strings.Contains(line, "min") {
			continue
		}
		// handle_min(): "min=1, max=119" -> latency_min_us, latency_max_us.
		parts := strings.Fields(lkpSchbenchMinSep.ReplaceAllString(line, " "))
		k1, v1 := "latency_"+field(parts, 0)+"_us", rubyToI(field(parts, 1))
		k2, v2 := "latency_"+field(parts, 2)+"_us", rubyToI(field(parts, 3))
		switch {
		case inWakeup:
			wakeup.add(k1, v1)
			wakeup.add(k2, v2)
			inst().wakeup.add(k1, v1)
			inst().wakeup.add(k2, v2)
		case inRequest:
			request.add(k1, v1)
			request.add(k2, v2)
			inst().request.add(k1, v1)
			inst().request.add(k2, v2)
		}
	}
	st := map[string]float64{}
	for _, sec := range []struct {
		name     string
		all, end *lkpOrdered
	}{{"wakeup", wakeup, wakeupEnd}, {"request", request, requestEnd}} {
		for _, k := range sec.all.keys {
			avg, rel := lkpSchbenchStats(sec.all.vals[k])
			st[sec.name+"_"+k] = rubyRound2(avg)
			st[sec.name+"_"+k+"_stddev%"] = rubyRound2(rel)
		}
		for _, k := range sec.end.keys {
			v := sec.end.vals[k]
			for _, ok := range sec.end.set[k] {
				if !ok {
					return nil // nil in the array: max and sum raise
				}
			}
			mx := v[0]
			for _, x := range v {
				mx = max(mx, x)
			}
			_, rel := lkpSchbenchStats(v)
			st[sec.name+"_end_"+k+"_max"] = float64(mx)
			st[sec.name+"_end_"+k+"_stddev%"] = rubyRound2(rel)
		}
	}
	if len(per) > 1 {
		for _, id := range slices.Sorted(maps.Keys(per)) {
			sfx := ".instance" + strconv.FormatInt(id, 10)
			for _, sec := range []struct {
				name string
				o    *lkpOrdered
			}{{"wakeup", per[id].wakeup}, {"request", per[id].request}} {
				for _, k := range sec.o.keys {
					avg, _ := lkpSchbenchStats(sec.o.vals[k])
					st[sec.name+"_"+k+sfx] = rubyRound2(avg)
				}
			}
		}
	}
	return st
}
