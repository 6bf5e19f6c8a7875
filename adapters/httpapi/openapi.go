package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
	yaml "go.yaml.in/yaml/v4"
)

// BuildOpenAPI describes the route table as an OpenAPI 3.1 document: schemas
// from the Go request and response types, the error envelope on every
// refusal, and bearer security except on public routes.
func BuildOpenAPI(routes []Route, serverVersion string) (*openapi3.T, error) {
	doc := &openapi3.T{
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
	gen := openapi3gen.NewGenerator(
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
		openapi3gen.SchemaCustomizer(customizeSchema),
	)
	schemaOf := func(t reflect.Type) (*openapi3.SchemaRef, error) {
		ref, err := gen.NewSchemaRefForValue(reflect.New(t).Elem().Interface(), doc.Components.Schemas)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", t, err)
		}
		return ref, nil
	}
	envelope, err := schemaOf(reflect.TypeFor[ErrorEnvelope]())
	if err != nil {
		return nil, err
	}
	doc.Components.Responses["Error"] = &openapi3.ResponseRef{Value: openapi3.NewResponse().
		WithDescription("The error envelope: a stable code and a human message").WithJSONSchemaRef(envelope)}

	for _, r := range routes {
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
			p := openapi3.NewHeaderParameter(hd.Name).WithSchema(&openapi3.Schema{Type: &openapi3.Types{hd.Type}})
			p.Description = hd.Description
			o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: p})
		}
		for _, q := range r.Query {
			p := openapi3.NewQueryParameter(q.Name).WithSchema(&openapi3.Schema{Type: &openapi3.Types{q.Type}})
			p.Description = q.Description
			o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: p})
		}
		if r.HasBody() {
			ref, err := schemaOf(r.Request)
			if err != nil {
				return nil, err
			}
			o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithRequired(!r.OptionalBody).WithJSONSchemaRef(ref)}
		}
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
			ref, err := schemaOf(r.Response)
			if err != nil {
				return nil, err
			}
			ok = ok.WithJSONSchemaRef(ref)
		}
		o.AddResponse(r.Status, ok)
		for _, alt := range r.AltStatuses {
			o.AddResponse(alt, &openapi3.Response{Description: ptr(http.StatusText(alt)), Content: ok.Content})
		}
		// Every status the operation answers is listed and nothing else: no
		// `default`, which would let a client (and the API tests) accept a
		// status the table forgot.
		for _, status := range refusals(r) {
			o.Responses.Set(strconv.Itoa(status), &openapi3.ResponseRef{Ref: "#/components/responses/Error"})
		}
		doc.AddOperation(r.OpenAPIPath(), r.Method, o)
	}
	// Refs are resolved by loading, as any consumer would: validating the
	// loaded document proves what is served is usable, not just well-typed.
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

// refusals lists the error statuses a route documents: those every route of
// its kind shares, plus its own. Every route spends a rate budget (429) and
// may fail unexpectedly (500); a bearer route authenticates, which answers
// 401 for a bad token and 503 when the credential store cannot answer; a
// body may be malformed (400) or too large (413); a path names a row that
// may not exist (404); a write is refused while the server drains (503).
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
	if len(r.PathParams()) > 0 {
		set[http.StatusNotFound] = true
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

var timeType = reflect.TypeFor[time.Time]()

func ptr[T any](v T) *T { return &v }

// customizeSchema adds what the generator cannot know: descriptions and
// enums from struct tags, OpenAPI 3.1 nullability, and which fields are
// required — every field without omitempty, so response validation catches
// a missing one (request types mark their optional fields omitempty).
func customizeSchema(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	if d := tag.Get("doc"); d != "" && t.Kind() != reflect.Struct {
		s.Description = d
	}
	if e := tag.Get("enum"); e != "" {
		for _, v := range strings.Split(e, ",") {
			s.Enum = append(s.Enum, v)
		}
	}
	if s.Nullable || tag.Get("nullable") == "true" {
		s.Nullable = false
		if s.Type != nil && !s.Type.Includes("null") {
			*s.Type = append(*s.Type, "null")
		}
	}
	// A tag on a slice or map field describes the field, and its enum lists
	// what the elements may be; the generator hands the tag to both levels.
	var elem *openapi3.SchemaRef
	switch t.Kind() {
	case reflect.Slice:
		elem = s.Items
	case reflect.Map:
		elem = s.AdditionalProperties.Schema
	}
	if elem != nil && elem.Value != nil {
		elem.Value.Description = ""
		s.Enum = nil
		if tag.Get("nullable") == "true" && elem.Value.Type != nil {
			*elem.Value.Type = slices.DeleteFunc(*elem.Value.Type, func(t string) bool { return t == "null" })
		}
	}
	if t.Kind() == reflect.Struct && t != timeType {
		s.Required = requiredFields(t)
	}
	return nil
}

func requiredFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, requiredFields(f.Type)...)
			continue
		}
		if tag == "-" || tag == "" || !f.IsExported() || strings.Contains(opts, "omitempty") {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

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
	doc, err := BuildOpenAPI(s.table(), "")
	if err != nil {
		return nil, err
	}
	return MarshalOpenAPI(doc)
}
