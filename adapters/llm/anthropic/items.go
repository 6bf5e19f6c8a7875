package anthropic

import (
	"encoding/json"
	"strings"
)

// item is the part of an internal (Responses-shaped) item the translation
// reads; see ports.ModelRequest.Input.
type item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	Summary          []textPart      `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
}

type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// kind is the item's type, treating a typeless item with a role as a
// message (the "easy" form of the Responses API).
func (it item) kind() string {
	if it.Type == "" && it.Role != "" {
		return "message"
	}
	return it.Type
}

func (it item) text() string       { return joinText(it.Content) }
func (it item) outputText() string { return joinText(it.Output) }

// thinking is the text a reasoning item carries: its summary parts, which
// is where this adapter stores a thinking block's text.
func (it item) thinking() string {
	var b strings.Builder
	for _, p := range it.Summary {
		b.WriteString(p.Text)
	}
	return b.String()
}

func joinText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []textPart
	_ = json.Unmarshal(raw, &parts) // a non-text content contributes nothing
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func parseItem(raw json.RawMessage) item {
	var it item
	_ = json.Unmarshal(raw, &it) // a malformed item reads as empty and is skipped
	return it
}

// The output items in the internal shape. Message and function_call items
// carry no id: Anthropic's msg_ ids would read as OpenAI's to the Responses
// translation, which sends such items by reference.

func messageItem(text string) json.RawMessage {
	return mustJSON(map[string]any{"type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text}}})
}

func functionCallItem(callID, name, args string) json.RawMessage {
	return mustJSON(map[string]any{"type": "function_call", "call_id": callID, "name": name, "arguments": args})
}

func reasoningItem(id, thinking, signature string) json.RawMessage {
	return mustJSON(map[string]any{"type": "reasoning", "id": id,
		"summary":           []any{map[string]any{"type": "summary_text", "text": thinking}},
		"encrypted_content": signature})
}

// mustJSON marshals values built from strings and maps, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
