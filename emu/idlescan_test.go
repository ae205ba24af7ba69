package emu

import "testing"

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
