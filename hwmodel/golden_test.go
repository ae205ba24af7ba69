package hwmodel

import (
	"testing"

	gold "github.com/rqemu/rqemu/internal/golden"
)

// golden compares got with testdata/<name> (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { gold.Check(t, name, got) }
