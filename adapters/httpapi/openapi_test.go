package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"testing/fstest"
)

const committedDocument = "../../openapi/openapi.yaml"

// TestCommittedOpenAPIDocumentIsCurrent fails when the route table or a wire
// type changed without `go tool task openapi`.
func TestCommittedOpenAPIDocumentIsCurrent(t *testing.T) {
	want, err := Document()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(committedDocument)
	if err != nil {
		t.Fatalf("%v (run: go tool task openapi)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("openapi/openapi.yaml is stale: run `go tool task openapi` and commit it")
	}
}

func testServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), UI: fstest.MapFS{"index.html": {Data: []byte("ui")}}},
		DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEchoServesOnlyTableRoutes fails when a route is registered on echo
// without a table entry, so the OpenAPI document cannot miss one.
func TestEchoServesOnlyTableRoutes(t *testing.T) {
	s := testServer(t)
	inTable := map[string]bool{}
	for _, r := range s.Routes() {
		key := r.Method + " " + r.Path
		if inTable[key] {
			t.Errorf("route %s is in the table twice", key)
		}
		inTable[key] = true
	}
	served := 0
	for _, r := range s.EchoRoutes() {
		if inTable[r.Method+" "+r.Path] {
			served++
			continue
		}
		if !slices.Contains(InfraPaths, r.Path) {
			t.Errorf("echo serves %s %s, which the route table lacks", r.Method, r.Path)
		}
	}
	if served != len(inTable) {
		t.Errorf("echo serves %d of the table's %d routes", served, len(inTable))
	}
}

func TestOperationIDsAreUniqueAndEveryRouteIsDocumented(t *testing.T) {
	s := testServer(t)
	ids := map[string]bool{}
	for _, r := range s.Routes() {
		if r.OperationID == "" || r.Summary == "" || r.Tag == "" {
			t.Errorf("%s %s lacks an operation id, summary or tag", r.Method, r.Path)
		}
		if ids[r.OperationID] {
			t.Errorf("operation id %s is used twice", r.OperationID)
		}
		ids[r.OperationID] = true
	}
	doc, err := BuildOpenAPI(s.Routes(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Routes() {
		item := doc.Paths.Find(r.OpenAPIPath())
		if item == nil || item.GetOperation(r.Method) == nil {
			t.Errorf("%s %s is missing from the document", r.Method, r.OpenAPIPath())
		}
	}
}

// TestEveryStatusIsListedNotDefaulted keeps `default` out of the document: a
// catch-all response would let an operation answer a status nobody listed.
func TestEveryStatusIsListedNotDefaulted(t *testing.T) {
	doc, err := BuildOpenAPI(testServer(t).Routes(), "")
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Responses.Default() != nil {
				t.Errorf("%s %s (%s) has a default response", method, path, op.OperationID)
			}
		}
	}
}
