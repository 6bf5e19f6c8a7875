package scripted

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// handleMessages serves POST /v1/messages: a Message, or with "stream": true
// the Anthropic event stream (message_start, content blocks, message_delta,
// message_stop) the Anthropic SDK reads.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string        `json:"model"`
		Stream   bool          `json:"stream"`
		Messages []roleMessage `json:"messages"`
	}
	body, ok := s.readRequest(w, r, APIMessages, &req)
	if !ok {
		return
	}
	rep := s.resolve(anthropicConversation(req.Model, req.Messages, len(body)))
	if rep.failure != nil && !(req.Stream && rep.failure.MidStream) {
		writeFailure(w, APIMessages, *rep.failure)
		return
	}
	m := anthropicMessage{id: fmt.Sprintf("msg_scripted_%d", s.nextID()), model: req.Model, rep: rep}
	if !req.Stream {
		writeJSON(w, http.StatusOK, m.whole())
		return
	}
	m.stream(newSSE(w, r, rep.delayMS))
}

type anthropicMessage struct {
	id, model string
	rep       reply
}

// signature stands in for Anthropic's opaque thinking signature: stable for
// the same thinking, so a client that echoes it back can be checked.
func signature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func (m anthropicMessage) stopReason() string {
	if len(m.rep.toolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

func (m anthropicMessage) usage(outputTokens int) map[string]any {
	u := m.rep.usage
	return map[string]any{
		"input_tokens": u.InputTokens, "output_tokens": outputTokens,
		"cache_read_input_tokens": u.CachedTokens, "cache_creation_input_tokens": u.CacheWriteTokens,
	}
}

// blocks are the finished content blocks: thinking, text, tool_use.
func (m anthropicMessage) blocks() []map[string]any {
	var out []map[string]any
	if m.rep.reasoning != "" {
		out = append(out, map[string]any{"type": "thinking", "thinking": m.rep.reasoning, "signature": signature(m.rep.reasoning)})
	}
	if m.rep.text != "" {
		out = append(out, map[string]any{"type": "text", "text": m.rep.text})
	}
	for _, tc := range m.rep.toolCalls {
		input := json.RawMessage(tc.Arguments)
		if !json.Valid(input) {
			// tool_use input must be a JSON object; keep a malformed script's text visible instead
			input, _ = json.Marshal(map[string]string{"arguments": tc.Arguments})
		}
		out = append(out, map[string]any{"type": "tool_use", "id": tc.CallID, "name": tc.Name, "input": input})
	}
	return out
}

func (m anthropicMessage) envelope(content []map[string]any, stop any, u map[string]any) map[string]any {
	if content == nil {
		content = []map[string]any{}
	}
	return map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": u,
	}
}

func (m anthropicMessage) whole() map[string]any {
	return m.envelope(m.blocks(), m.stopReason(), m.usage(m.rep.usage.OutputTokens))
}

func (m anthropicMessage) stream(sse *sseWriter) {
	size := m.rep.chunkSize
	ev := func(typ string, fields map[string]any) func() error {
		return func() error {
			fields["type"] = typ
			return sse.event(typ, fields)
		}
	}
	delta := func(i int, d map[string]any) error {
		return sse.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
	}
	steps := []func() error{
		ev("message_start", map[string]any{"message": m.envelope(nil, nil, m.usage(1))}),
		ev("ping", map[string]any{}),
	}
	for i, b := range m.blocks() {
		start := map[string]any{"type": b["type"]}
		var body func() error
		switch b["type"] {
		case "thinking":
			start["thinking"], start["signature"] = "", ""
			body = func() error {
				return firstErr(
					func() error {
						return sse.deltas(m.rep.reasoning, size, func(c string) error {
							return delta(i, map[string]any{"type": "thinking_delta", "thinking": c})
						})
					},
					func() error { return delta(i, map[string]any{"type": "signature_delta", "signature": b["signature"]}) })
			}
		case "text":
			start["text"] = ""
			body = func() error {
				return sse.deltas(m.rep.text, size, func(c string) error {
					return delta(i, map[string]any{"type": "text_delta", "text": c})
				})
			}
		default:
			start["id"], start["name"], start["input"] = b["id"], b["name"], map[string]any{}
			args := string(b["input"].(json.RawMessage))
			body = func() error {
				return sse.deltas(args, size, func(c string) error {
					return delta(i, map[string]any{"type": "input_json_delta", "partial_json": c})
				})
			}
		}
		steps = append(steps, ev("content_block_start", map[string]any{"index": i, "content_block": start}), body,
			ev("content_block_stop", map[string]any{"index": i}))
	}
	if m.rep.failure != nil {
		// Anthropic reports a failure after the stream began (overloaded,
		// most often) as an error event holding its error body
		_, body := failureBody(APIMessages, *m.rep.failure)
		_ = firstErr(append(steps, func() error { return sse.event("error", body) })...)
		return
	}
	steps = append(steps,
		ev("message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": m.stopReason(), "stop_sequence": nil},
			"usage": m.usage(m.rep.usage.OutputTokens),
		}),
		ev("message_stop", map[string]any{}))
	_ = firstErr(steps...)
}
