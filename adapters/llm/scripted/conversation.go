package scripted

import (
	"encoding/json"
	"strings"
)

// The three protocols carry a conversation differently; each parser below
// reduces a request to the last user message's text and the number of
// assistant turns after it, which is all the selection needs.

// responsesConversation reads a Responses `input`: a string (one user
// message) or a list of items. Each maximal run of model-output items
// (assistant message, function_call, reasoning) after the last user message
// is one assistant turn.
func responsesConversation(model string, input json.RawMessage, size int) conversation {
	conv := conversation{model: model, inputSize: size}
	var text string
	if json.Unmarshal(input, &text) == nil {
		conv.lastUser = text
		return conv
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(input, &items) // an unreadable input is an empty conversation
	last := -1
	for i, it := range items {
		if it.Role == "user" && (it.Type == "" || it.Type == "message") {
			last = i
		}
	}
	if last >= 0 {
		conv.lastUser = contentText(items[last].Content)
		conv.images = imagesIn(APIResponses, items[last].Content)
	}
	inRun := false
	for _, it := range items[last+1:] {
		output := it.Type == "function_call" || it.Type == "reasoning" ||
			(it.Role == "assistant" && (it.Type == "" || it.Type == "message"))
		if output && !inRun {
			conv.afterUser++
		}
		inRun = output
	}
	return conv
}

// roleMessage is a Chat Completions or Anthropic message.
type roleMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// chatConversation reads Chat Completions `messages`: the last role=user
// message, and the assistant messages after it.
func chatConversation(model string, msgs []roleMessage, size int) conversation {
	conv := conversation{model: model, inputSize: size}
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	if last >= 0 {
		conv.lastUser = contentText(msgs[last].Content)
		conv.images = imagesIn(APIChatCompletions, msgs[last].Content)
	}
	conv.afterUser = countRole(msgs[last+1:], "assistant")
	return conv
}

// anthropicConversation reads Messages `messages`: the last user message that
// holds text (a user turn of only tool_result blocks is the client returning
// tool output, not the person speaking), and the assistant messages after it.
func anthropicConversation(model string, msgs []roleMessage, size int) conversation {
	conv := conversation{model: model, inputSize: size}
	last := -1
	for i, m := range msgs {
		if m.Role == "user" && hasText(m.Content) {
			last = i
		}
	}
	if last >= 0 {
		conv.lastUser = contentText(msgs[last].Content)
		conv.images = imagesIn(APIMessages, msgs[last].Content)
	}
	conv.afterUser = countRole(msgs[last+1:], "assistant")
	return conv
}

func countRole(msgs []roleMessage, role string) int {
	n := 0
	for _, m := range msgs {
		if m.Role == role {
			n++
		}
	}
	return n
}

// textPart is a content part or block; only text-bearing ones matter here.
type textPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// contentText is the text of a content value: a string, or the text parts
// (input_text, output_text, text) of a part list, joined.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []textPart
	_ = json.Unmarshal(raw, &parts) // anything else holds no text
	var b strings.Builder
	for _, p := range parts {
		if p.Text != nil && (p.Type == "text" || p.Type == "input_text" || p.Type == "output_text") {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}

// hasText reports whether content is a string or holds a text part.
func hasText(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return true
	}
	var parts []textPart
	_ = json.Unmarshal(raw, &parts)
	for _, p := range parts {
		if p.Type == "text" && p.Text != nil {
			return true
		}
	}
	return false
}
