package workbench_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/agents-server/agents-server/ports"
)

// deskModel is a Go model as an embedding program would write one: it
// answers a request for a note with a call of save_note, and a tool's
// result with a sentence quoting it. It records what it was asked.
type deskModel struct {
	mu       sync.Mutex
	requests []ports.ModelRequest
}

func (m *deskModel) Generate(ctx context.Context, req ports.ModelRequest, sink func(ports.ModelDelta)) (ports.ModelResponse, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	last := map[string]any{}
	if n := len(req.Input); n > 0 {
		_ = json.Unmarshal(req.Input[n-1], &last)
	}
	if last["type"] == "function_call_output" {
		text := fmt.Sprintf("Done: %v", last["output"])
		for _, word := range strings.SplitAfter(text, " ") {
			if sink != nil {
				sink(ports.ModelDelta{Kind: ports.DeltaText, Text: word})
			}
		}
		msg, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant",
			"content": []map[string]string{{"type": "output_text", "text": text}}})
		return ports.ModelResponse{Output: []json.RawMessage{msg}, Model: req.Model}, nil
	}
	call, _ := json.Marshal(map[string]string{"type": "function_call", "call_id": "call_1", "name": "save_note",
		"arguments": `{"title":"groceries","text":"milk, eggs"}`})
	return ports.ModelResponse{Output: []json.RawMessage{call}, Model: req.Model}, nil
}

func (m *deskModel) Models(context.Context, ports.ProviderEndpoint) ([]ports.ModelInfo, error) {
	return []ports.ModelInfo{{ID: "desk-1", DisplayName: "Desk"}}, nil
}

// toolsOffered returns the names of the tools the model was offered in
// its first call.
func (m *deskModel) toolsOffered() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	var names []string
	for _, t := range m.requests[0].Tools {
		names = append(names, t.Name)
	}
	return names
}
