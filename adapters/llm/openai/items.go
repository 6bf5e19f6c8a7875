package openai

import "encoding/json"

// schemaMap decodes a JSON Schema for the SDK's map-typed fields; an empty
// or unreadable schema is the empty object schema.
func schemaMap(raw json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	if len(m) == 0 {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return m
}
