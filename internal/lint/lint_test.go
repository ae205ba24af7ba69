// Package lint holds lint rules written as tests (pebble's style): they
// read the module's source and fail on what a review would reject.
package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ownershipTag is the vocabulary of ownership comments (emu/doc.go,
// "Ownership"): who may write a field, and when.
var ownershipTag = regexp.MustCompile(`\b([Ff]ixed|[Oo]wned\s+by|guarded\s+by|[Aa]tomic|[Bb]arrier\s+only|barrier:|[Ww]ritten\s+only\s+(at\s+the\s+barrier|by)|[Ss]et\s+before\s+Run)`)

// ownedTypes are the structs whose every field needs an ownership comment:
// its own, or the one heading its block of fields (no blank line
// between). A part (an embedded struct of one of them) may instead say it
// once in its type's comment, for all its fields.
var ownedTypes = map[string]bool{"RQ": false, "Task": false, "Sim": false, "Domain": false,
	"rqKernel": true, "rqMailbox": true, "rqAccount": true,
	"simLayout": true, "simSymbols": true, "rootDomain": true, "published": true,
	"barrierScratch": true, "RunStats": true, "simHooks": true}

// untagged returns "Type.field" for each field of the owned types in
// package dir that has no ownership comment.
func untagged(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	var bad []string
	seen := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				part, ok := ownedTypes[ts.Name.Name]
				st, isStruct := ts.Type.(*ast.StructType)
				if !ok || !isStruct {
					continue
				}
				seen[ts.Name.Name] = true
				doc := ts.Doc
				if doc == nil && len(g.Specs) == 1 {
					doc = g.Doc
				}
				if part && ownershipTag.MatchString(doc.Text()) {
					continue
				}
				bad = append(bad, untaggedFields(fset, ts.Name.Name, st)...)
			}
		}
	}
	for name := range ownedTypes {
		if !seen[name] && dir == "../../emu" {
			t.Errorf("type %s not found in %s: update ownedTypes", name, dir)
		}
	}
	slices.Sort(bad)
	return bad
}

// untaggedFields checks the fields of one struct: a field's own comment,
// or else the last comment above it in its block of fields.
func untaggedFields(fset *token.FileSet, typ string, st *ast.StructType) []string {
	var bad []string
	block := "" // the comments of the block so far
	lastLine := -1
	for _, fld := range st.Fields.List {
		start := fset.Position(fld.Pos()).Line
		if fld.Doc != nil {
			start = fset.Position(fld.Doc.Pos()).Line
		}
		if start > lastLine+1 {
			block = "" // a blank line starts a new block
		}
		if fld.Doc != nil {
			block = fld.Doc.Text() // a field's own comment heads what follows
		}
		lastLine = fset.Position(fld.End()).Line
		text := block + fld.Comment.Text()
		if len(fld.Names) == 0 {
			if id, ok := fld.Type.(*ast.Ident); ok {
				if _, owned := ownedTypes[id.Name]; owned {
					continue // checked as its own type
				}
			}
		}
		if fld.Names != nil && fld.Names[0].Name == "_" {
			continue // padding
		}
		if !ownershipTag.MatchString(text) {
			name := "(embedded)"
			if len(fld.Names) > 0 {
				name = fld.Names[0].Name
			}
			bad = append(bad, typ+"."+name)
		}
	}
	return bad
}

// TestOwnershipComments fails when a field of RQ, Task, Sim or Domain (or
// of their parts) does not say who owns it.
func TestOwnershipComments(t *testing.T) {
	for _, f := range untagged(t, "../../emu") {
		t.Errorf("%s has no ownership comment (one of %s)", f, ownershipTag)
	}
}

// TestOwnershipCommentsCatch is the rule's own check, on a package made
// for it.
func TestOwnershipCommentsCatch(t *testing.T) {
	dir := t.TempDir()
	src := `package emu

// Domain is a test.
type Domain struct {
	a int // fixed
	b int

	// c and d are guarded by rq.lock.
	c int
	d int
	// i has its own comment, without a tag.
	i int
	j int

	e int
}

// rqKernel is a part. Owned by its CPU.
type rqKernel struct {
	f int
}

// rqMailbox is a part without a tag.
type rqMailbox struct {
	g int // barrier only
	h int
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := untagged(t, dir)
	want := []string{"Domain.b", "Domain.e", "Domain.i", "Domain.j", "rqMailbox.h"}
	if !slices.Equal(got, want) {
		t.Errorf("untagged = %v, want %v", got, want)
	}
}

// rawAtomics lists the Go files under root, outside root/contention, that
// import sync/atomic.
func rawAtomics(t *testing.T, root string) []string {
	t.Helper()
	var bad []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == filepath.Join(root, "contention") || strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"sync/atomic"` {
				rel, _ := filepath.Rel(root, path)
				bad = append(bad, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// TestNoRawAtomics fails on a sync/atomic import outside contention/: the
// shared kernel state is contention's padded, logged objects, and host
// synchronization is there too (contention.Rounds).
func TestNoRawAtomics(t *testing.T) {
	for _, f := range rawAtomics(t, "../..") {
		t.Errorf("%s imports sync/atomic: use contention/ (its objects, Rounds) or a mutex", f)
	}
}

// TestNoRawAtomicsCatch is the rule's own check.
func TestNoRawAtomicsCatch(t *testing.T) {
	root := t.TempDir()
	for path, src := range map[string]string{
		"emu/x.go":        "package emu\n\nimport \"sync/atomic\"\n\nvar _ atomic.Int32\n",
		"emu/y_test.go":   "package emu\n\nimport a \"sync/atomic\"\n\nvar _ a.Bool\n",
		"contention/z.go": "package contention\n\nimport \"sync/atomic\"\n\nvar _ atomic.Int32\n",
		"cmd/ok.go":       "package main\n\nimport \"sync\"\n\nvar _ sync.Mutex\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := rawAtomics(t, root)
	want := []string{"emu/x.go", "emu/y_test.go"}
	if !slices.Equal(got, want) {
		t.Errorf("rawAtomics = %v, want %v", got, want)
	}
}
