package patch

import (
	"strings"
	"testing"
)

const source = `package main

import "fmt"

func greet(name string) {
	fmt.Println("hello", name)
}

func main() {
	greet("world")
}
`

func parseOne(t *testing.T, text string) FileOp {
	t.Helper()
	ops, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 {
		t.Fatalf("%d ops", len(ops))
	}
	return ops[0]
}

func TestUpdateWithAnchorAndContext(t *testing.T) {
	op := parseOne(t, `*** Begin Patch
*** Update File: main.go
@@ func greet(name string) {
-	fmt.Println("hello", name)
+	fmt.Println("hi", name)
@@ func main() {
 	greet("world")
+	greet("gophers")
 }
*** End Patch`)
	got, err := op.Apply(source)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(source, `"hello"`, `"hi"`, 1), "greet(\"world\")\n", "greet(\"world\")\n\tgreet(\"gophers\")\n", 1)
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestHunksAreFoundInOrderAndLooselyOnWhitespace(t *testing.T) {
	text := "a\nx\nb\nx\nc\n"
	// The second hunk's context is "x" again: it must land after the first.
	op := parseOne(t, "*** Begin Patch\n*** Update File: f\n@@\n a\n-x\n+X1\n@@\n b\n-x   \n+X2\n*** End Patch")
	got, err := op.Apply(text)
	if err != nil || got != "a\nX1\nb\nX2\nc\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	// Indentation the model lost still matches, as a last resort.
	op = parseOne(t, "*** Begin Patch\n*** Update File: f\n-fmt.Println(\"hello\", name)\n+\tfmt.Println(\"bye\", name)\n*** End Patch")
	if got, err := op.Apply(source); err != nil || !strings.Contains(got, "\"bye\"") {
		t.Fatalf("loose match: %v", err)
	}
}

func TestEndOfFileAndPureAdditions(t *testing.T) {
	op := parseOne(t, "*** Begin Patch\n*** Update File: f\n@@\n x\n+tail\n*** End of File\n*** End Patch")
	if got, err := op.Apply("x\ny\nx\n"); err != nil || got != "x\ny\nx\ntail\n" {
		t.Fatalf("EOF hunk matched the first x: %q %v", got, err)
	}
	op = parseOne(t, "*** Begin Patch\n*** Update File: f\n+appended\n*** End Patch")
	if got, err := op.Apply("one\n"); err != nil || got != "one\nappended\n" {
		t.Fatalf("pure addition: %q %v", got, err)
	}
	op = parseOne(t, "*** Begin Patch\n*** Update File: f\n@@ one\n+after one\n*** End Patch")
	if got, err := op.Apply("one\ntwo\n"); err != nil || got != "one\nafter one\ntwo\n" {
		t.Fatalf("addition after an anchor: %q %v", got, err)
	}
}

func TestTrailingBlankContextTheFileLacks(t *testing.T) {
	op := parseOne(t, "*** Begin Patch\n*** Update File: f\n last\n-end\n+END\n \n*** End Patch")
	if got, err := op.Apply("last\nend"); err != nil || got != "last\nEND\n" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestAddDeleteMoveAndSeveralFiles(t *testing.T) {
	ops, err := Parse(`*** Begin Patch
*** Add File: docs/new.md
+# New
+
+text
*** Delete File: old.txt
*** Update File: a.go
*** Move to: b.go
@@
-x
+y
*** End Patch`)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].Kind != Add || ops[0].Content != "# New\n\ntext\n" || ops[1].Kind != Delete || ops[1].Path != "old.txt" ||
		ops[2].Kind != Update || ops[2].MoveTo != "b.go" {
		t.Fatalf("ops = %+v", ops)
	}
}

func TestMismatchesAndMalformedPatchesSayWhere(t *testing.T) {
	op := parseOne(t, "*** Begin Patch\n*** Update File: main.go\n-not in the file\n+x\n*** End Patch")
	if _, err := op.Apply(source); err == nil || !strings.Contains(err.Error(), "main.go") || !strings.Contains(err.Error(), "not in the file") {
		t.Fatalf("mismatch: %v", err)
	}
	op = parseOne(t, "*** Begin Patch\n*** Update File: main.go\n@@ func nowhere() {\n-x\n+y\n*** End Patch")
	if _, err := op.Apply(source); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("missing anchor: %v", err)
	}
	for text, want := range map[string]string{
		"*** Update File: f\n-x\n+y\n*** End Patch":                           "Begin Patch",
		"*** Begin Patch\n*** Update File: f\n-x\n+y":                         "End Patch",
		"*** Begin Patch\n*** End Patch":                                      "no file",
		"*** Begin Patch\n*** Add File: f\nno plus\n*** End Patch":            "line 3",
		"*** Begin Patch\n*** Update File: f\n*x\n*** End Patch":              "line 3",
		"*** Begin Patch\nrandom\n*** End Patch":                              "line 2",
		"*** Begin Patch\n*** Update File: \n-x\n*** End Patch":               "no path",
		"*** Begin Patch\n*** Update File: f\n*** End Patch":                  "no hunk",
		"*** Begin Patch\n*** Update File: f\n*** End of File\n*** End Patch": "before any hunk",
	} {
		if _, err := Parse(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", text, err, want)
		}
	}
}

func TestCRLFPatchesAndDeletingEverything(t *testing.T) {
	op := parseOne(t, "*** Begin Patch\r\n*** Update File: f\r\n-only\r\n*** End Patch\r\n")
	if got, err := op.Apply("only\n"); err != nil || got != "" {
		t.Fatalf("got %q, %v", got, err)
	}
}
