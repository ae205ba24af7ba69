package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives a test: the signal listener
// of run and compare, the parallel driver's workers and the profilers stop
// when a command returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
