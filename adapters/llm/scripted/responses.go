package scripted

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// handleResponses serves POST /v1/responses: a Response object, or with
// "stream": true the Responses event stream (response.created …
// response.completed) the OpenAI SDK reads.
func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model   string          `json:"model"`
		Stream  bool            `json:"stream"`
		Input   json.RawMessage `json:"input"`
		Include []string        `json:"include"`
	}
	body, ok := s.readRequest(w, r, APIResponses, &req)
	if !ok {
		return
	}
	rep := s.resolve(responsesConversation(req.Model, req.Input, len(body)))
	if rep.failure != nil && !(req.Stream && rep.failure.MidStream) {
		writeFailure(w, APIResponses, *rep.failure)
		return
	}
	n := s.nextID()
	id := fmt.Sprintf("resp_scripted_%d", n)
	items := responseItems(n, rep, slices.Contains(req.Include, "reasoning.encrypted_content"))
	done := make([]any, len(items))
	for i, it := range items {
		done[i] = it.json(true)
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, responseObject(id, req.Model, "completed", done, &rep.usage))
		return
	}
	st := &responsesStream{sse: newSSE(w, r, rep.delayMS), stamp: rep.stamp}
	start := responseObject(id, req.Model, "in_progress", []any{}, nil)
	if st.emit("response.created", map[string]any{"response": start}) != nil ||
		st.emit("response.in_progress", map[string]any{"response": start}) != nil {
		return
	}
	for i, it := range items {
		if st.item(i, it, rep.chunkSize) != nil {
			return
		}
	}
	if rep.failure != nil {
		failed := responseObject(id, req.Model, "failed", []any{}, nil)
		failed["error"] = responsesFailure(*rep.failure)
		_ = st.emit("response.failed", map[string]any{"response": failed})
		return
	}
	_ = st.emit("response.completed", map[string]any{"response": responseObject(id, req.Model, "completed", done, &rep.usage)})
}

// responseItem is one output item of a reply.
type responseItem struct {
	kind      string // reasoning, message, function_call
	id        string
	text      string // reasoning summary or message text
	call      ToolCall
	encrypted string // a reasoning item's encrypted_content, when asked for
}

// responseItems lays a reply out as Responses output items. The ids carry
// OpenAI's prefixes (rs_, msg_, fc_) because clients key on them.
// With encrypted (the request's include asked for
// reasoning.encrypted_content, as a store:false client must) reasoning
// carries an opaque blob, as OpenAI's does.
func responseItems(n int, rep reply, encrypted bool) []responseItem {
	var items []responseItem
	if rep.reasoning != "" {
		it := responseItem{kind: "reasoning", id: fmt.Sprintf("rs_scripted_%d", n), text: rep.reasoning}
		if encrypted {
			it.encrypted = fmt.Sprintf("enc_scripted_%d", n)
		}
		items = append(items, it)
	}
	if rep.text != "" {
		items = append(items, responseItem{kind: "message", id: fmt.Sprintf("msg_scripted_%d", n), text: rep.text})
	}
	for i, tc := range rep.toolCalls {
		items = append(items, responseItem{kind: "function_call", id: fmt.Sprintf("fc_scripted_%d_%d", n, i), call: tc})
	}
	return items
}

