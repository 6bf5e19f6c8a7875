package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/traces"
)

// SIGKILL while a tool call is at its MCP server: after the restart the
// call is in the conversation — the model's call, its output saying the
// result is unknown, then the restart's note — and in the traces as a
// failed function span under its agent's; the run's ending is numbered
// past every event id a watcher was sent, and the run says how it failed.
func TestAToolCallCutOffByACrashIsRecordedWithAnUnknownOutcome(t *testing.T) {
	t.Parallel()
	calc := startCalc(t, "k")
	model, modelURL := startScripted(t)
	model.SetScript("hanger", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{Text: "Waiting on the server.", ToolCalls: []scripted.ToolCall{{Name: "calc__hang", Arguments: `{}`}}},
		{Text: "never reached"}}}}})
	dir := t.TempDir()
	p := startBinary(t, dir)
	_, prov, _ := p.call(t, "POST", "/api/v1/providers", map[string]any{"name": "m", "base_url": modelURL + "/v1", "api_key": "k"})
	code, srv, raw := p.call(t, "POST", "/api/v1/mcp-servers", map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"x-api-key": "k"}}})
	if code != 201 {
		t.Fatalf("mcp server: %d %s", code, raw)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, v, _ := p.call(t, "GET", "/api/v1/mcp-servers/"+srv["id"].(string), nil); v["status"] == "connected" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the MCP server stayed %v", v["status"])
		}
	}
	_, agent, raw := p.call(t, "POST", "/api/v1/agents", map[string]any{"name": "hanger", "model": "hanger", "provider_id": prov["id"],
		"tools": []string{"calc__hang"}})
	if agent["id"] == nil {
		t.Fatalf("agent: %s", raw)
	}
	_, sess, _ := p.call(t, "POST", "/api/v1/sessions", map[string]any{"agent_config_id": agent["id"], "name": "s"})
	sid := sess["id"].(string)
	code, run, raw := p.call(t, "POST", "/api/v1/sessions/"+sid+"/runs", map[string]any{"input": "wait on it"})
	if code != 201 {
		t.Fatalf("start: %d %s", code, raw)
	}
	runID := run["run_id"].(string)
	events := p.openSSE(t, runID, 0)
	read := make(chan sseEvent, 1024)
	go func() {
		defer close(read)
		for {
			ev, ok := events.next(t)
			if !ok {
				return
			}
			read <- ev
		}
	}()
	var seen int64
	for called := false; !called; {
		ev, ok := <-read
		if !ok {
			t.Fatal("the stream ended before the tool call")
		}
		seen, called = ev.ID, ev.Type == domain.EventToolCall
	}
	select {
	case <-calc.hanging: // the call reached its server
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the MCP server")
	}
	// Whatever the stream sent until it went quiet counts too.
	for quiet := false; !quiet; {
		select {
		case ev, ok := <-read:
			if !ok {
				t.Fatal("the stream ended while the call hung")
			}
			seen = max(seen, ev.ID)
		case <-time.After(500 * time.Millisecond):
			quiet = true
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(t)
	events.close()

	p2 := startBinary(t, dir)
	var view httpapi.RunView
	_, _, raw = p2.call(t, "GET", "/api/v1/runs/"+runID, nil)
	json.Unmarshal(raw, &view)
	if view.Status != "error" || view.Error == nil || view.Error.Code != domain.CodeServerRestarted || view.Error.Message == "" ||
		view.LastSeq <= seen {
		t.Fatalf("the run after the restart (ids up to %d were sent): %s", seen, raw)
	}
	// A fresh stream: a gap, then the error numbered past every id sent.
	got := p2.openSSE(t, runID, 0).all(t)
	if len(got) != 2 || got[0].Type != domain.EventGap || got[1].Type != domain.EventError || got[1].ID <= seen {
		t.Fatalf("from the start (ids up to %d were sent): %+v", seen, got)
	}
	if resumed := p2.openSSE(t, runID, seen).all(t); resumed[len(resumed)-1].ID != got[1].ID {
		t.Fatalf("resumed from %d: %+v", seen, resumed)
	}

	// The transcript: the call, its unknown outcome, then the note.
	_, _, raw = p2.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
	var msgs []httpapi.EntryView
	json.Unmarshal(raw, &msgs)
	var story []string
	for _, m := range msgs {
		it := domain.ParseItem(m.Item)
		switch {
		case it.Kind() == domain.ItemFunctionCall:
			story = append(story, "call "+it.Name)
		case it.Kind() == domain.ItemFunctionCallOutput:
			if m.Display == nil || !m.Display.IsError || !strings.Contains(it.OutputText(), "result is unknown") {
				t.Fatalf("the interrupted call's output: %s", raw)
			}
			story = append(story, "unknown")
		case it.Kind() == domain.ItemMessage:
			story = append(story, it.Role)
		case m.Kind == domain.KindAnnotation:
			story = append(story, "note")
		}
	}
	if strings.Join(story, ", ") != "user, assistant, call calc__hang, unknown, note" {
		t.Fatalf("the transcript after the restart: %v\n%s", story, raw)
	}
	// The traces: a failed function span under the agent's.
	_, _, raw = p2.call(t, "GET", "/api/v1/sessions/"+sid+"/traces?summary=true", nil)
	var spans []traces.SpanPayload
	json.Unmarshal(raw, &spans)
	agents := map[string]bool{}
	for _, sp := range spans {
		if sp.Kind == domain.SpanAgent {
			agents[sp.SpanID] = true
		}
	}
	var fn *traces.SpanPayload
	for i, sp := range spans {
		if sp.Kind == domain.SpanFunction {
			fn = &spans[i]
		}
	}
	if fn == nil || fn.Name != "calc__hang" || !strings.Contains(fn.Error, "result is unknown") || fn.Meta["outcome"] != "unknown" ||
		!agents[fn.ParentID] {
		t.Fatalf("the traces after the restart: %s", raw)
	}
	// A second restart records nothing twice.
	p2.cmd.Process.Signal(syscall.SIGTERM)
	p2.wait(t)
	p3 := startBinary(t, dir)
	_, _, again := p3.call(t, "GET", "/api/v1/sessions/"+sid+"/messages", nil)
	var after []httpapi.EntryView
	json.Unmarshal(again, &after)
	if len(after) != len(msgs) {
		t.Fatalf("a second restart changed the transcript: %d entries, then %d", len(msgs), len(after))
	}
}
