package contention

import (
	"github.com/rqemu/rqemu/weave"
	"strings"
	"testing"
)

func TestSpace(t *testing.T) {
	m := machine(t, "epyc-9654-2s")
	s := weave.NewSpace(m)
	if s.Machine() != m || s.NumSites() != 1 || s.SiteName(weave.NoSite) != "-" {
		t.Fatalf("new space: %d sites, NoSite %q", s.NumSites(), s.SiteName(weave.NoSite))
	}
	a := s.Site("update_load_avg")
	if s.Site("update_load_avg") != a || s.Site("ttwu") == a || s.SiteName(a) != "update_load_avg" || s.SiteName(99) != "site(99)" {
		t.Error("site interning")
	}
	id := s.NewLine("rq0.line1", 1)
	if s.LineName(id) != "rq0.line1" || s.LineHome(id) != 1 || s.LineKind(id) != weave.KindLine || s.NumLines() != 1 || s.Line(id).Owner() != -1 {
		t.Error("line registry")
	}
	w := NewWakeList(s, "cpu3", 0)
	if s.LineName(w.ListLine()) != "cpu3.call_single_queue" || s.LineKind(w.PendingLine()) != weave.KindWakeList {
		t.Error("wake list lines")
	}
	if weave.KindUclamp.String() != "uclamp" || weave.Kind(99).String() != "kind(99)" {
		t.Error("kind names")
	}
	defer func() {
		if msg, _ := recover().(string); !strings.Contains(msg, "CPU 384") {
			t.Errorf("panic %q", msg)
		}
	}()
	s.NewLog(384)
}
