//go:build unix

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
	"github.com/agents-server/agents-server/core/domain"
)

// TestMCPReferenceServer runs the workbench against the real reference
// server (@modelcontextprotocol/server-everything over streamable HTTP):
// it connects, its tools appear, a run calls echo and get-sum and the
// model reads their results, disabling drops the connection and refuses
// connect, a restarted workbench reconnects by itself, and a server killed
// mid-call fails the call with a clear error its status shows too.
func TestMCPReferenceServer(t *testing.T) {
	t.Parallel()
	everything := mcptest.Everything(t)
	model, url := startScripted(t)
	model.SetScript("ref", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "long", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "everything__trigger-long-running-operation", Arguments: `{"duration":60,"steps":60}`}}},
			{Text: "it broke"},
		}},
		{Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{
				{Name: "everything__echo", Arguments: `{"message":"hello from the workbench"}`},
				{Name: "everything__get-sum", Arguments: `{"a":2,"b":40}`},
			}},
			{Text: "the sum is 42"},
		}},
	}})
	cfg := testConfig(t)
	h := startServer(t, cfg)
	tok := h.member("eve")
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "everything", "config": map[string]any{"endpoint": everything.URL}}).
		want(t, 201).decode(t, &srv)
	v := h.waitMCP(tok, srv.ID, "connected")
	got := map[string]httpapi.MCPToolView{}
	for _, tool := range v.Tools {
		got[tool.Name] = tool
	}
	sum, ok := got["everything__get-sum"]
	if _, echo := got["everything__echo"]; !echo || !ok || sum.Annotations.ReadOnly == nil || !*sum.Annotations.ReadOnly {
		t.Fatalf("tools = %+v", v.Tools)
	}

	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	agent := h.createAgent(tok, map[string]any{"name": "ref", "model": "ref", "provider_id": prov.ID,
		"tools": []string{"everything__echo", "everything__get-sum", "everything__trigger-long-running-operation"}})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	events := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "echo and add"}), 0).all(t)
	outputs := map[string]string{}
	calls := map[string]string{}
	for _, ev := range events {
		switch ev.Type {
		case domain.EventToolCall:
			p := payload[domain.ToolCallPayload](t, ev.Event)
			calls[p.ToolCallID] = p.ToolName
		case domain.EventToolResult:
			p := payload[domain.ToolResultPayload](t, ev.Event)
			if p.IsError {
				t.Fatalf("%s failed: %s", calls[p.ToolCallID], p.Output)
			}
			outputs[calls[p.ToolCallID]] = p.Output
		}
	}
	if !strings.Contains(outputs["everything__echo"], "hello from the workbench") || !strings.Contains(outputs["everything__get-sum"], "42") {
		t.Fatalf("results = %v", outputs)
	}
	reqs := modelCalls(model)
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "hello from the workbench") || !strings.Contains(last, "42") || !strings.Contains(last, "function_call_output") {
		t.Fatalf("the model did not read both results: %s", last)
	}

	// Disabling drops the connection and refuses connect.
	h.call("PUT", "/api/v1/mcp-servers/"+srv.ID, tok, map[string]any{"name": "everything", "enabled": false,
		"config": map[string]any{"endpoint": everything.URL}}).want(t, 200)
	if v := h.mcpServer(tok, srv.ID); v.Status != "disabled" || len(v.Tools) != 0 {
		t.Fatalf("after disabling: %+v", v)
	}
	h.call("POST", "/api/v1/mcp-servers/"+srv.ID+"/connect", tok, nil).wantErr(t, 409, "conflict")
	h.call("PUT", "/api/v1/mcp-servers/"+srv.ID, tok, map[string]any{"name": "everything", "enabled": true,
		"config": map[string]any{"endpoint": everything.URL}}).want(t, 200)
	h.waitMCP(tok, srv.ID, "connected")

	// A restarted workbench reconnects by itself.
	h.stop()
	h = startServer(t, cfg)
	h.waitMCP(tok, srv.ID, "connected")

	// The server killed mid-call: the call fails clearly, the status says so.
	stream := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "a long one"}), 0)
	for {
		ev, ok := stream.next(t)
		if !ok {
			t.Fatal("the stream ended before the long call started")
		}
		if ev.Type == domain.EventToolCall {
			break
		}
	}
	time.Sleep(300 * time.Millisecond) // let the request reach the server
	everything.Stop()
	var result domain.ToolResultPayload
	for _, ev := range stream.all(t) {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if !result.IsError || !strings.Contains(result.Output, "everything") {
		t.Fatalf("the killed call: %+v", result)
	}
	if v := h.mcpServer(tok, srv.ID); v.Status == "connected" || v.LastError == "" {
		t.Fatalf("status after the kill = %s (%q)", v.Status, v.LastError)
	}
}
