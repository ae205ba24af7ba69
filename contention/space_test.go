package contention

import (
	"strings"
	"testing"
)

func TestSpace(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := NewSpace(m)
	if s.Machine() != m || s.NumSites() != 1 || s.SiteName(NoSite) != "-" {
		t.Fatalf("new space: %d sites, NoSite %q", s.NumSites(), s.SiteName(NoSite))
	}
	a := s.Site("update_load_avg")
	if s.Site("update_load_avg") != a || s.Site("ttwu") == a || s.SiteName(a) != "update_load_avg" || s.SiteName(99) != "site(99)" {
		t.Error("site interning")
	}
	id := s.NewLine("rq0.line1", 1)
	if s.LineName(id) != "rq0.line1" || s.LineHome(id) != 1 || s.LineKind(id) != KindLine || s.NumLines() != 1 || s.Line(id).Owner() != -1 {
		t.Error("line registry")
	}
	w := NewWakeList(s, "cpu3", 0)
	if s.LineName(w.ListLine()) != "cpu3.call_single_queue" || s.LineKind(w.PendingLine()) != KindWakeList {
		t.Error("wake list lines")
	}
	if KindUclamp.String() != "uclamp" || Kind(99).String() != "kind(99)" {
		t.Error("kind names")
	}
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "CPU 384") {
			t.Errorf("panic %q", msg)
		}
	}()
	s.NewLog(384)
}
