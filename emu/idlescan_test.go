package emu

import (
	"slices"
	"testing"
)

// TestUpdateIdleCPUScanCurve is fair.c: update_idle_cpu_scan() for every
// average utilization 0..1024 against the float curve it approximates:
// nr = llc_weight * (1 - min(1, (x/1024)^2 * (pct/100)^2)), within the
// integer divisions' truncation (under one CPU either way).
func TestUpdateIdleCPUScanCurve(t *testing.T) {
	for _, topo := range []string{"spr-2s", "hikey-8"} {
		s := newSim(t, topo, "v6.6-eevdf")
		rq := s.cpus[0]
		sd := s.llc[0].sd
		w := uint64(sd.Weight())
		pct := float64(sd.ImbalancePct)
		if sd.ImbalancePct != 117 {
			t.Fatalf("%s: LLC imbalance_pct %d, sd_init() gives 117", topo, sd.ImbalancePct)
		}
		prevNR := int(w) + 1
		for x := uint64(0); x <= 1024; x++ {
			s.llcSnap[0].nrIdleScan = -1
			rq.outbox = rq.outbox[:0]
			e := &lbEnv{b: rq, sd: sd, dstCPU: 0, sumUtil: x * w, idle: cpuIdle}
			e.updateIdleCPUScan()
			if len(rq.outbox) != 1 || rq.outbox[0].kind != opSetNrIdleScan {
				t.Fatalf("%s x=%d: no nr_idle_scan write", topo, x)
			}
			got := int(rq.outbox[0].val)
			f := float64(x) / 1024
			want := float64(w) * (1 - min(1, f*f*pct*pct/10000))
			// The truncated x^2*pct^2 term errs up by under 1/1024 of
			// the LLC, the last division down by under one CPU.
			if float64(got) > want+float64(w)/1024 || float64(got) <= want-1 {
				t.Errorf("%s x=%d: nr_idle_scan %d, curve %.3f", topo, x, got, want)
			}
			if got > prevNR {
				t.Errorf("%s x=%d: nr_idle_scan rose %d -> %d", topo, x, prevNR, got)
			}
			prevNR = got
			if x == 0 && got != int(w) {
				t.Errorf("%s: idle LLC scans %d, want llc_weight %d", topo, got, w)
			}
			if float64(x) >= 1024*100/pct+1 && got != 0 {
				t.Errorf("%s x=%d (past 100/pct): nr_idle_scan %d, want 0", topo, x, got)
			}
		}
		rq.outbox = rq.outbox[:0]
	}
}

// TestIdleCoreScansCounted: on an SMT machine with cores going idle and
// coming back (sleepers on a few CPUs), __update_idle_core() sets
// has_idle_cores on idle entry (IdleCoresSets) and select_idle_cpu()'s
// scans that see it walk by cores (IdleCoreScans, fair.c v6.6), a subset
// of all its scans (SISScans).
func TestIdleCoreScansCounted(t *testing.T) {
	// hikey-8 has no SMT: spr-1s, every CPU busy with a hog but core 0
	// (CPUs 0 and 56), where two sleepers come and go: when both sleep the
	// core is idle (a set); one waking while the other runs finds its CPU
	// busy and scans the LLC by cores, finding none idle (a clear).
	s := newSim(t, "spr-1s", "v6.6-eevdf")
	sib := s.Machine().SMTSiblings(0)
	for cpu := range s.Machine().CPUs {
		if !slices.Contains(sib, cpu) {
			mustTask(t, s, TaskSpec{Comm: "hog", CPU: cpu, Prog: Hog()})
		}
	}
	for i := 0; i < 2; i++ {
		mustTask(t, s, TaskSpec{Comm: "sleeper", CPU: 0, Prog: Loop(Run(20_000), Sleep(30_000))})
	}
	s.Run(20 * ms)
	var scans, coreScans, sets int64
	for cpu := range s.Machine().CPUs {
		st := s.RQ(cpu).Stats
		scans += st.SISScans
		coreScans += st.IdleCoreScans
		sets += st.IdleCoresSets
	}
	t.Logf("%d scans, %d with has_idle_cores, %d sets", scans, coreScans, sets)
	if sets == 0 || coreScans == 0 || coreScans > scans {
		t.Errorf("%d scans, %d with has_idle_cores, %d sets: want sets, idle-core scans, and no more of them than scans", scans, coreScans, sets)
	}
}
