package httpapi

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	yaml "go.yaml.in/yaml/v4"
)

// BuildOpenAPI describes the route table as an OpenAPI 3.1 document: schemas
// from the Go request and response types, the error envelope on every
// refusal, and bearer security except on public routes. Its components
// also describe the streamed events and the WebSocket bus's commands (the
// event and command tables), which no operation returns.
func BuildOpenAPI(routes []Route) (*openapi3.T, error) {
	doc := newDocument()
	respGen, reqGen := newSchemaGens(doc.Components.Schemas)
	envelope, err := respGen.schemaOf(reflect.TypeFor[ErrorEnvelope]())
	if err != nil {
		return nil, err
	}
	doc.Components.Responses["Error"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The error envelope: a stable code and a human message").WithJSONSchemaRef(envelope)}

	// Every response schema first: a request type shared with a response
	// is then named apart (see schemaGen).
	answers := make([]*openapi3.Response, len(routes))
	for i, r := range routes {
		if answers[i], err = successResponse(r, respGen); err != nil {
			return nil, err
		}
	}
	// The events the server sends are responses too; the bus commands a
	// client sends are requests.
	if err := addServerEvents(doc, respGen); err != nil {
		return nil, err
	}
	if err := addClientCommands(doc, reqGen); err != nil {
		return nil, err
	}
	for i, r := range routes {
		o, err := operation(r, answers[i], reqGen)
		if err != nil {
			return nil, err
		}
		doc.AddOperation(r.OpenAPIPath(), r.Method, o)
	}
	return loadedAndValid(doc)
}

// newDocument is the document's frame: info, bearer security, empty
// components.
func newDocument() *openapi3.T {
	return &openapi3.T{
		OpenAPI: "3.1.0",
		Info: &openapi3.Info{
			Title:   "agents-server",
			Version: "v1",
			Description: "The REST surface of agents-server, a self-hosted AI agent workbench. " +
				"Every non-2xx response carries the error envelope. Generated from the server's route table; never hand-edited.",
		},
		Servers: openapi3.Servers{{URL: "/"}},
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:   openapi3.Schemas{},
			Responses: openapi3.ResponseBodies{},
			SecuritySchemes: openapi3.SecuritySchemes{
				"bearer": &openapi3.SecuritySchemeRef{Value: openapi3.NewSecurityScheme().WithType("http").WithScheme("bearer")},
			},
		},
		Security: openapi3.SecurityRequirements{{"bearer": []string{}}},
	}
}

// operation is one route's operation: parameters, body, the success
// answer and every refusal.
func operation(r Route, ok *openapi3.Response, reqGen *schemaGen) (*openapi3.Operation, error) {
	o := openapi3.NewOperation()
	o.OperationID, o.Summary, o.Tags = r.OperationID, r.Summary, []string{r.Tag}
	o.Responses = openapi3.NewResponses()
	if r.Access == Public {
		o.Security = &openapi3.SecurityRequirements{}
	}
	for _, name := range r.PathParams() {
		p := openapi3.NewPathParameter(name).WithSchema(openapi3.NewStringSchema())
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: p})
	}
	for _, hd := range r.Headers {
		o.Parameters = append(o.Parameters, parameter(openapi3.NewHeaderParameter(hd.Name), hd))
	}
	for _, q := range r.Query {
		o.Parameters = append(o.Parameters, parameter(openapi3.NewQueryParameter(q.Name), q))
	}
	if r.Upload != "" {
		o.RequestBody = &openapi3.RequestBodyRef{Value: uploadBody(r.Upload)}
	} else if r.RawBody {
		// Any bytes at all: the handler reads them as they are.
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithContent(openapi3.Content{
			"*/*": openapi3.NewMediaType().WithSchema(openapi3.NewSchema())})}
	} else if r.HasBody() {
		ref, err := requestSchema(r, reqGen)
		if err != nil {
			return nil, err
		}
		o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(!r.OptionalBody).WithJSONSchemaRef(ref)}
	}
	for _, alt := range r.AltStatuses {
		o.AddResponse(alt, &openapi3.Response{Description: ptr(http.StatusText(alt)), Content: ok.Content})
	}
	if r.StreamType != "" {
		streamed := *ok
		streamed.Content = maps.Clone(ok.Content)
		streamed.Content[r.StreamType] = openapi3.NewMediaType().WithSchema(openapi3.NewStringSchema())
		ok = &streamed
	}
	o.AddResponse(r.Status, ok)
	// Every status the operation answers is listed and nothing else: no
	// `default`, which would let a client (and the API tests) accept a
	// status the table forgot.
	for _, status := range refusals(r) {
		o.Responses.Set(strconv.Itoa(status), &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
	}
	return o, nil
}

