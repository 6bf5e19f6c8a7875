package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

// An agent's tool schemas go out with every model call: each is decoded
// once, and later calls take the kept map without decoding (nor
// allocating) again. The map is the schema's decoding either way.
func TestToolSchemasAreDecodedOnce(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	first := schemaMap(raw)
	if !reflect.DeepEqual(first, map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}},
		"required": []any{"q"}}) {
		t.Fatalf("decoded %v", first)
	}
	if again := schemaMap(append(json.RawMessage(nil), raw...)); reflect.ValueOf(again).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() {
		t.Error("the same schema was decoded again")
	}
	if n := testing.AllocsPerRun(10, func() { schemaMap(raw) }); n != 0 {
		t.Errorf("a kept schema costs %.0f allocations, want none", n)
	}
	if empty := schemaMap(nil); !reflect.DeepEqual(empty, map[string]any{"type": "object", "properties": map[string]any{}}) {
		t.Errorf("no schema reads as %v, want the empty object schema", empty)
	}
}
