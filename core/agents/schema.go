package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// noRemoteRefs refuses every $ref outside the schema itself: saving an
// agent must never make the server fetch a URL.
type noRemoteRefs struct{}

func (noRemoteRefs) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %s is not allowed; inline the definition", url)
}

const schemaURL = "agent:///output_schema.json"

// compileSchema checks that raw is a valid JSON Schema (draft 2020-12 unless
// it says otherwise) whose root describes an object.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("is not JSON: %v", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("must be a JSON Schema object")
	}
	if t, has := root["type"]; has && t != "object" {
		return nil, fmt.Errorf(`must describe an object (type "object"): structured output is a JSON object`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noRemoteRefs{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %v", oneLine(err))
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("is not a valid JSON Schema: %v", oneLine(err))
	}
	return s, nil
}

// validateValue checks a JSON value against a compiled schema.
func validateValue(s *jsonschema.Schema, raw json.RawMessage) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("is not JSON: %v", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("does not match output_schema: %v", oneLine(err))
	}
	return nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// OutputSchema is a compiled output_schema: the run engine checks a
// structured final output with it.
type OutputSchema struct{ s *jsonschema.Schema }

// CompileOutputSchema compiles an agent's output_schema. Returns an error
// describing why it is not a usable schema.
func CompileOutputSchema(raw json.RawMessage) (*OutputSchema, error) {
	s, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	return &OutputSchema{s: s}, nil
}

// Check reports whether value (JSON text) matches the schema.
func (o *OutputSchema) Check(value string) error { return validateValue(o.s, json.RawMessage(value)) }
