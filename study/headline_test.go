//go:build !race

package study

import "testing"

// TestTgloadUDPRRHeadline guards tgload-udprr's headline at the study's
// quick scale (netperf -l 0.002 on spr-2s, 224 clients in one cgroup,
// about 5 s of host time a run; not under -race, where it would take
// minutes: scripts/test runs it in its own go test call). The bounds come
// from the publication (Aaron Lu, 1528c661c24b), not from a measurement:
//   - the ratelimit more than doubles throughput: both rows the study
//     reports as significant gained more than 2x (100%: 9703 -> 28011,
//     2.89x; 75%: 13779 -> 36105, 2.62x), while the 25% and 50% rows moved
//     within ±2.3% (noise);
//   - the base profile has update_cfs_group as a hot spot (published
//     ≈25% of cycles: at least half of that here), and its share falls
//     with the ratelimit, which is what the patch removes (the
//     tg->load_avg line's bouncing read in calc_group_shares()).
func TestTgloadUDPRRHeadline(t *testing.T) {
	st, err := Lookup("tgload-udprr")
	if err != nil {
		t.Fatal(err)
	}
	row := st.row("100%")
	if row == nil || len(st.Settings) != 2 {
		t.Fatal("tgload-udprr has no 100% row or not two settings")
	}
	l := row.Length.format(row.Length.Quick)
	var tps, share [2]float64
	for i, set := range st.Settings {
		o, err := Execute(st.runOf(row, set, l, 0, ""), 1, Engine{Driver: "parallel"})
		if err != nil {
			t.Fatal(err)
		}
		if !o.Complete || o.Failure != nil {
			t.Fatalf("%s: run incomplete (%v)", set.Label, o.Failure)
		}
		tps[i], _ = o.Value(tpsPerClient.Key)
		share[i], _ = o.Value(cfsGroup.Key)
		t.Logf("%s: %.0f tps/client, update_cfs_group %.1f%% (%.1f s host)", set.Label, tps[i], share[i], o.HostSec)
	}
	if tps[0] <= 0 || tps[1] < 2*tps[0] {
		t.Errorf("+TG_LOAD_RATELIMIT: %.0f -> %.0f tps/client (%.2fx); the study's significant rows gained more than 2x", tps[0], tps[1], tps[1]/tps[0])
	}
	if share[0] < 12.5 {
		t.Errorf("base: update_cfs_group %.1f%% of cycles; the study's profile has ≈25%% (want at least half)", share[0])
	}
	if share[1] >= share[0] {
		t.Errorf("update_cfs_group's share did not fall with the ratelimit: %.1f%% -> %.1f%%", share[0], share[1])
	}
}
