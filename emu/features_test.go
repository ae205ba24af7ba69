package emu

import (
	"strings"
	"testing"
)

func TestParseFeatures(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		on, off []Feature
		err     string
	}{
		{"", []Feature{EEVDF, RUN_TO_PARITY, PLACE_LAG}, []Feature{TG_LOAD_RATELIMIT}, ""},
		{"v6.7-eevdf", []Feature{EEVDF, TG_LOAD_RATELIMIT}, nil, ""},
		{"v6.6-eevdf,+TG_LOAD_RATELIMIT,-RUN_TO_PARITY", []Feature{TG_LOAD_RATELIMIT}, []Feature{RUN_TO_PARITY}, ""},
		{"v6.6-eevdf,NO_TTWU_QUEUE", nil, []Feature{TTWU_QUEUE}, ""},
		{"v5.15-cfs", []Feature{GENTLE_FAIR_SLEEPERS, START_DEBIT}, []Feature{EEVDF, SIS_UTIL, PLACE_MIGRATE}, ""},
		{"v5.15-cfs, +PLACE_MIGRATE", []Feature{PLACE_MIGRATE}, nil, ""},
		{"v6.9", nil, nil, `unknown profile "v6.9" (allowed: v5.15-cfs, v5.19-cfs, v6.5-cfs, v6.6-eevdf, v6.7-eevdf, v6.11-eevdf, v6.12-eevdf)`},
		{"v6.6-eevdf,+RUN_TO_PARTY", nil, nil, `unknown feature "RUN_TO_PARTY" (allowed: EEVDF, RUN_TO_PARITY`},
	} {
		s, _, err := ParseFeatures(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		for _, f := range tc.on {
			if !s.Has(f) {
				t.Errorf("%q: %v off", tc.spec, f)
			}
		}
		for _, f := range tc.off {
			if s.Has(f) {
				t.Errorf("%q: %v on", tc.spec, f)
			}
		}
	}
	if !strings.Contains(Features(0).With(UCLAMP).String(), " UCLAMP") {
		t.Error("String does not list UCLAMP as on")
	}
}
