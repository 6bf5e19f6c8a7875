package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/internal/workbenchparts"
)

func (h *harness) traces(token, sessionID, query string) []traces.SpanPayload {
	h.t.Helper()
	var out []traces.SpanPayload
	h.call("GET", "/api/v1/sessions/"+sessionID+"/traces"+query, token, nil).want(h.t, 200).decode(h.t, &out)
	return out
}

func TestTracesSummaryWholeSpansAndLiveEvents(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("tracer", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "todo_write", Arguments: `{"todos":[{"content":"secret-plan","status":"pending"}]}`}}},
		{Text: "done with secret-answer"},
	}}}})
	h := startServer(t, testConfig(t))
	tok := h.member("tr")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "tracer", "model": "tracer",
		"instructions": "secret-instructions"})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "n"})
	_, events := h.runEvents(tok, s.ID, map[string]any{"input": "secret-question"})
	live := 0
	for _, ev := range events {
		if ev.Type == domain.EventTraceSpan {
			live++
		}
	}
	whole := h.traces(tok, s.ID, "")
	kinds := map[string]int{}
	for _, sp := range whole {
		kinds[sp.Kind]++
	}
	if kinds["agent"] != 1 || kinds["generation"] != 2 || kinds["function"] != 1 || live != len(whole) {
		t.Fatalf("spans %v, %d live of %d", kinds, live, len(whole))
	}
	var gen traces.SpanPayload
	for _, sp := range whole {
		if sp.Kind == domain.SpanGeneration {
			gen = sp
		}
	}
	var data map[string]json.RawMessage
	json.Unmarshal(gen.Data, &data)
	for _, k := range []string{"model", "system_instructions", "input", "tools", "model_settings", "output", "usage"} {
		if len(data[k]) == 0 {
			t.Errorf("generation span lacks %s", k)
		}
	}
	if !strings.Contains(string(data["system_instructions"]), "secret-instructions") || gen.ParentID == "" || gen.TraceID == "" {
		t.Fatalf("generation span = %+v", gen)
	}
	// Every payload is snake_case JSON, the tools included.
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(data["tools"], &tools); err != nil || len(tools) == 0 {
		t.Fatalf("tools = %s (%v)", data["tools"], err)
	}
	for _, tool := range tools {
		if len(tool["name"]) == 0 || len(tool["description"]) == 0 || len(tool["parameters"]) == 0 || len(tool) != 3 {
			t.Fatalf("a tool is stored as %s, want {name, description, parameters}", data["tools"])
		}
	}
	// The summary leaves payloads out and says so; one span comes whole.
	summary := h.traces(tok, s.ID, "?summary=true")
	if len(summary) != len(whole) {
		t.Fatalf("summary has %d spans, whole %d", len(summary), len(whole))
	}
	for _, sp := range summary {
		if sp.Data != nil || (sp.DataBytes > 0 && !sp.PayloadOmitted) {
			t.Fatalf("summary span carries its payload: %+v", sp)
		}
	}
	// Pages walk back from the newest with before_id, adding up to the whole.
	newest := h.traces(tok, s.ID, "?limit=2")
	older := h.traces(tok, s.ID, "?summary=true&limit=10&before_id="+newest[0].SpanID)
	if len(newest) != 2 || len(older) != len(whole)-2 || newest[1].SpanID != whole[len(whole)-1].SpanID ||
		older[0].SpanID != whole[0].SpanID || string(newest[1].Data) != string(whole[len(whole)-1].Data) {
		t.Fatalf("pages %d + %d of %d spans", len(newest), len(older), len(whole))
	}
	for _, bad := range []string{"?limit=0", "?limit=1001", "?limit=x", "?limit=2&before_id=nope"} {
		h.call("GET", "/api/v1/sessions/"+s.ID+"/traces"+bad, tok, nil).wantErr(t, 400, "validation")
	}
	var one traces.SpanPayload
	h.call("GET", "/api/v1/sessions/"+s.ID+"/traces/"+gen.SpanID, tok, nil).want(t, 200).decode(t, &one)
	if string(one.Data) != string(gen.Data) {
		t.Fatal("the single span differs from the listing")
	}
	h.call("GET", "/api/v1/sessions/"+s.ID+"/traces/nope", tok, nil).wantErr(t, 404, "not_found")
	h.call("GET", "/api/v1/sessions/"+s.ID+"/traces", h.member("other"), nil).wantErr(t, 404, "not_found")

	// The playground replays the span against its provider, as is or edited.
	var pg httpapi.PlaygroundResult
	h.call("POST", "/api/v1/playground/generate", tok, map[string]any{"span_id": gen.SpanID}).want(t, 200).decode(t, &pg)
	if pg.Text != "done with secret-answer" || len(pg.Output) == 0 {
		t.Fatalf("replay = %+v", pg)
	}
	var replayed struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(modelCalls(model)[len(modelCalls(model))-1].Body, &replayed)
	if len(replayed.Tools) != len(tools) {
		t.Fatalf("the replay offered %d tools, the span %d", len(replayed.Tools), len(tools))
	}
	h.call("POST", "/api/v1/playground/generate", tok, map[string]any{"span_id": gen.SpanID,
		"input": []any{json.RawMessage(`{"type":"message","role":"user","content":[{"type":"input_text","text":"fresh start"}]}`)}}).
		want(t, 200).decode(t, &pg)
	if len(pg.Output) == 0 || !strings.Contains(string(modelCalls(model)[len(modelCalls(model))-1].Body), "fresh start") {
		t.Fatalf("edited replay = %+v", pg)
	}
	// Each replay is a call charged to the person who made it, in the
	// replayed conversation.
	replays := 0
	for _, c := range h.usageCalls(tok, "/usage/me/export") {
		if c["kind"] == "playground" && c["session_id"] == s.ID {
			replays++
		}
	}
	if replays != 2 {
		t.Errorf("%d playground calls recorded, want 2", replays)
	}
	var fn traces.SpanPayload
	for _, sp := range whole {
		if sp.Kind == domain.SpanFunction {
			fn = sp
		}
	}
	h.call("POST", "/api/v1/playground/generate", tok, map[string]any{"span_id": fn.SpanID}).wantErr(t, 400, "validation")
	// An edited tool must have a name the model APIs accept.
	d := h.call("POST", "/api/v1/playground/generate", tok, map[string]any{"span_id": gen.SpanID,
		"tools": []any{map[string]any{"description": "nameless"}}}).wantErr(t, 400, "validation")
	if _, ok := d.Fields["tools[0].name"]; !ok {
		t.Fatalf("fields = %v", d.Fields)
	}
	// Edited settings obey the bounds an agent's do.
	d = h.call("POST", "/api/v1/playground/generate", tok, map[string]any{"span_id": gen.SpanID,
		"model_settings": map[string]any{"temperature": 7}}).wantErr(t, 400, "validation")
	if _, ok := d.Fields["model_settings.temperature"]; !ok {
		t.Fatalf("fields = %v", d.Fields)
	}
	h.call("POST", "/api/v1/playground/generate", h.member("nosy"), map[string]any{"span_id": gen.SpanID}).wantErr(t, 400, "validation")

	// A fork carries the traces of the runs it copied.
	var fork httpapi.SessionView
	h.call("POST", "/api/v1/sessions/"+s.ID+"/fork", tok, nil).want(t, 201).decode(t, &fork)
	if got := h.traces(tok, fork.ID, "?summary=true"); len(got) != len(whole) || got[0].SpanID == whole[0].SpanID {
		t.Fatalf("fork has %d spans", len(got))
	}
}

