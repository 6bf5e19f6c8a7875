package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/sessions"
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

func testServer(t testing.TB) *Server {
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
	doc, err := BuildOpenAPI(s.Routes())
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
	doc, err := BuildOpenAPI(testServer(t).Routes())
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

// probeRow and probeRowInput exist to collide: a type shared by a request and
// a response is written as <Type>Input, which probeRowInput already names.
type probeRow struct {
	Name string `json:"name" required:"true"`
	Note string `json:"note"`
}

type probeRowInput struct {
	Other string `json:"other"`
}

func probeHandler[Req, Resp any](echo.Context, *Req) (Resp, error) { return *new(Resp), nil }

// TestRequestAndResponseSchemasDifferInRequired: a type used both ways is two
// components — the response requires every field it always carries, the
// request only what is tagged required — and two Go types never share a name.
func TestRequestAndResponseSchemasDifferInRequired(t *testing.T) {
	routes := []Route{
		op(http.MethodGet, "/probe", "getProbe", "probe", "read", http.StatusOK, probeHandler[NoBody, probeRow]),
		op(http.MethodPut, "/probe", "putProbe", "probe", "write", http.StatusOK, probeHandler[probeRow, NoBody]),
	}
	doc, err := BuildOpenAPI(routes)
	if err != nil {
		t.Fatal(err)
	}
	read, written := doc.Components.Schemas["probeRow"], doc.Components.Schemas["probeRowInput"]
	if read == nil || written == nil {
		t.Fatalf("components: %v", slices.Sorted(maps.Keys(doc.Components.Schemas)))
	}
	if !slices.Equal(read.Value.Required, []string{"name", "note"}) || !slices.Equal(written.Value.Required, []string{"name"}) {
		t.Fatalf("required: read %v, written %v", read.Value.Required, written.Value.Required)
	}
	body := doc.Paths.Find("/probe").Put.RequestBody.Value.Content.Get("application/json").Schema
	if body.Ref != "#/components/schemas/probeRowInput" {
		t.Fatalf("the request body is %s", body.Ref)
	}

	routes = append(routes, op(http.MethodPost, "/probe", "postProbe", "probe", "other", http.StatusOK, probeHandler[probeRowInput, NoBody]))
	if _, err := BuildOpenAPI(routes); err == nil || !strings.Contains(err.Error(), "probeRowInput") {
		t.Fatalf("two types named probeRowInput: err = %v", err)
	}
}

// TestWithRequiredAddsToTheTypesRequired: an operation that demands a field
// its body type leaves optional says so in its own schema only.
func TestWithRequiredAddsToTheTypesRequired(t *testing.T) {
	routes := []Route{
		op(http.MethodPost, "/probe", "createProbe", "probe", "create", http.StatusCreated, probeHandler[probeRow, NoBody]).WithRequired("note"),
		op(http.MethodPut, "/probe", "putProbe", "probe", "update", http.StatusOK, probeHandler[probeRow, NoBody]),
	}
	doc, err := BuildOpenAPI(routes)
	if err != nil {
		t.Fatal(err)
	}
	create := doc.Paths.Find("/probe").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	if len(create.AllOf) != 1 || create.AllOf[0].Ref != "#/components/schemas/probeRow" || !slices.Equal(create.Required, []string{"note"}) {
		t.Fatalf("create body = %+v", create)
	}
	if got := doc.Components.Schemas["probeRow"].Value.Required; !slices.Equal(got, []string{"name"}) {
		t.Fatalf("the shared type requires %v", got)
	}
	routes[0] = routes[0].WithRequired("nonesuch")
	if _, err := BuildOpenAPI(routes); err == nil {
		t.Fatal("a required field the type lacks was documented")
	}
}

// TestEveryBoundNamesAField: a bound keyed by a misspelt field would state
// nothing, silently.
func TestEveryBoundNamesAField(t *testing.T) {
	for typ, fields := range requestBounds {
		declared := declaringTypes(typ)
		for name := range fields {
			if declared[name] != typ {
				t.Errorf("requestBounds: %s declares no JSON field %q", typ, name)
			}
		}
	}
}

// TestTheDocumentStatesTheServersBounds spot-checks that the bounds reach
// the document with the validators' numbers (every one is proved against
// the server by the API suite's TestDocumentedBoundsAreEnforced).
func TestTheDocumentStatesTheServersBounds(t *testing.T) {
	doc, err := BuildOpenAPI(testServer(t).Routes())
	if err != nil {
		t.Fatal(err)
	}
	prop := func(component, name string) *openapi3.Schema {
		s := doc.Components.Schemas[component]
		if s == nil || s.Value.Properties[name] == nil {
			t.Fatalf("%s.%s is not in the document", component, name)
		}
		return s.Value.Properties[name].Value
	}
	num := func(f *float64) float64 {
		if f == nil {
			return -1
		}
		return *f
	}
	if s := prop("AgentBehaviorInput", "max_turns"); num(s.Min) != 0 || num(s.Max) != domain.MaxTurnsLimit {
		t.Errorf("max_turns: [%v, %v]", num(s.Min), num(s.Max))
	}
	if s := prop("ModelSettingsInput", "temperature"); num(s.Min) != 0 || num(s.Max) != domain.MaxTemperature {
		t.Errorf("temperature: [%v, %v]", num(s.Min), num(s.Max))
	}
	if s := prop("ModelSettingsInput", "top_p"); s.Min != nil || num(s.ExclusiveMin.Value) != 0 || num(s.Max) != domain.MaxTopP {
		t.Errorf("top_p: (%v, %v]", num(s.ExclusiveMin.Value), num(s.Max))
	}
	if s := prop("CreateAgentRequest", "name"); s.MaxLength == nil || *s.MaxLength != domain.MaxAgentName {
		t.Errorf("agent name: maxLength %v", s.MaxLength)
	}
	// A response states no bound: it carries what was accepted.
	if s := prop("AgentBehavior", "max_turns"); s.Max != nil {
		t.Errorf("the response schema bounds max_turns")
	}
	var limit *openapi3.Schema
	for _, p := range doc.Paths.Find("/api/v1/sessions/{id}/messages").Get.Parameters {
		if p.Value.Name == "limit" {
			limit = p.Value.Schema.Value
		}
	}
	if limit == nil || num(limit.Min) != 1 || num(limit.Max) != sessions.MaxPageLimit {
		t.Errorf("listMessages limit: %+v", limit)
	}
}
