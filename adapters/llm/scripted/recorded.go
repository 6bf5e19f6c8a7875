package scripted

import (
	"bytes"
	"encoding/json"
)

// A recorded request read back whatever its protocol: the contract tests of
// the model adapters ask what reached the wire (the schema, the tool calls
// and outputs, the reasoning handed back) without knowing where each
// protocol keeps it; the server knows.

// OutputSchema is the JSON Schema the request asks the answer to match,
// from where its protocol carries it (Responses text.format, Chat
// Completions response_format.json_schema, Messages output_config.format);
// nil when it asks for none.
func (r Recorded) OutputSchema() json.RawMessage {
	type format struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	var body struct {
		Text struct {
			Format format `json:"format"`
		} `json:"text"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema format `json:"json_schema"`
		} `json:"response_format"`
		OutputConfig struct {
			Format format `json:"format"`
		} `json:"output_config"`
	}
	_ = json.Unmarshal(r.Body, &body) // an unreadable body asks for nothing
	var f format
	switch r.API {
	case APIResponses:
		f = body.Text.Format
	case APIChatCompletions:
		f = body.ResponseFormat.JSONSchema
		f.Type = body.ResponseFormat.Type
	case APIMessages:
		f = body.OutputConfig.Format
	}
	if f.Type != "json_schema" {
		return nil
	}
	return f.Schema
}

// History is what a request hands back of earlier model turns.
type History struct {
	// Calls are the function calls, in order, arguments as JSON text.
	Calls []ToolCall
	// Outputs are the calls' outputs by call id.
	Outputs map[string]string
	// Reasoning is the text of each reasoning item (Responses summaries,
	// Messages thinking blocks) handed back; Chat Completions has no place
	// for it.
	Reasoning []string
}

// History reads the request's conversation for what it hands back.
func (r Recorded) History() History {
	h := History{Outputs: map[string]string{}}
	switch r.API {
	case APIResponses:
		h.readResponses(r.Body)
	case APIChatCompletions:
		h.readChat(r.Body)
	case APIMessages:
		h.readMessages(r.Body)
	}
	return h
}

func (h *History) readResponses(raw json.RawMessage) {
	var body struct {
		Input []struct {
			Type      string          `json:"type"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments string          `json:"arguments"`
			Output    json.RawMessage `json:"output"`
			Summary   []textPart      `json:"summary"`
		} `json:"input"`
	}
	_ = json.Unmarshal(raw, &body) // a string input hands nothing back
	for _, it := range body.Input {
		switch it.Type {
		case "function_call":
			h.Calls = append(h.Calls, ToolCall{CallID: it.CallID, Name: it.Name, Arguments: it.Arguments})
		case "function_call_output":
			h.Outputs[it.CallID] = contentText(it.Output)
		case "reasoning":
			var b bytes.Buffer
			for _, s := range it.Summary {
				if s.Text != nil {
					b.WriteString(*s.Text)
				}
			}
			h.Reasoning = append(h.Reasoning, b.String())
		}
	}
}

func (h *History) readChat(raw json.RawMessage) {
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &body)
	for _, m := range body.Messages {
		for _, tc := range m.ToolCalls {
			h.Calls = append(h.Calls, ToolCall{CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		if m.Role == "tool" {
			h.Outputs[m.ToolCallID] = contentText(m.Content)
		}
	}
}

func (h *History) readMessages(raw json.RawMessage) {
	var body struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &body)
	for _, m := range body.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			Thinking  string          `json:"thinking"`
		}
		_ = json.Unmarshal(m.Content, &blocks) // string content holds no blocks
		for _, b := range blocks {
			switch b.Type {
			case "tool_use":
				var args bytes.Buffer
				if json.Compact(&args, b.Input) != nil {
					args.Reset()
					args.Write(b.Input)
				}
				h.Calls = append(h.Calls, ToolCall{CallID: b.ID, Name: b.Name, Arguments: args.String()})
			case "tool_result":
				h.Outputs[b.ToolUseID] = contentText(b.Content)
			case "thinking":
				h.Reasoning = append(h.Reasoning, b.Thinking)
			}
		}
	}
}
