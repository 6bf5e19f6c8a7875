package openai

import (
	"encoding/json"
	"sync"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agents-server/agents-server/ports"
)

// schemaMap decodes a JSON Schema for the SDK's map-typed fields; an empty
// or unreadable schema is the empty object schema. The same schemas (an
// agent's tools) go out with every call, so their decodings are kept, by
// the schema's text: the maps are only read after (the SDK marshals them),
// never changed, so one serves every call.
func schemaMap(raw json.RawMessage) map[string]any {
	if m, ok := schemas.find(raw); ok {
		return m
	}
	m := map[string]any{}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	if len(m) == 0 {
		m = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	schemas.keep(raw, m)
	return m
}

// functionTool is a tool as a Responses request carries it. The same tools
// go out with every call, and the SDK's reflective encoding of one (its
// schema a map) is most of a short request's: each tool's encoding, the
// SDK's own, is kept by the tool's text and sent as it is after.
func functionTool(t ports.ToolDef) responses.ToolUnionParam {
	key := make([]byte, 0, len(t.Name)+len(t.Description)+len(t.Parameters)+2)
	key = append(append(append(append(append(key, t.Name...), 0), t.Description...), 0), t.Parameters...)
	if body, ok := toolBodies.find(key); ok {
		fn := param.Override[responses.FunctionToolParam](body)
		return responses.ToolUnionParam{OfFunction: &fn}
	}
	fn := responses.FunctionToolParam{
		Name:        t.Name,
		Description: optString(t.Description),
		Parameters:  schemaMap(t.Parameters),
		// strict needs every schema rewritten to OpenAI's subset; tools
		// from MCP servers rarely are
		Strict: param.NewOpt(false),
	}
	if body, err := json.Marshal(fn); err == nil {
		toolBodies.keep(key, json.RawMessage(body))
	}
	return responses.ToolUnionParam{OfFunction: &fn}
}

// maxKept bounds each kept set; past it the set starts over (a server
// whose MCP tools keep changing their schemas decodes the current ones
// again).
const maxKept = 1024

var (
	// schemas holds the decoded schemas by their text.
	schemas = kept[map[string]any]{m: map[string]map[string]any{}}
	// toolBodies holds the tools' encodings by their text.
	toolBodies = kept[json.RawMessage]{m: map[string]json.RawMessage{}}
)

// kept holds what was derived from a text, by that text; what it holds is
// only read after, never changed.
type kept[V any] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (k *kept[V]) find(text []byte) (V, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	v, ok := k.m[string(text)]
	return v, ok
}

func (k *kept[V]) keep(text []byte, v V) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) >= maxKept {
		clear(k.m)
	}
	k.m[string(text)] = v
}
