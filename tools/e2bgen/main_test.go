package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeIsFresh regenerates the E2B clients into a temporary
// tree and compares it with the committed one, file by file both ways: a
// changed specification, config or generator version fails here until
// `go tool task gen:e2b` is run and its output committed.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating runs the code generators (skipped with -short)")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join(root, genDir)
	fresh := t.TempDir()
	if err := run(fresh); err != nil {
		t.Fatalf("generating: %v", err)
	}
	want := generated(t, fresh)
	got := generated(t, committed)
	for name, body := range want {
		old, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s is not committed: run go tool task gen:e2b", name)
		case !bytes.Equal(old, body):
			t.Errorf("%s is stale: run go tool task gen:e2b", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is committed but no longer generated: delete it", name)
		}
	}
	if len(want) < 6 {
		t.Errorf("the generator wrote %d files, want the two REST clients and the two services with their Connect packages", len(want))
	}
}

// generated reads every generated Go file of a tree.
func generated(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
