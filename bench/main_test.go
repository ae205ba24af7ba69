package bench

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives a test: the parallel
// driver's workers exit when a run returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
