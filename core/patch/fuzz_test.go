package patch

import (
	"strings"
	"testing"
)

// FuzzParse: any text parses into file operations or fails with an error
// naming the problem, and an update applies to any file without a panic;
// applying what the patch itself says the file holds succeeds.
func FuzzParse(f *testing.F) {
	for _, seed := range []struct{ patch, file string }{
		{"*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch", ""},
		{"*** Begin Patch\n*** Delete File: a.txt\n*** End Patch", "x"},
		{"*** Begin Patch\n*** Update File: a.go\n@@ func main\n-\told()\n+\tnew()\n*** End Patch", "func main() {\n\told()\n}\n"},
		{"*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n a\n-b\n+c\n*** End of File\n*** End Patch", "a\nb"},
		{"*** Begin Patch\n*** End Patch", ""},
		{"*** Begin Patch\n*** Update File: a\n-\n+\n*** End Patch", "\n"},
		{"garbage", ""},
	} {
		f.Add(seed.patch, seed.file)
	}
	f.Fuzz(func(t *testing.T, text, file string) {
		ops, err := Parse(text)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no message")
			}
			return
		}
		for _, op := range ops {
			if op.Path == "" || (op.Kind != Add && op.Kind != Delete && op.Kind != Update) {
				t.Fatalf("parsed op %+v", op)
			}
			if op.Kind != Update {
				continue
			}
			_, _ = op.Apply(file)
			// The file the hunks describe: each hunk's old lines, in order.
			var described []string
			for _, c := range op.Chunks {
				if c.Anchor != "" {
					described = append(described, c.Anchor)
				}
				described = append(described, c.Old...)
			}
			if _, err := op.Apply(strings.Join(described, "\n")); err != nil && len(op.Chunks) == 1 && op.Chunks[0].Anchor == "" {
				t.Fatalf("a one-hunk patch does not apply to the file it describes: %v\n%q", err, described)
			}
		}
	})
}
