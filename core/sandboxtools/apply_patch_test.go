package sandboxtools

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// patchOf wraps file operations in the patch envelope.
func patchOf(lines ...string) map[string]any {
	return map[string]any{"input": "*** Begin Patch\n" + strings.Join(lines, "\n") + "\n*** End Patch"}
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"main.txt": "one\ntwo\nthree\n",
		"old.txt":  "bye\n",
		"keep.txt": "kept\n",
	}
	for _, tc := range []struct {
		name   string
		patch  map[string]any
		output string
		// after is what the patched files hold (absent: ""+false).
		after   map[string]string
		gone    []string
		summary string
	}{
		{
			name: "add, update and delete",
			patch: patchOf("*** Add File: new/file.txt", "+hello", "+world",
				"*** Update File: main.txt", "@@", " one", "-two", "+TWO", " three",
				"*** Delete File: old.txt"),
			output: "Done. The patch changed:\nA /workspace/new/file.txt\nM /workspace/main.txt\nD /workspace/old.txt",
			after:  map[string]string{"new/file.txt": "hello\nworld\n", "main.txt": "one\nTWO\nthree\n", "keep.txt": "kept\n"},
			gone:   []string{"old.txt"}, summary: "3 files",
		},
		{
			name:   "move",
			patch:  patchOf("*** Update File: main.txt", "*** Move to: moved/main.txt", "@@", "-one", "+ONE"),
			output: "Done. The patch changed:\nR /workspace/main.txt → /workspace/moved/main.txt",
			after:  map[string]string{"moved/main.txt": "ONE\ntwo\nthree\n"},
			gone:   []string{"main.txt"}, summary: "2 files",
		},
		{
			name:   "two hunks on one file",
			patch:  patchOf("*** Update File: /workspace/main.txt", "@@", "-one", "+1", "@@", "-three", "+3"),
			output: "Done. The patch changed:\nM /workspace/main.txt",
			after:  map[string]string{"main.txt": "1\ntwo\n3\n"}, summary: "1 file",
		},
		{
			name:   "an update of a file added earlier",
			patch:  patchOf("*** Add File: n.txt", "+a", "*** Update File: n.txt", "@@", "-a", "+b"),
			output: "Done. The patch changed:\nA /workspace/n.txt\nM /workspace/n.txt",
			after:  map[string]string{"n.txt": "b\n", "main.txt": "one\ntwo\nthree\n"}, summary: "1 file",
		},
		{
			name:   "a file added and deleted again",
			patch:  patchOf("*** Add File: tmp.txt", "+a", "*** Delete File: tmp.txt"),
			output: "Done. The patch changed:\nA /workspace/tmp.txt\nD /workspace/tmp.txt",
			gone:   []string{"tmp.txt"}, summary: "1 file",
		},
		{
			name: "a hunk that does not match changes nothing",
			patch: patchOf("*** Add File: new.txt", "+x", "*** Delete File: old.txt",
				"*** Update File: main.txt", "@@", "-four", "+4"),
			output: `Error: main.txt: the hunk at patch line 6 does not match the file; its lines to find start with "four" ` +
				"(read the file again and copy the context exactly)",
			after: tree, gone: []string{"new.txt"},
		},
		{
			name:   "an update of a missing file",
			patch:  patchOf("*** Add File: new.txt", "+x", "*** Update File: nope.txt", "@@", "-a", "+b"),
			output: "Error: no such file: /workspace/nope.txt",
			after:  tree, gone: []string{"new.txt"},
		},
		{
			name:   "a deletion of a missing file",
			patch:  patchOf("*** Delete File: nope.txt"),
			output: "Error: no such file: /workspace/nope.txt",
			after:  tree,
		},
		{
			name:   "an update after the deletion",
			patch:  patchOf("*** Delete File: old.txt", "*** Update File: old.txt", "@@", "-bye", "+hi"),
			output: "Error: /workspace/old.txt is deleted earlier in this patch",
			after:  tree,
		},
		{
			name:   "not a patch",
			patch:  map[string]any{"input": "--- a/main.txt\n+++ b/main.txt\n"},
			output: `Error: a patch starts with the line "*** Begin Patch"`,
			after:  tree,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "")
			f.seed(tree)
			writes := f.calls("WriteFile", "RemoveFile")
			r := f.run(tools.ApplyPatch, tc.patch)
			isError := strings.HasPrefix(tc.output, "Error: ")
			want{output: tc.output, isError: isError}.check(t, r)
			if isError && f.calls("WriteFile", "RemoveFile") != writes {
				t.Errorf("a failed patch wrote to the tree")
			}
			if !isError && (r.Display == nil || r.Display.Kind != "file_patch" || r.Display.Summary != tc.summary) {
				t.Errorf("display %+v, want %q", r.Display, tc.summary)
			}
			for p, content := range tc.after {
				if got, ok := f.file(p); !ok || got != content {
					t.Errorf("%s holds %q (%v), want %q", p, got, ok, content)
				}
			}
			for _, p := range tc.gone {
				if got, ok := f.file(p); ok {
					t.Errorf("%s is there, holding %q", p, got)
				}
			}
		})
	}
}

// A write failing midway is reported as a partial apply: what was written
// stays, and the model is told.
func TestApplyPatchPartly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "")
	f.seed(map[string]string{"b.txt": "b\n", "c.txt": "c\n"})
	var writes atomic.Int32
	f.backend.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "WriteFile" && writes.Add(1) == 2 {
			return errs.E(errs.Upstream, "disk full")
		}
		return nil
	}
	r := f.run(tools.ApplyPatch, patchOf("*** Add File: a.txt", "+a", "*** Update File: b.txt", "@@", "-b", "+B",
		"*** Delete File: c.txt"))
	want{output: "Error: the patch was applied only in part: disk full", isError: true}.check(t, r)
	f.backend.Fail = nil
	if got, ok := f.file("a.txt"); !ok || got != "a\n" {
		t.Errorf("a.txt = %q, %v: the write before the failure is gone", got, ok)
	}
	if got, _ := f.file("b.txt"); got != "b\n" {
		t.Errorf("b.txt = %q after a failed write", got)
	}
	if _, ok := f.file("c.txt"); !ok {
		t.Error("c.txt was deleted after the patch failed")
	}
}
