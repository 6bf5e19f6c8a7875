package chatgptdouble

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// models the backend serves; any other is refused as the real one does.
var models = []string{"gpt-5-codex", "gpt-5"}

// topLevel are the only request fields the backend takes: what the Codex
// CLI sends. Any other (max_output_tokens, temperature, top_p, prompt,
// previous_response_id, metadata, …) is refused as an unsupported
// parameter, as the real backend does.
var topLevel = []string{"model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls",
	"reasoning", "store", "stream", "include", "prompt_cache_key", "text"}

// itemFields are the fields each input item type may carry with store
// false: no id anywhere.
var itemFields = map[string][]string{
	"message":              {"type", "role", "content"},
	"function_call":        {"type", "call_id", "name", "arguments"},
	"function_call_output": {"type", "call_id", "output"},
	"reasoning":            {"type", "summary", "content", "encrypted_content"},
}

// responses is the Codex backend's one endpoint: the request checked as
// the real backend checks it, then a streamed answer — reasoning (with an
// encrypted content only this double can verify), then text, or a call of
// the first tool offered when the person asked to "use the tool".
func (d *Double) responses(w http.ResponseWriter, r *http.Request) {
	if !d.authorized(w, r) {
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		d.refuse(w, nil, "We could not parse the JSON body of your request.")
		return
	}
	if msg := d.check(body); msg != "" {
		d.refuse(w, body, msg)
		return
	}
	d.mu.Lock()
	n := d.next()
	enc := fmt.Sprintf("dbl_enc_%d_%s", n, random())
	d.reasoning[enc] = true
	key, _ := body["prompt_cache_key"].(string)
	d.requests = append(d.requests, Request{Body: body, Status: http.StatusOK, PromptCacheKey: key})
	d.mu.Unlock()
	items := []map[string]any{{"id": fmt.Sprintf("rs_codex_%d", n), "type": "reasoning",
		"summary": []any{map[string]any{"type": "summary_text", "text": "Thinking about it."}}, "encrypted_content": enc}}
	input, _ := body["input"].([]any)
	var last map[string]any
	if len(input) > 0 {
		last, _ = input[len(input)-1].(map[string]any)
	}
	tools, _ := body["tools"].([]any)
	switch {
	case last["type"] == "function_call_output":
		items = append(items, message(n, "Tool said: "+fmt.Sprint(last["output"])))
	case strings.Contains(strings.ToLower(text(last)), "use the tool") && len(tools) > 0:
		name := fmt.Sprint(tools[0].(map[string]any)["name"])
		items = append(items, map[string]any{"id": fmt.Sprintf("fc_codex_%d", n), "type": "function_call", "status": "completed",
			"call_id": fmt.Sprintf("call_codex_%d", n), "name": name, "arguments": "{}"})
	default:
		items = append(items, message(n, "Codex heard: "+text(last)))
	}
	d.stream(w, fmt.Sprintf("resp_codex_%d", n), fmt.Sprint(body["model"]), items)
}

// check is the backend's refusal of a request, "" when it takes it.
func (d *Double) check(body map[string]any) string {
	fields := slices.Sorted(maps.Keys(body)) // the same first refusal every time
	for _, k := range fields {
		if !slices.Contains(topLevel, k) {
			return "Unsupported parameter: " + k
		}
	}
	if body["stream"] != true {
		return "Stream must be set to true"
	}
	if body["store"] != false {
		return "Store must be set to false"
	}
	if s, _ := body["instructions"].(string); s == "" {
		return "Instructions are required"
	}
	if m := fmt.Sprint(body["model"]); !slices.Contains(models, m) {
		return fmt.Sprintf("The '%s' model is not supported when using Codex with a ChatGPT account.", m)
	}
	input, ok := body["input"].([]any)
	if !ok {
		return "Input must be a list"
	}
	for i, raw := range input {
		it, _ := raw.(map[string]any)
		typ, _ := it["type"].(string)
		if typ == "" && it["role"] != nil {
			typ = "message" // the easy form the Responses API also takes
		}
		fields, known := itemFields[typ]
		if !known {
			return fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'function_call', 'function_call_output' and 'reasoning'.", typ)
		}
		if id, ok := it["id"]; ok {
			return fmt.Sprintf("Item with id '%v' not found. Items are not persisted when `store` is set to false. "+
				"Try again with `store` set to true, or remove this item from your input.", id)
		}
		for k := range it {
			if !slices.Contains(fields, k) {
				return fmt.Sprintf("Unknown parameter: 'input[%d].%s'.", i, k)
			}
		}
		if typ != "reasoning" {
			continue
		}
		if content, _ := it["content"].([]any); len(content) > 0 {
			return fmt.Sprintf("Invalid 'input[%d].content': array too long. Expected an array with maximum length 0, but got an array with length %d instead.", i, len(content))
		}
		enc, _ := it["encrypted_content"].(string)
		d.mu.Lock()
		ours := d.reasoning[enc]
		d.mu.Unlock()
		if !ours {
			return fmt.Sprintf("The encrypted content for item input[%d] could not be verified.", i)
		}
	}
	return ""
}

func (d *Double) refuse(w http.ResponseWriter, body map[string]any, msg string) {
	key, _ := body["prompt_cache_key"].(string)
	d.mu.Lock()
	d.requests = append(d.requests, Request{Body: body, Status: http.StatusBadRequest, Error: msg, PromptCacheKey: key})
	d.mu.Unlock()
	writeJSON(w, http.StatusBadRequest, map[string]any{"detail": msg})
}

func message(n int, s string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("msg_codex_%d", n), "type": "message", "status": "completed", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": s, "annotations": []any{}}}}
}

// text is a message item's text, its content a string or parts.
func text(it map[string]any) string {
	switch c := it["content"].(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// stream writes the Responses event stream of a completed answer.
func (d *Double) stream(w http.ResponseWriter, id, model string, items []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	response := func(status string, output []map[string]any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "model": model, "status": status, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": 12, "output_tokens": 7, "total_tokens": 19,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 3}}
		}
		return r
	}
	emit("response.created", map[string]any{"response": response("in_progress", []map[string]any{})})
	for i, it := range items {
		emit("response.output_item.added", map[string]any{"output_index": i, "item": it})
		switch it["type"] {
		case "message":
			s := it["content"].([]any)[0].(map[string]any)["text"].(string)
			for _, chunk := range strings.SplitAfter(s, " ") {
				emit("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": chunk})
			}
		case "function_call":
			emit("response.function_call_arguments.delta", map[string]any{"item_id": it["id"], "output_index": i, "delta": it["arguments"]})
		}
		emit("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	emit("response.completed", map[string]any{"response": response("completed", items)})
}