// json renders the item as output_item.added (done false: empty, in
// progress) or output_item.done and the final response (done true).
func (it responseItem) json(done bool) map[string]any {
	status := "in_progress"
	if done {
		status = "completed"
	}
	switch it.kind {
	case "reasoning":
		summary := []any{}
		if done {
			summary = append(summary, map[string]any{"type": "summary_text", "text": it.text})
		}
		m := map[string]any{"id": it.id, "type": "reasoning", "summary": summary}
		if done && it.encrypted != "" {
			m["encrypted_content"] = it.encrypted
		}
		return m
	case "message":
		content := []any{}
		if done {
			content = append(content, outputText(it.text))
		}
		return map[string]any{"id": it.id, "type": "message", "status": status, "role": "assistant", "content": content}
	default:
		args := ""
		if done {
			args = it.call.Arguments
		}
		return map[string]any{"id": it.id, "type": "function_call", "status": status,
			"call_id": it.call.CallID, "name": it.call.Name, "arguments": args}
	}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

// responsesStream numbers the events of one streamed response.
type responsesStream struct {
	sse   *sseWriter
	seq   int
	stamp bool // text deltas carry their send time (Step.StampDeltas)
}

func (st *responsesStream) emit(typ string, fields map[string]any) error {
	fields["type"] = typ
	fields["sequence_number"] = st.seq
	st.seq++
	return st.sse.event(typ, fields)
}

// item streams one output item: added, its part and deltas, done.
func (st *responsesStream) item(idx int, it responseItem, size int) error {
	if err := st.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it.json(false)}); err != nil {
		return err
	}
	at := func(extra map[string]any) map[string]any {
		extra["item_id"], extra["output_index"] = it.id, idx
		return extra
	}
	var err error
	switch it.kind {
	case "reasoning":
		part := map[string]any{"type": "summary_text", "text": ""}
		err = firstErr(
			func() error {
				return st.emit("response.reasoning_summary_part.added", at(map[string]any{"summary_index": 0, "part": part}))
			},
			func() error {
				return st.sse.deltas(it.text, size, func(c string) error {
					return st.emit("response.reasoning_summary_text.delta", at(map[string]any{"summary_index": 0, "delta": c}))
				})
			},
			func() error {
				return st.emit("response.reasoning_summary_text.done", at(map[string]any{"summary_index": 0, "text": it.text}))
			},
			func() error {
				full := map[string]any{"type": "summary_text", "text": it.text}
				return st.emit("response.reasoning_summary_part.done", at(map[string]any{"summary_index": 0, "part": full}))
			})
	case "message":
		empty := outputText("")
		err = firstErr(
			func() error {
				return st.emit("response.content_part.added", at(map[string]any{"content_index": 0, "part": empty}))
			},
			func() error {
				return st.sse.deltas(it.text, size, func(c string) error {
					if st.stamp {
						c = strconv.FormatInt(time.Now().UnixNano(), 10) + " "
					}
					return st.emit("response.output_text.delta", at(map[string]any{"content_index": 0, "delta": c, "logprobs": []any{}}))
				})
			},
			func() error {
				return st.emit("response.output_text.done", at(map[string]any{"content_index": 0, "text": it.text, "logprobs": []any{}}))
			},
			func() error {
				return st.emit("response.content_part.done", at(map[string]any{"content_index": 0, "part": outputText(it.text)}))
			})
	default:
		err = firstErr(
			func() error {
				return st.sse.deltas(it.call.Arguments, size, func(c string) error {
					return st.emit("response.function_call_arguments.delta", at(map[string]any{"delta": c}))
				})
			},
			func() error {
				return st.emit("response.function_call_arguments.done", at(map[string]any{"name": it.call.Name, "arguments": it.call.Arguments}))
			})
	}
	if err != nil {
		return err
	}
	return st.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it.json(true)})
}

// responseObject is a Response: status, output and (when known) usage in
// OpenAI's shape, with the cache and reasoning details.
func responseObject(id, model, status string, output []any, u *Usage) map[string]any {
	obj := map[string]any{
		"id": id, "object": "response", "created_at": time.Now().Unix(), "status": status, "model": model,
		"output": output, "error": nil, "incomplete_details": nil, "instructions": nil, "metadata": map[string]any{},
		"parallel_tool_calls": true, "temperature": 1.0, "tool_choice": "auto", "tools": []any{}, "top_p": 1.0,
		"usage": nil,
	}
	if u != nil {
		obj["usage"] = map[string]any{
			"input_tokens":          u.InputTokens,
			"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens, "cache_write_tokens": u.CacheWriteTokens},
			"output_tokens":         u.OutputTokens,
			"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
			"total_tokens":          u.InputTokens + u.OutputTokens,
		}
	}
	return obj
}

// firstErr runs steps in order until one fails.
func firstErr(steps ...func() error) error {
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}
