package httpapi

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

// schemaSide is the direction a schema describes: what the server answers,
// or what a client sends.
type schemaSide int

const (
	responseSide schemaSide = iota
	requestSide
)

// inputSuffix names the request component of a Go type that responses use
// too (AgentBehavior is read, AgentBehaviorInput is written).
const inputSuffix = "Input"

// schemaGen turns Go types into component schemas for one side. The sides
// differ in what `required` means — a response lists every field it always
// carries, so response validation catches a missing one; a request lists
// only the fields the server refuses to do without, so a client validating
// against the document can send a minimal body. A Go type used both ways is
// therefore two components, the request one named <Type>Input.
type schemaGen struct {
	side     schemaSide
	gen      *openapi3gen.Generator
	schemas  openapi3.Schemas
	names    map[string]reflect.Type // component name → Go type, both sides
	answered map[reflect.Type]bool   // struct types the response side named
	err      error
}

// newSchemaGens returns the generators of both sides, writing into one
// component map. Generate every response schema before any request one: a
// request type learns that it needs its own name from the responses.
func newSchemaGens(schemas openapi3.Schemas) (resp, req *schemaGen) {
	names, answered := map[string]reflect.Type{}, map[reflect.Type]bool{}
	mk := func(side schemaSide) *schemaGen {
		g := &schemaGen{side: side, schemas: schemas, names: names, answered: answered}
		g.gen = openapi3gen.NewGenerator(
			openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
			openapi3gen.CreateTypeNameGenerator(g.typeName),
			openapi3gen.SchemaCustomizer(g.customize),
		)
		return g
	}
	return mk(responseSide), mk(requestSide)
}

// schemaOf returns the schema (usually a component reference) of t.
func (g *schemaGen) schemaOf(t reflect.Type) (*openapi3.SchemaRef, error) {
	ref, err := g.gen.NewSchemaRefForValue(reflect.New(t).Elem().Interface(), g.schemas)
	if err == nil {
		err = g.err
	}
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	return ref, nil
}

// typeName names the component of a struct type, and refuses (through
// g.err) two Go types under one name, which would silently keep one schema.
func (g *schemaGen) typeName(t reflect.Type) string {
	name := t.Name()
	switch {
	case g.side == responseSide:
		g.answered[t] = true
	case g.answered[t]:
		name += inputSuffix
	}
	if prev, ok := g.names[name]; ok && prev != t && g.err == nil {
		g.err = fmt.Errorf("component %s would describe both %s and %s", name, prev, t)
	}
	g.names[name] = t
	return name
}

var timeType = reflect.TypeFor[time.Time]()

// customize adds what the generator cannot know: descriptions and enums
// from struct tags, OpenAPI 3.1 nullability, and the side's required fields.
func (g *schemaGen) customize(_ string, t reflect.Type, tag reflect.StructTag, s *openapi3.Schema) error {
	if d := tag.Get("doc"); d != "" && t.Kind() != reflect.Struct {
		s.Description = d
	}
	enumType := t
	if t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		enumType = t.Elem()
	}
	values, err := enumValues(tag.Get("enum"), enumType)
	if err != nil {
		return err
	}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
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
	for name, doc := range docsOf(t) {
		p := s.Properties[name]
		if p == nil || p.Value == nil {
			return fmt.Errorf("fieldDocs: %s has no field %q", t, name)
		}
		p.Value.Description = doc
	}
	if t.Kind() == reflect.Struct && t != timeType {
		if g.side == responseSide {
			s.Required = alwaysPresent(t)
		} else {
			// Bounds describe what the server accepts, so they belong to
			// requests: a response only carries what was accepted.
			s.Required = demanded(t)
			applyBounds(t, s)
		}
	}
	return nil
}

// alwaysPresent lists the fields a response always carries: every field
// without omitempty.
func alwaysPresent(t reflect.Type) []string {
	return jsonNames(t, func(f reflect.StructField, opts string) bool { return !strings.Contains(opts, "omitempty") })
}

// demanded lists the fields a request must carry: those tagged
// `required:"true"`, which a type puts on a field only when the server
// refuses every request without it (a 4xx however the rest is filled).
func demanded(t reflect.Type) []string {
	return jsonNames(t, func(f reflect.StructField, _ string) bool { return f.Tag.Get("required") == "true" })
}

// jsonNames lists, sorted, the JSON names of t's fields (embedded structs'
// included, as encoding/json flattens them) that keep says to.
func jsonNames(t reflect.Type, keep func(f reflect.StructField, opts string) bool) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonNames(f.Type, keep)...)
			continue
		}
		if tag == "-" || tag == "" || !f.IsExported() || !keep(f, opts) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
