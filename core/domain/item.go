package domain

import (
	"encoding/json"
	"strings"
)

// Item is the parsed view of a Responses item the run engine reads.
type Item struct {
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    string `json:"output,omitempty"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal,omitempty"`
	} `json:"content,omitempty"`
	Summary []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"summary,omitempty"`
}

// ParseItem reads an item; a malformed one parses as an empty Item.
func ParseItem(raw json.RawMessage) Item {
	var it Item
	_ = json.Unmarshal(raw, &it)
	return it
}

// Text joins a message's text parts, or a reasoning item's summary and
// reasoning text.
func (it Item) Text() string {
	var b strings.Builder
	for _, s := range it.Summary {
		b.WriteString(s.Text)
	}
	for _, c := range it.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// FunctionCallOutput builds the item that answers a function call.
func FunctionCallOutput(callID, output string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "function_call_output", "call_id": callID, "output": output})
	return b
}
