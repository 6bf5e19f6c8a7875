package openai

import (
	"encoding/json"
	"sync"
)

// schemaMap decodes a JSON Schema for the SDK's map-typed fields; an empty
// or unreadable schema is the empty object schema. The same schemas (an
// agent's tools) go out with every call, so their decodings are kept, by
// the schema's text: the maps are only read after (the SDK marshals them),
// never changed, so one serves every call.
func schemaMap(raw json.RawMessage) map[string]any {
	if m := schemas.find(raw); m != nil {
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

// maxKeptSchemas bounds the kept decodings; past it they start over (a
// server whose MCP tools keep changing their schemas decodes the current
// ones again).
const maxKeptSchemas = 1024

// schemas holds the decoded schemas by their text.
var schemas = keptSchemas{m: map[string]map[string]any{}}

// keptSchemas is schemaMap's kept decodings.
type keptSchemas struct {
	mu sync.RWMutex
	m  map[string]map[string]any
}

func (k *keptSchemas) find(raw json.RawMessage) map[string]any {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.m[string(raw)]
}

func (k *keptSchemas) keep(raw json.RawMessage, m map[string]any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) >= maxKeptSchemas {
		clear(k.m)
	}
	k.m[string(raw)] = m
}
