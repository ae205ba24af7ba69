package emu

import (
	"testing"

	"github.com/rqemu/rqemu/emu/eevdf"
)

// tg->load_avg on hand-set cfs_rqs: fair.c (v6.7) update_tg_load_avg()
//
//	now = sched_clock_cpu(cpu_of(rq_of(cfs_rq)));
//	if (now - cfs_rq->last_update_tg_load_avg < NSEC_PER_MSEC)
//		return;
//	delta = cfs_rq->avg.load_avg - cfs_rq->tg_load_avg_contrib;
//	if (abs(delta) > cfs_rq->tg_load_avg_contrib / 64) { ...write... }
//
// and calc_group_shares() (v6.6), which reads tg->load_avg.

// tgCase is one CPU's cfs_rq of a group, hand-set.
func tgCase(t *testing.T, prof string) (*Sim, *RQ, *CfsRq) {
	t.Helper()
	s := newSim(t, "hikey-8", prof)
	g, err := s.NewGroup("docker", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	rq := s.cpus[0]
	return s, rq, g.cfsRq[0]
}

// TestTgLoadThreshold: a change of exactly contrib/64 is not written, one
// more is (either sign).
func TestTgLoadThreshold(t *testing.T) {
	for _, tc := range []struct {
		contrib, load uint64
		write         bool
	}{
		{6400, 6500, false}, // |delta| 100 = 6400/64
		{6400, 6501, true},
		{6400, 6300, false},
		{6400, 6299, true},
		{6463, 6563, false}, // 6463/64 = 100 (integer division)
		{6463, 6564, true},
		{0, 1, true}, // a first contribution is always written
		{0, 0, false},
	} {
		_, rq, cfs := tgCase(t, "v6.6-eevdf")
		tg := cfs.tg
		cfs.tgLoadAvgContrib, cfs.avg.LoadAvg = tc.contrib, tc.load
		writes := rq.Stats.TgLoadAvgWrites
		rq.updateTgLoadAvg(cfs)
		wrote := rq.Stats.TgLoadAvgWrites > writes
		if wrote != tc.write {
			t.Errorf("contrib %d, load_avg %d: wrote %v, want %v", tc.contrib, tc.load, wrote, tc.write)
		}
		want := int64(0)
		if tc.write {
			want = int64(tc.load) - int64(tc.contrib)
		}
		if rq.tgDelta[tg.id] != want || (tc.write && cfs.tgLoadAvgContrib != tc.load) {
			t.Errorf("contrib %d, load_avg %d: added %d (contrib now %d), want %d", tc.contrib, tc.load, rq.tgDelta[tg.id], cfs.tgLoadAvgContrib, want)
		}
	}
}

// TestTgLoadRatelimitInterval: with TG_LOAD_RATELIMIT a write 1 ms - 1 ns
// after the last is skipped; at exactly 1 ms it goes through. Without it
// (v6.6) neither is skipped.
func TestTgLoadRatelimitInterval(t *testing.T) {
	for _, tc := range []struct {
		prof  string
		since int64
		write bool
	}{
		{"v6.7-eevdf", nsecPerMsec - 1, false},
		{"v6.7-eevdf", nsecPerMsec, true},
		{"v6.7-eevdf", 0, false},
		{"v6.6-eevdf", 0, true},
		{"v6.6-eevdf", nsecPerMsec - 1, true},
	} {
		_, rq, cfs := tgCase(t, tc.prof)
		rq.clock = 50 * ms
		now := rq.clock + bootNS // sched_clock_cpu()
		cfs.lastUpdateTgLoadAvg = now - tc.since
		cfs.tgLoadAvgContrib, cfs.avg.LoadAvg = 1000, 2000
		rq.updateTgLoadAvg(cfs)
		wrote := rq.Stats.TgLoadAvgWrites == 1
		if wrote != tc.write {
			t.Errorf("%s, %d ns after the last write: wrote %v, want %v", tc.prof, tc.since, wrote, tc.write)
		}
		if wrote && cfs.lastUpdateTgLoadAvg != now {
			t.Errorf("%s: last_update_tg_load_avg %d after the write, want now %d", tc.prof, cfs.lastUpdateTgLoadAvg, now)
		}
	}
}

// TestCalcGroupSharesOwnWrites: calc_group_shares() reads tg->load_avg
// after this CPU's own atomic_long_add() in the same epoch (a CPU sees its
// own store at once), not the value published at the last barrier.
func TestCalcGroupSharesOwnWrites(t *testing.T) {
	_, rq, cfs := tgCase(t, "v6.6-eevdf")
	tg := cfs.tg
	tg.published = 10000
	cfs.tgLoadAvgContrib, cfs.avg.LoadAvg = 1000, 2000
	rq.updateTgLoadAvg(cfs) // tg->load_avg += 1000: 11000
	if got := rq.tgLoadAvgRead(tg); got != 11000 {
		t.Fatalf("tg->load_avg read back %d after this CPU added 1000 to 10000", got)
	}
	// tg_shares 1024 (scaled: 1024 << 10); load = max(weight 0, 2000);
	// tg_weight = 11000 - contrib 2000 + load 2000 = 11000; shares =
	// 1048576 * 2000 / 11000 = 190650. (Reading the published 10000
	// instead would give 1048576 * 2000 / 10000 = 209715.)
	if tg.shares != eevdf.ScaleLoad(1024) {
		t.Fatalf("tg->shares %d, want scale_load(1024)", tg.shares)
	}
	if got := rq.calcGroupShares(cfs); got != 190650 {
		t.Errorf("calc_group_shares() = %d, want 190650", got)
	}
	// Clamped to [MIN_SHARES, tg_shares]: alone in the group it takes it
	// all; a negligible share is MIN_SHARES (2).
	tg.published, rq.tgDelta[tg.id] = 0, 0
	cfs.tgLoadAvgContrib = 0
	if got := rq.calcGroupShares(cfs); got != tg.shares {
		t.Errorf("alone in the group: shares %d, want tg_shares %d", got, tg.shares)
	}
	cfs.avg.LoadAvg = 0
	tg.published = 1 << 40
	if got := rq.calcGroupShares(cfs); got != 2 {
		t.Errorf("negligible load: shares %d, want MIN_SHARES 2", got)
	}
}