func TestTracesTruncateAndLeaveSensitiveDataOut(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("big", oneStep(scripted.Step{Text: strings.Repeat("sensitive-output ", 200)}))
	h := startServer(t, testConfig(t))
	tok := h.member("trunc")
	agent := h.agentOn(tok, protocols(url)["openai-chat"], map[string]any{"name": "big", "model": "big"})
	put := func(key, value string) {
		h.call("PUT", "/api/v1/settings/"+key, h.admin, map[string]string{"value": value}).want(t, 200)
	}
	put("trace_span_data_kb", "1")
	s := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "n"})
	h.runEvents(tok, s.ID, map[string]any{"input": strings.Repeat("long question ", 100)})
	for _, sp := range h.traces(tok, s.ID, "") {
		if sp.Kind == domain.SpanGeneration {
			var marker map[string]any
			json.Unmarshal(sp.Data, &marker)
			if marker["truncated"] != true || sp.DataBytes > 1024 {
				t.Fatalf("over the budget, the payload was kept: %d bytes %s", sp.DataBytes, sp.Data)
			}
		}
	}
	put("trace_span_data_kb", "")
	put("trace_include_sensitive_data", "false")
	s2 := h.createSession(tok, map[string]any{"agent_config_id": agent, "name": "n"})
	h.runEvents(tok, s2.ID, map[string]any{"input": "sensitive-question"})
	for _, sp := range h.traces(tok, s2.ID, "") {
		if strings.Contains(string(sp.Data), "sensitive-") {
			t.Fatalf("a %s span kept conversation content: %s", sp.Kind, sp.Data)
		}
		if sp.Kind == domain.SpanGeneration && !strings.Contains(string(sp.Data), `"model"`) {
			t.Fatalf("the generation span lost its non-sensitive fields: %s", sp.Data)
		}
	}
}

func TestOldTracesArePrunedByTheRetentionLoop(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	h := startServer(t, cfg)
	tok := h.member("old")
	s := h.createSession(tok, map[string]any{"name": "n"})
	now := time.Now()
	for i, age := range []time.Duration{40 * 24 * time.Hour, time.Hour} {
		sp := domain.Span{ID: fmt.Sprintf("span-%d", i), SessionID: s.ID, RunID: "r", Kind: domain.SpanAgent,
			StartedAt: now.Add(-age), EndedAt: now.Add(-age), Data: json.RawMessage(`{"x":1}`)}
		if err := workbenchparts.Of(h.app.wb).DB.SaveSpan(context.Background(), sp); err != nil {
			t.Fatal(err)
		}
	}
	h.stop()
	h2 := startServer(t, cfg) // the upkeep runs at start, then hourly
	waitFor(t, func() bool { return len(h2.traces(tok, s.ID, "?summary=true")) == 1 })
	if got := h2.traces(tok, s.ID, "?summary=true"); got[0].SpanID != "span-1" {
		t.Fatalf("kept %+v", got)
	}
}