// uploadBody describes a multipart/form-data body carrying one file in
// the named part.
func uploadBody(part string) *openapi3.RequestBody {
	schema := openapi3.NewObjectSchema().WithProperty(part, openapi3.NewStringSchema().WithFormat("binary"))
	schema.Required = []string{part}
	return openapi3.NewRequestBody().WithRequired(true).WithContent(openapi3.Content{
		"multipart/form-data": openapi3.NewMediaType().WithSchema(schema)})
}

// loadedAndValid resolves the document's refs by loading it, as any
// consumer would, and validates it: what is served is usable, not just
// well-typed.
func loadedAndValid(doc *openapi3.T) (*openapi3.T, error) {
	data, err := MarshalOpenAPI(doc)
	if err != nil {
		return nil, err
	}
	loaded, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("the generated OpenAPI document does not load: %w", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the generated OpenAPI document is invalid: %w", err)
	}
	return loaded, nil
}

// parameter describes a query parameter or header.
func parameter(p *openapi3.Parameter, q QueryParam) *openapi3.ParameterRef {
	schema := &openapi3.Schema{Type: &openapi3.Types{q.Type}}
	q.Bound.apply(schema)
	p.Description = q.Description
	return &openapi3.ParameterRef{Value: p.WithSchema(schema)}
}

// successResponse describes a route's success body: JSON of its response
// type, or the raw content it writes itself.
func successResponse(r Route, g *schemaGen) (*openapi3.Response, error) {
	ok := openapi3.NewResponse().WithDescription(http.StatusText(r.Status))
	switch {
	case r.RawType != "":
		schema := openapi3.NewStringSchema() // a stream of text
		switch {
		case strings.Contains(r.RawType, "yaml"):
			schema = openapi3.NewObjectSchema() // a document
		case !strings.HasPrefix(r.RawType, "text/"):
			schema = openapi3.NewStringSchema().WithFormat("binary") // a download
		}
		ok.Content = openapi3.Content{r.RawType: openapi3.NewMediaType().WithSchema(schema)}
	case r.Response != noBodyType:
		ref, err := g.schemaOf(r.Response)
		if err != nil {
			return nil, err
		}
		ok = ok.WithJSONSchemaRef(ref)
	}
	return ok, nil
}

// requestSchema describes a route's body: its request type, plus the fields
// this operation demands beyond those the type always does (WithRequired).
func requestSchema(r Route, g *schemaGen) (*openapi3.SchemaRef, error) {
	ref, err := g.schemaOf(r.Request)
	if err != nil || len(r.Requires) == 0 {
		return ref, err
	}
	fields := jsonFields(r.Request)
	for _, f := range r.Requires {
		if !fields[f] {
			return nil, fmt.Errorf("%s requires %q, which %s does not have", r.OperationID, f, r.Request)
		}
	}
	// The type's schema, and the operation's demands on the same object:
	// generators (openapi-typescript's WithRequired) read it as the type
	// with those fields made mandatory.
	return openapi3.NewSchemaRef("", &openapi3.Schema{AllOf: openapi3.SchemaRefs{ref}, Required: r.Requires}), nil
}

// refusals lists the error statuses a route documents: those every route of
// its kind shares, plus its own. Every route spends a rate budget (429) and
// may fail unexpectedly (500); a bearer route authenticates, which answers
// 401 for a bad token and 503 when the credential store cannot answer; a
// body may be malformed (400), too large (413) or, on a JSON route, not
// labelled JSON (415); a path names a row that may not exist (404); a path
// or query parameter may be malformed (400); a write is refused while the
// server drains (503).
func refusals(r Route) []int {
	set := map[int]bool{http.StatusTooManyRequests: true, http.StatusInternalServerError: true}
	if r.Access == Bearer {
		set[http.StatusUnauthorized] = true
		set[http.StatusServiceUnavailable] = true
	}
	if r.HasBody() {
		set[http.StatusBadRequest] = true
		set[http.StatusRequestEntityTooLarge] = true
	}
	if r.takesJSON() {
		set[http.StatusUnsupportedMediaType] = true
	}
	if len(r.PathParams()) > 0 {
		set[http.StatusNotFound] = true
	}
	if r.checksParams() {
		set[http.StatusBadRequest] = true // a parameter holding a NUL
	}
	if r.Class() == ClassWrite {
		set[http.StatusServiceUnavailable] = true
	}
	for _, s := range r.Refuses {
		set[s] = true
	}
	out := make([]int, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func ptr[T any](v T) *T { return &v }

// MarshalOpenAPI renders the document as YAML, deterministically.
func MarshalOpenAPI(doc *openapi3.T) ([]byte, error) {
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("render OpenAPI: %w", err)
	}
	return out, nil
}

// Document renders the OpenAPI document of the route table without a running
// server (handlers are never called while documenting).
func Document() ([]byte, error) {
	s := &Server{}
	doc, err := BuildOpenAPI(s.table())
	if err != nil {
		return nil, err
	}
	return MarshalOpenAPI(doc)
}
