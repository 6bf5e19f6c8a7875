package domain

import (
	"encoding/json"
	"strings"
)

// Item is the parsed view of an internal (Responses-shaped) item — the one
// vocabulary the run engine and every model adapter read; see
// ports.ModelRequest.Input for the shapes.
type Item struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"` // a string, or a list of parts
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"` // a string, or a list of parts
	Summary          []TextPart      `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
}

// TextPart is one text part of a content, output or summary list.
type TextPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ParseItem reads an item; a malformed one parses as an empty Item.
func ParseItem(raw json.RawMessage) Item {
	var it Item
	_ = json.Unmarshal(raw, &it)
	return it
}

// Kind is the item's type, treating a typeless item with a role as the
// "easy" message form the Responses API also accepts.
func (it Item) Kind() string {
	if it.Type == "" && it.Role != "" {
		return "message"
	}
	return it.Type
}

// Text joins a message's text parts.
func (it Item) Text() string { return joinText(it.Content) }

// OutputText is a function_call_output's output as text.
func (it Item) OutputText() string { return joinText(it.Output) }

// ReasoningText joins a reasoning item's summary parts, else its
// reasoning_text content.
func (it Item) ReasoningText() string {
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
	var parts []TextPart
	_ = json.Unmarshal(raw, &parts) // a non-text part contributes nothing
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Item builders: the internal shapes, built one way everywhere.

// TextMessage is a message item with one text part (input_text for what
// people and the system say, output_text for the model).
func TextMessage(role, partType, text string) json.RawMessage {
	return mustJSON(map[string]any{"type": "message", "role": role,
		"content": []any{map[string]string{"type": partType, "text": text}}})
}

// AssistantMessage is a completed assistant message; id may be "".
func AssistantMessage(id, text string) json.RawMessage {
	m := map[string]any{"type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text}}}
	if id != "" {
		m["id"] = id
	}
	return mustJSON(m)
}

// FunctionCall is a model's call of a tool; id may be "".
func FunctionCall(id, callID, name, args string) json.RawMessage {
	m := map[string]any{"type": ItemFunctionCall, "call_id": callID, "name": name, "arguments": args}
	if id != "" {
		m["id"] = id
	}
	return mustJSON(m)
}

// FunctionCallOutput builds the item that answers a function call.
func FunctionCallOutput(callID, output string) json.RawMessage {
	return mustJSON(map[string]string{"type": ItemFunctionCallOutput, "call_id": callID, "output": output})
}

// Reasoning is a reasoning item: a summary, optional reasoning text, and the
// provider's opaque encrypted content (a signature) when it has one.
func Reasoning(id, summary, reasoningText, encrypted string) json.RawMessage {
	parts := []any{}
	if summary != "" {
		parts = append(parts, map[string]any{"type": "summary_text", "text": summary})
	}
	m := map[string]any{"type": ItemReasoning, "summary": parts}
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
