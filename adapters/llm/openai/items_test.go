package openai

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agents-server/agents-server/ports"
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

// A tool's encoding is kept after its first request: later requests send
// the kept bytes, which are the SDK's own encoding of the tool.
func TestToolEncodingsAreKept(t *testing.T) {
	req := ports.ModelRequest{Model: "m", Tools: []ports.ToolDef{{Name: "kept_lookup", Description: "Look <things> up & \u2028 on",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"a <query>"}}}`)}}}
	first, err := json.Marshal(responsesParams(req))
	if err != nil {
		t.Fatal(err)
	}
	again := responsesParams(req)
	if fn := again.Tools[0].OfFunction; fn == nil || fn.Name != "" {
		t.Fatalf("the second request encoded the tool again: %+v", fn)
	}
	second, err := json.Marshal(again)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("the kept encoding differs:\n%s\n%s (%v)", first, second, err)
	}
	if !bytes.Contains(first, []byte(`"name":"kept_lookup"`)) || !bytes.Contains(first, []byte(`"strict":false`)) {
		t.Fatalf("the tool's encoding: %s", first)
	}
}
