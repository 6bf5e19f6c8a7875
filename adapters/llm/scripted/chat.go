package scripted

import (
	"fmt"
	"net/http"
	"time"
)

// handleChat serves POST /v1/chat/completions: a chat.completion, or with
// "stream": true chat.completion.chunk data lines ending in [DONE], plus a
// usage-only chunk when stream_options.include_usage asks for it.
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model         string        `json:"model"`
		Stream        bool          `json:"stream"`
		Messages      []roleMessage `json:"messages"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	body, ok := s.readRequest(w, r, APIChatCompletions, &req)
	if !ok {
		return
	}
	rep := s.resolve(chatConversation(req.Model, req.Messages, len(body)))
	if rep.failure != nil && !(req.Stream && rep.failure.MidStream) {
		writeFailure(w, APIChatCompletions, *rep.failure)
		return
	}
	c := chatCompletion{id: fmt.Sprintf("chatcmpl-scripted-%d", s.nextID()), model: req.Model, created: time.Now().Unix(), rep: rep}
	if !req.Stream {
		writeJSON(w, http.StatusOK, c.whole())
		return
	}
	c.stream(newSSE(w, r, rep.delayMS), req.StreamOptions.IncludeUsage)
}

type chatCompletion struct {
	id, model string
	created   int64
	rep       reply
}

// finishReason is "tool_calls" when the reply calls tools, as OpenAI reports.
func (c chatCompletion) finishReason() string {
	if len(c.rep.toolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (c chatCompletion) usage() map[string]any {
	u := c.rep.usage
	return map[string]any{
		"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.InputTokens + u.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens, "cache_write_tokens": u.CacheWriteTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
	}
}

// whole is the non-streamed chat.completion. Reasoning travels as
// "reasoning_content", the field OpenAI-compatible servers use for it.
func (c chatCompletion) whole() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if c.rep.text != "" {
		msg["content"] = c.rep.text
	}
	if c.rep.reasoning != "" {
		msg["reasoning_content"] = c.rep.reasoning
	}
	if len(c.rep.toolCalls) > 0 {
		calls := make([]any, len(c.rep.toolCalls))
		for i, tc := range c.rep.toolCalls {
			calls[i] = map[string]any{"id": tc.CallID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": c.id, "object": "chat.completion", "created": c.created, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": c.finishReason(), "logprobs": nil}},
		"usage":   c.usage(),
	}
}

// chunk is one chat.completion.chunk with a single choice delta; with
// include_usage every chunk carries "usage": null until the last one.
func (c chatCompletion) chunk(delta map[string]any, finish any, withUsage bool) map[string]any {
	ch := map[string]any{
		"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
	}
	if withUsage {
		ch["usage"] = nil
	}
	return ch
}

func (c chatCompletion) stream(sse *sseWriter, withUsage bool) {
	send := func(delta map[string]any) error { return sse.event("", c.chunk(delta, nil, withUsage)) }
	size := c.rep.chunkSize
	steps := []func() error{
		func() error { return send(map[string]any{"role": "assistant", "content": "", "refusal": nil}) },
		func() error {
			return sse.deltas(c.rep.reasoning, size, func(t string) error { return send(map[string]any{"reasoning_content": t}) })
		},
		func() error {
			return sse.deltas(c.rep.text, size, func(t string) error { return send(map[string]any{"content": t}) })
		},
	}
	for i, tc := range c.rep.toolCalls {
		steps = append(steps,
			func() error {
				return send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": tc.CallID, "type": "function",
					"function": map[string]any{"name": tc.Name, "arguments": ""}}}})
			},
			func() error {
				return sse.deltas(tc.Arguments, size, func(t string) error {
					return send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": t}}}})
				})
			})
	}
	if c.rep.failure != nil {
		// OpenAI reports a failure after the stream began as a data line
		// holding its error body, and sends no [DONE]
		_, body := failureBody(APIChatCompletions, *c.rep.failure)
		_ = firstErr(append(steps, func() error { return sse.event("", body) })...)
		return
	}
	steps = append(steps, func() error { return sse.event("", c.chunk(map[string]any{}, c.finishReason(), withUsage)) })
	if withUsage {
		steps = append(steps, func() error {
			return sse.event("", map[string]any{"id": c.id, "object": "chat.completion.chunk", "created": c.created,
				"model": c.model, "choices": []any{}, "usage": c.usage()})
		})
	}
	if firstErr(steps...) == nil {
		_ = sse.raw("[DONE]")
	}
}
