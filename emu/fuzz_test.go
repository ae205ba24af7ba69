package emu

import (
	"errors"
	"testing"
)

// FuzzFeatures: any -features value parses without a panic, fails with a
// *FeatureError, or gives a set whose canonical spelling parses back to it.
func FuzzFeatures(f *testing.F) {
	for _, p := range Profiles {
		f.Add(p.Name)
	}
	for _, s := range []string{"", "v6.6-eevdf,+TG_LOAD_RATELIMIT,-RUN_TO_PARITY", "v5.15-cfs,NO_START_DEBIT", " v6.7-eevdf , +UCLAMP ", "v6.6-eevdf,", ",,", "v6.6-eevdf,+", "v6.6-eevdf,-NO_X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		set, canon, err := ParseFeatures(spec)
		if err != nil {
			var fe *FeatureError
			if !errors.As(err, &fe) || fe.Msg == "" {
				t.Fatalf("%q: error %v is not a *FeatureError", spec, err)
			}
			return
		}
		_ = set.String()
		again, _, err := ParseFeatures(canon)
		if err != nil || again != set {
			t.Fatalf("%q: canonical %q parses to %v (%v), want %v", spec, canon, again, err, set)
		}
	})
}
