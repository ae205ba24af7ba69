package weave

import (
	"testing"

	"github.com/rqemu/rqemu/hwmodel"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func mustLoad(t testing.TB, name string) *hwmodel.Machine {
	t.Helper()
	m, err := hwmodel.Load(name, hwmodel.LoadOptions{})
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return m
}
