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
	testFiles(t, root, func(pkg string, src []byte) {
		for _, f := range re.FindAllSubmatch(src, -1) {
			found = append(found, string(f[1])+":"+pkg)
		}
	})
	slices.Sort(found)
	slices.Sort(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("scripts/fuzz lists %v, the repository has %v", listed, found)
	}
}

// TestNoRacePass: every test that skips under the race detector
// (skipUnderRace as its first statement) runs in scripts/test's no-race
// pass, with its package among that pass's packages; else it would run
// nowhere.
func TestNoRacePass(t *testing.T) {
	root := filepath.Join("..", "..")
	test, err := os.ReadFile(filepath.Join(root, "scripts", "test"))
	if err != nil {
		t.Fatal(err)
	}
	pass := regexp.MustCompile(`(?m)^go test -count=1 [^\n]*-run '\^\(([\w|]+)\)\$' ([^\n]*)$`).FindSubmatch(test)
	if pass == nil {
		t.Fatal("scripts/test has no no-race pass (go test -count=1 ... -run '^(A|B)$' PACKAGES)")
	}
	names := strings.Split(string(pass[1]), "|")
	pkgs := strings.Fields(string(pass[2]))
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\) \{\n\tskipUnderRace\(t\)`)
	n := 0
	testFiles(t, root, func(pkg string, src []byte) {
		for _, f := range re.FindAllSubmatch(src, -1) {
			n++
			if name := string(f[1]); !slices.Contains(names, name) || !slices.Contains(pkgs, pkg) {
				t.Errorf("%s (%s) skips under -race but scripts/test's no-race pass (%s on %s) does not run it", name, pkg, pass[1], pass[2])
			}
		}
	})
	if n == 0 {
		t.Error("no test calls skipUnderRace: the pattern no longer matches")
	}
}

// testFiles calls fn with each _test.go file's contents under root (the
// repository), and its package as go test names it ("./emu/"), skipping
// hidden directories.
func testFiles(t *testing.T, root string, fn func(pkg string, src []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
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
		fn("./"+filepath.ToSlash(rel)+"/", b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
