package contention

import (
	"bytes"
	"github.com/rqemu/rqemu/weave"
	"strings"
	"testing"
)

// TestSampling: with sampling 1 in 4, a quarter of the operations are timed
// and reported per line and per kind, next to the modeled ns.
func TestSampling(t *testing.T) {
	m := machine(t, "spr-2s")
	s := weave.NewSpace(m)
	s.SetSampling(4)
	c := NewCounter(s, "tg.load_avg", 0)
	lk := NewSpinLock(s, "rq0.lock", 0)
	u := NewUclampRQ(s, "rq0.uclamp", 0)
	l := s.NewLog(0)
	for k := range int64(400) {
		c.Add(l, 10*k, weave.NoSite, 1)
	}
	for k := range int64(40) {
		now := 10_000 + 100*k
		lk.Lock(l, now, weave.NoSite)
		u.IncTask(l, now+1, weave.NoSite, 0, 1024)
		u.DecTask(l, now+2, weave.NoSite, 0, 1024)
		lk.Unlock(l, now+3, weave.NoSite)
	}
	s.Weave([]*weave.Log{l})
	st := s.Stats()
	h := st.Lines[c.Line()].Host
	if h.Calls != 100 || h.Accesses != 100 || h.NS <= 0 {
		t.Errorf("counter samples %+v, want 100 calls", h)
	}
	if k := st.Kinds[weave.KindCounter].Host; k.Calls != 100 {
		t.Errorf("kind samples %+v", k)
	}
	if h := st.Kinds[weave.KindUclamp].Host; h.Calls != 20 || h.Accesses != 40 {
		t.Errorf("uclamp samples %+v, want 20 calls of 2 accesses", h)
	}
	if st.Lines[c.Line()].Host.PerAccess() < 0 || (weave.HostNS{}).PerAccess() != 0 {
		t.Error("PerAccess")
	}
	var b bytes.Buffer
	if err := s.WriteStats(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "host/acc") || st.Kinds[weave.KindCounter].Host.Calls == 0 {
		t.Errorf("stats:\n%s", b.String())
	}
	t.Logf("\n%s", b.String())
	// Off: nothing sampled.
	s.SetSampling(0)
	l2 := s.NewLog(1)
	c.Add(l2, 0, weave.NoSite, 1)
	s.Weave([]*weave.Log{l, l2})
	if got := s.Stats().Lines[c.Line()].Host.Calls; got != 100 {
		t.Errorf("sampling off: %d calls", got)
	}
}
