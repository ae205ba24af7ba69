package bench

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	lkpStressNGStop     = regexp.MustCompile(`(this stressor is not implemented on this system)|(No stress workers invoked)`)
	lkpStressNGSigact   = regexp.MustCompile(`stress-ng: fail:.*sigaction signal`)
	lkpStressNGHeader   = regexp.MustCompile(`\(secs\)\s+\(secs\)\s+\(secs\)`)
	lkpStressNGMisc     = regexp.MustCompile(`stress-ng: (info|metrc):.*\((average|geometr?ic mean|harmonic mean|total)`)
	lkpStressNGMiscTail = regexp.MustCompile(` \((average|geometr?ic mean|harmonic mean|total).*\)$`)
	lkpStatsNormSep     = regexp.MustCompile(`[\s,"_\[\]():]+`)
	lkpStatsNormEnds    = regexp.MustCompile(`(^_+|_+$)`)
	lkpStatsNormUnders  = regexp.MustCompile(`_{2,}`)
	lkpStatsNormDots    = regexp.MustCompile(`\.{4,}`)
)

// lkpStressNG is lkp-tests' programs/stress-ng/parse. After the metrics
// table's "(secs) (secs) (secs)" header, a line of 10 or 12 fields
// (--metrics-brief's, or --metrics') gives a stressor's bogo ops (field
// 4) and bogo ops/s over real time (field 8): STRESSOR.pass, .ops and
// .ops_per_sec, or STRESSOR.fail for 0 ops; a line of a stressor's own
// metric "(average ...)", "(geometric mean ...)", "(harmonic mean ...)"
// or "(total ...)" gives STRESSOR.UNIT (the unit's words normalized as
// LKP::Stats.normalize() does) and .pass, or .fail for 0. The --times
// block ("run time:") ends the table; fail: and warn: lines are skipped,
// a sigaction failure gives sigaction.fail, and "not implemented" or "No
// stress workers invoked" end the parse.
func lkpStressNG(out string) map[string]float64 {
	st := map[string]float64{}
	put := func(k, v string) {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			st[k] = f
		}
	}
	table := false
	for _, line := range rubyLines(out) {
		line = resolveInvalidBytes(line)
		switch {
		case lkpStressNGStop.MatchString(line):
			return st
		case strings.Contains(line, "all bogo-op counters are zero, data may be incorrect"):
			continue
		case lkpStressNGSigact.MatchString(line):
			st["sigaction.fail"] = 1
			return st
		case strings.Contains(line, "fail:"), strings.Contains(line, "warn:"):
			continue
		case lkpStressNGHeader.MatchString(line):
			table = true
		case strings.Contains(line, "run time:"):
			return st
		case !table:
		case lkpStressNGMisc.MatchString(line):
			// stat_miscellaneous_metrics()
			items := strings.Fields(lkpStressNGMiscTail.ReplaceAllString(strings.TrimSuffix(line, "\n"), ""))
			if len(items) < 5 {
				return nil // items[5..] is nil: the parser raises and exits 1
			}
			unit := lkpStatsNormalize(strings.Join(items[5:], "_"))
			name := items[3] + "." + unit
			if items[4] == "0" || items[4] == "0.00" {
				st[name+".fail"] = 1
			} else {
				st[name+".pass"] = 1
				put(name, items[4])
			}
		default:
			// stat_major_metrics()
			items := strings.Fields(line)
			if len(items) != 10 && len(items) != 12 {
				continue
			}
			name := items[3]
			if items[4] == "0" {
				st[name+".fail"] = 1
				continue
			}
			st[name+".pass"] = 1
			put(name+".ops", items[4])
			put(name+".ops_per_sec", items[8])
		}
	}
	return st
}

// lkpStatsNormalize is lkp-tests' LKP::Stats.normalize()
// (lib/tests/stats.rb): runs of blanks and ,"_[]():  become one "_",
// leading and trailing "_" go, and "...." runs become ".".
func lkpStatsNormalize(s string) string {
	s = strings.TrimSpace(s)
	s = lkpStatsNormSep.ReplaceAllString(s, "_")
	s = lkpStatsNormEnds.ReplaceAllString(s, "")
	s = lkpStatsNormUnders.ReplaceAllString(s, "_")
	return lkpStatsNormDots.ReplaceAllString(s, ".")
}
