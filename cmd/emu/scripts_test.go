package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzScripts: scripts/fuzz fuzzes every Fuzz function of the
// repository with -fuzzminimizetime set (Go's default 60 s of minimizing
// ate FuzzSpec's whole budget), and scripts/test runs it (issue 40).
func TestFuzzScripts(t *testing.T) {
	root := filepath.Join("..", "..")
	fuzz, err := os.ReadFile(filepath.Join(root, "scripts", "fuzz"))
	if err != nil {
		t.Fatal(err)
	}
	test, err := os.ReadFile(filepath.Join(root, "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(test), "scripts/fuzz 10s") {
		t.Error("scripts/test does not run scripts/fuzz 10s")
	}
	if !regexp.MustCompile(`go test [^\n]*-fuzz [^\n]*-fuzzminimizetime`).Match(fuzz) {
		t.Error("scripts/fuzz runs go test -fuzz without -fuzzminimizetime")
	}
	m := regexp.MustCompile(`targets="([^"]*)"`).FindSubmatch(fuzz)
	if m == nil {
		t.Fatal("scripts/fuzz has no targets= list")
	}
	listed := strings.Fields(string(m[1]))
	var found []string
	re := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, f := range re.FindAllSubmatch(b, -1) {
			found = append(found, string(f[1])+":./"+filepath.ToSlash(rel)+"/")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	slices.Sort(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("scripts/fuzz lists %v, the repository has %v", listed, found)
	}
}
