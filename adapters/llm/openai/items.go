package openai

import (
	"encoding/json"
	"strings"
)

// item is the part of an internal (Responses-shaped) item the translations
// read; see ports.ModelRequest.Input.
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

// kind is the item's type, treating a typeless item with a role as the
// "easy" message form the Responses API also accepts.
func (it item) kind() string {
	if it.Type == "" && it.Role != "" {
		return "message"
	}
	return it.Type
}

// text joins the text parts of a message's content (a string or a part list).
func (it item) text() string { return joinText(it.Content) }

// outputText is a function_call_output's output: a string, or the text of
// its parts.
func (it item) outputText() string { return joinText(it.Output) }

// reasoningText joins the summary parts, else the reasoning_text content.
func (it item) reasoningText() string {
	var b strings.Builder
	for _, p := range it.Summary {
		b.WriteString(p.Text)
	}
	if b.Len() == 0 {
		return joinText(it.Content)
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

// The output items in the internal shape, as the port documents them.

func messageItem(id, text string) json.RawMessage {
	m := map[string]any{"type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text}}}
	if id != "" {
		m["id"] = id
	}
	return mustJSON(m)
}

func functionCallItem(id, callID, name, args string) json.RawMessage {
	m := map[string]any{"type": "function_call", "call_id": callID, "name": name, "arguments": args}
	if id != "" {
		m["id"] = id
	}
	return mustJSON(m)
}

func reasoningItem(id, summary, reasoningText, encrypted string) json.RawMessage {
	parts := []any{}
	if summary != "" {
		parts = append(parts, map[string]any{"type": "summary_text", "text": summary})
	}
	m := map[string]any{"type": "reasoning", "summary": parts}
	if id != "" {
		m["id"] = id
	}
	if reasoningText != "" {
		m["content"] = []any{map[string]any{"type": "reasoning_text", "text": reasoningText}}
	}
	if encrypted != "" {
		m["encrypted_content"] = encrypted
	}
	return mustJSON(m)
}

// mustJSON marshals values built from strings and maps, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

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
