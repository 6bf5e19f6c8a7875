package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// rendered is the surface rendered once for the tests (loading the
// module's packages is the slow part).
var rendered = sync.OnceValues(func() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return surface(root)
})

// TestSnapshotIsFresh renders the public surface and compares it with the
// committed api/workbench.txt: a change of what an embedder can name or
// call fails here until `go tool task api` is run and the snapshot's diff
// is committed (and reviewed as an API change).
func TestSnapshotIsFresh(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := rendered()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(root, snapshotFile))
	if err != nil {
		t.Fatalf("%v: run go tool task api", err)
	}
	if string(committed) == fresh {
		return
	}
	old, now := lineSet(string(committed)), lineSet(fresh)
	for _, l := range sortedKeys(old) {
		if !now[l] {
			t.Errorf("gone from the public surface: %s", l)
		}
	}
	for _, l := range sortedKeys(now) {
		if !old[l] {
			t.Errorf("new in the public surface: %s", l)
		}
	}
	t.Errorf("%s is stale: run go tool task api and commit the diff (a public API change)", snapshotFile)
}

// TestSnapshotSeesAChange: a declaration the snapshot lacks is reported,
// so the check cannot pass by comparing nothing.
func TestSnapshotSeesAChange(t *testing.T) {
	text, err := rendered()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"workbench: func Open(", "workbench: type Options struct, DataDir string", "method (*Workbench) Handler("} {
		if !strings.Contains(text, want) {
			t.Errorf("the surface lacks %q", want)
		}
	}
}

func sortedKeys(set map[string]bool) []string {
	return slices.Sorted(maps.Keys(set))
}

func lineSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		set[l] = true
	}
	return set
}
