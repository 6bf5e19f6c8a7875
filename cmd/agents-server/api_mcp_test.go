package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/core/domain"
)

// calcServer is an in-process MCP server (the official SDK's) over
// streamable HTTP for edge cases: it wants an API key header, offers add
// (read-only by its own claim), chart (an image) and hang (blocks until
// the test lets go), and can be cut off mid-call.
type calcServer struct {
	*httptest.Server
	hanging chan struct{} // a hang call has started
	release chan struct{} // closes to let hang calls answer
	mu      sync.Mutex
	calls   []string
}

func startCalc(t *testing.T, key string) *calcServer {
	t.Helper()
	cs := &calcServer{hanging: make(chan struct{}, 8), release: make(chan struct{})}
	srv := sdk.NewServer(&sdk.Implementation{Name: "calc", Version: "1"}, nil)
	type addArgs struct {
		A int `json:"a" jsonschema:"the first addend"`
		B int `json:"b" jsonschema:"the second addend"`
	}
	type sum struct {
		Sum int `json:"sum"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "Adds two integers", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, in addArgs) (*sdk.CallToolResult, sum, error) {
			cs.note("add")
			return nil, sum{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "chart", Description: "Draws a chart"},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			cs.note("chart")
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a tiny chart"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG fake")}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "Waits"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			cs.note("hang")
			cs.hanging <- struct{}{}
			select {
			case <-cs.release:
			case <-ctx.Done():
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done waiting"}}}, nil, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, "missing or wrong X-Api-Key", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		select {
		case <-cs.release:
		default:
			close(cs.release)
		}
		cs.Server.CloseClientConnections()
		cs.Server.Close()
	})
	return cs
}

func (c *calcServer) note(tool string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, tool)
}

// mcpServer reads one MCP server row.
func (h *harness) mcpServer(token, id string) httpapi.MCPServerView {
	h.t.Helper()
	var v httpapi.MCPServerView
	h.call("GET", "/api/v1/mcp-servers/"+id, token, nil).want(h.t, 200).decode(h.t, &v)
	return v
}

// waitMCP polls a server until its status is want (as the UI does).
func (h *harness) waitMCP(token, id, want string) httpapi.MCPServerView {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := h.mcpServer(token, id)
		if v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("MCP server %s stayed %s (last error %q), want %s", v.Name, v.Status, v.LastError, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mcpBucket is one server's line of the context report's prompt.mcp.
type mcpBucket struct {
	Server      string `json:"server"`
	Chars       int    `json:"chars"`
	Unavailable bool   `json:"unavailable"`
}

// contextMCP reads the session's context report's MCP lines.
func (h *harness) contextMCP(token, sessionID string) []mcpBucket {
	h.t.Helper()
	var rep struct {
		Prompt struct {
			MCP []mcpBucket `json:"mcp"`
		} `json:"prompt"`
	}
	h.call("GET", "/api/v1/sessions/"+sessionID+"/context", token, nil).want(h.t, 200).decode(h.t, &rep)
	return rep.Prompt.MCP
}

func TestMCPServerToolsInARun(t *testing.T) {
	t.Parallel()
	calc := startCalc(t, "s3cret")
	model, url := startScripted(t)
	model.SetScript("mcp-user", scripted.Script{Exchanges: []scripted.Exchange{
		{When: "add", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "calc__add", Arguments: `{"a":2,"b":3}`}}},
			{Text: "2 + 3 = 5"},
		}},
		{When: "chart", Steps: []scripted.Step{
			{ToolCalls: []scripted.ToolCall{{Name: "calc__chart", Arguments: `{}`}}},
			{Text: "here it is"},
		}},
		{Steps: []scripted.Step{{Text: "plain"}}},
	}})
	h := startServer(t, testConfig(t))
	tok := h.member("mia")

	// A bad config changes nothing.
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "bad__name", "config": map[string]any{"endpoint": "ftp://x"}}).
		wantErr(t, 400, "validation")
	var created httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"x-api-key": "s3cret"}}}).want(t, 201).decode(t, &created)
	if created.Config.Headers["X-Api-Key"] != "********" || strings.Contains(string(h.call("GET", "/api/v1/mcp-servers", tok, nil).Body), "s3cret") {
		t.Fatalf("the header value is not masked: %+v", created.Config)
	}
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "CALC", "config": map[string]any{"endpoint": calc.URL}}).
		wantErr(t, 409, "conflict")
	v := h.waitMCP(tok, created.ID, "connected")
	names := map[string]httpapi.MCPToolView{}
	for _, tool := range v.Tools {
		names[tool.Name] = tool
	}
	if add, ok := names["calc__add"]; !ok || add.Tool != "add" || add.Annotations.ReadOnly == nil || !*add.Annotations.ReadOnly || len(names) != 3 {
		t.Fatalf("tools = %+v", v.Tools)
	}

	// Agents select tools by their prefixed names; unknown ones are refused.
	prov := h.createProvider(tok, protocols(url)["openai-responses"])
	h.call("POST", "/api/v1/agents", tok, map[string]any{"name": "bad", "model": "mcp-user", "provider_id": prov.ID,
		"tools": []string{"calc__nope", "ghost__x"}}).wantErr(t, 400, "validation")
	agent := h.createAgent(tok, map[string]any{"name": "mathy", "model": "mcp-user", "provider_id": prov.ID,
		"tools": []string{"calc__add", "calc__chart"}})
	var surface []httpapi.ToolView
	h.call("GET", "/api/v1/agents/"+agent.ID+"/tools", tok, nil).want(t, 200).decode(t, &surface)
	var sawAdd bool
	for _, tool := range surface {
		if tool.Name == "calc__add" {
			sawAdd = tool.Origin == "mcp" && tool.Server == "calc" && strings.Contains(string(tool.Parameters), `"a"`) &&
				tool.Annotations != nil && *tool.Annotations.ReadOnly
		}
	}
	if !sawAdd {
		t.Fatalf("the agent's surface lacks calc__add: %+v", surface)
	}

	// A run calls the tool; its result reaches the model.
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	events := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "add 2 and 3"}), 0).all(t)
	var result domain.ToolResultPayload
	for _, ev := range events {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if result.IsError || !strings.Contains(result.Output, `"sum":5`) || events[len(events)-1].Type != domain.EventOutput {
		t.Fatalf("the add call: %+v (last event %s)", result, events[len(events)-1].Type)
	}
	reqs := modelCalls(model)
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "function_call_output") || !strings.Contains(last, `\"sum\":5`) {
		t.Fatalf("the model did not read the result: %s", last)
	}
	// The trace says which MCP tools the build got, and the call's span
	// names its server.
	var sawTools, sawCall bool
	for _, sp := range h.traces(tok, s.ID, "?summary=true") {
		sawTools = sawTools || (sp.Kind == domain.SpanMCPTools && sp.Name == "calc" && sp.Error == "")
		sawCall = sawCall || (sp.Kind == domain.SpanFunction && sp.Meta["mcp_server"] == "calc")
	}
	if !sawTools || !sawCall {
		t.Fatalf("traces lack the MCP spans (tools %v, call %v)", sawTools, sawCall)
	}
	// The context report counts the MCP tools live, per server.
	if mcp := h.contextMCP(tok, s.ID); len(mcp) != 1 || mcp[0].Server != "calc" || mcp[0].Chars == 0 || mcp[0].Unavailable {
		t.Fatalf("context report mcp = %+v", mcp)
	}
	// An image result keeps its image for the card, and the model reads a line about it.
	events = h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "draw a chart"}), 0).all(t)
	for _, ev := range events {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if !strings.Contains(result.Extra["content"], `"type":"image"`) ||
		!strings.Contains(result.Output, "[image: image/png") || !strings.Contains(result.Output, "a tiny chart") {
		t.Fatalf("the chart call: %+v", result)
	}

	// Another member sees neither the server nor its tools.
	other := h.member("otto")
	h.call("GET", "/api/v1/mcp-servers/"+created.ID, other, nil).wantErr(t, 404, "not_found")
	oprov := h.createProvider(other, protocols(url)["openai-responses"])
	h.call("POST", "/api/v1/agents", other, map[string]any{"name": "thief", "model": "mcp-user", "provider_id": oprov.ID,
		"tools": []string{"calc__add"}}).wantErr(t, 400, "validation")
	// The server cannot be deleted or renamed while the agent selects its tools.
	h.call("DELETE", "/api/v1/mcp-servers/"+created.ID, tok, nil).wantErr(t, 409, "conflict")

	// Disabling disconnects; connect is then refused; enabling reconnects.
	off := false
	h.call("PUT", "/api/v1/mcp-servers/"+created.ID, tok, map[string]any{"name": "calc", "enabled": off,
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": "********"}}}).want(t, 200)
	if v := h.mcpServer(tok, created.ID); v.Status != "disabled" || len(v.Tools) != 0 {
		t.Fatalf("disabled server = %+v", v)
	}
	h.call("POST", "/api/v1/mcp-servers/"+created.ID+"/connect", tok, nil).wantErr(t, 409, "conflict")
	// A run meanwhile is told the server is unavailable, and so is the model.
	events = h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "just talk"}), 0).all(t)
	var diag domain.DiagnosticPayload
	for _, ev := range events {
		if ev.Type == domain.EventDiagnostic {
			diag = payload[domain.DiagnosticPayload](t, ev.Event)
		}
	}
	if diag.Type != "mcp_unavailable" || !strings.Contains(diag.Message, "calc") || !strings.Contains(diag.Message, "disabled") {
		t.Fatalf("no unavailable report: %+v", diag)
	}
	reqs = modelCalls(model)
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "unavailable in this run") {
		t.Fatalf("the model was not told: %s", last)
	}
	if mcp := h.contextMCP(tok, s.ID); len(mcp) != 1 || !mcp[0].Unavailable {
		t.Fatalf("context report mcp of a disabled server = %+v", mcp)
	}
	h.call("PUT", "/api/v1/mcp-servers/"+created.ID, tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": "********"}}}).want(t, 200)
	h.waitMCP(tok, created.ID, "connected")

	// A wrong key is a clear error in the status, not a hang.
	var wrong httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "calc-wrong",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": "nope"}}}).want(t, 201).decode(t, &wrong)
	deadline := time.Now().Add(20 * time.Second)
	for v := h.mcpServer(tok, wrong.ID); v.LastError == "" || v.Status == "connecting"; v = h.mcpServer(tok, wrong.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("the wrong key left no error: %+v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v := h.mcpServer(tok, wrong.ID); v.Status == "connected" || !strings.Contains(v.LastError, "401") && !strings.Contains(strings.ToLower(v.LastError), "unauthorized") {
		t.Fatalf("wrong key: %+v", v)
	}
}

func TestMCPServerKilledMidCallAndRestart(t *testing.T) {
	t.Parallel()
	calc := startCalc(t, "k")
	model, url := startScripted(t)
	model.SetScript("waiter", scripted.Script{Exchanges: []scripted.Exchange{
		{Steps: []scripted.Step{{ToolCalls: []scripted.ToolCall{{Name: "calc__hang", Arguments: `{}`}}}, {Text: "the tool failed"}}},
	}})
	cfg := testConfig(t)
	h := startServer(t, cfg)
	tok := h.member("kim")
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": "k"}}}).want(t, 201).decode(t, &srv)
	h.waitMCP(tok, srv.ID, "connected")
	prov := h.createProvider(tok, protocols(url)["openai-chat"])
	agent := h.createAgent(tok, map[string]any{"name": "waiter", "model": "waiter", "provider_id": prov.ID, "tools": []string{"calc__hang"}})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent.ID})
	stream := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "wait for it"}), 0)
	select {
	case <-calc.hanging:
	case <-time.After(20 * time.Second):
		t.Fatal("the hang call never reached the server")
	}
	// The server dies mid-call. The cut call's handler is let go once its
	// connection is gone: a session DELETE racing the close would otherwise
	// wait on it, and Close on that (a hang seen under load).
	calc.CloseClientConnections()
	close(calc.release)
	calc.Close()
	events := stream.all(t)
	var result domain.ToolResultPayload
	for _, ev := range events {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if !result.IsError || !strings.Contains(result.Output, "calc") {
		t.Fatalf("the killed call: %+v", result)
	}
	t.Logf("killed call output: %s", result.Output)
	if v := h.mcpServer(tok, srv.ID); v.Status == "connected" || v.LastError == "" {
		t.Fatalf("status after the kill = %+v", v)
	}

	// A new server on another port, the row pointed at it; then a restart
	// of the workbench reconnects by itself.
	calc2 := startCalc(t, "k")
	h.call("PUT", "/api/v1/mcp-servers/"+srv.ID, tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc2.URL, "headers": map[string]string{"X-Api-Key": "k"}}}).want(t, 200)
	h.waitMCP(tok, srv.ID, "connected")
	h.stop()
	h2 := startServer(t, cfg)
	h2.waitMCP(tok, srv.ID, "connected")
	var raw json.RawMessage
	h2.call("GET", "/api/v1/mcp-servers", tok, nil).want(t, 200).decode(t, &raw)
}

// An MCP tool goes through the approval gate like any tool, whatever its
// readOnlyHint says: the call waits, and runs only once approved.
func TestMCPToolsWaitForApproval(t *testing.T) {
	t.Parallel()
	calc := startCalc(t, "k")
	model, url := startScripted(t)
	model.SetScript("gated-mcp", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "calc__add", Arguments: `{"a":20,"b":22}`}}}, {Text: "42"}}}}})
	h := startServer(t, testConfig(t))
	tok := h.member("gail")
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": "k"}}}).want(t, 201).decode(t, &srv)
	h.waitMCP(tok, srv.ID, "connected")
	agent := h.agentOn(tok, protocols(url)["openai-responses"], map[string]any{"name": "gated", "model": "gated-mcp",
		"tools": []string{"calc__add"}, "approval": map[string]any{"approve_tools": []string{"calc__add"}}})
	s := h.createSession(tok, map[string]any{"agent_config_id": agent})
	stream := h.openSSE(tok, h.startRun(tok, s.ID, map[string]any{"input": "add"}), 0)
	untilType(t, stream, domain.EventInterrupted)
	calc.mu.Lock()
	early := len(calc.calls)
	calc.mu.Unlock()
	pending := h.approvals(tok, s.ID)
	if early != 0 || len(pending) != 1 || pending[0].ToolName != "calc__add" {
		t.Fatalf("before the decision: %d calls, pending %+v", early, pending)
	}
	h.call("POST", "/api/v1/approvals/"+pending[0].ID+"/approve", tok, nil).want(t, 200)
	var result domain.ToolResultPayload
	for _, ev := range stream.all(t) {
		if ev.Type == domain.EventToolResult {
			result = payload[domain.ToolResultPayload](t, ev.Event)
		}
	}
	if result.IsError || !strings.Contains(result.Output, `"sum":42`) {
		t.Fatalf("after approving: %+v", result)
	}
}

// With a secret key, an MCP server's header values and client secret are
// sealed at rest and never come back in a response or the log; the
// connection still sends the opened value.
func TestMCPSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	const plant = "hdr-PLANTED-4b8c2f"
	calc := startCalc(t, plant)
	cfg := testConfig(t)
	cfg.SecretKey = newKey(t)
	h := startServer(t, cfg)
	tok := h.member("sam")
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "calc",
		"config": map[string]any{"endpoint": calc.URL, "headers": map[string]string{"X-Api-Key": plant}}}).want(t, 201).decode(t, &srv)
	h.waitMCP(tok, srv.ID, "connected") // the sealed value opened for the request
	const secret = "cs-PLANTED-91ad3e"
	var oauth httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", tok, map[string]any{"name": "other", "enabled": false,
		"config": map[string]any{"endpoint": calc.URL, "auth_mode": "oauth", "oauth_client_id": "c", "oauth_client_secret": secret}}).
		want(t, 201).decode(t, &oauth)
	if oauth.Config.OAuthClientSecret != "********" {
		t.Fatalf("the client secret is not masked: %+v", oauth.Config)
	}
	for _, r := range []reply{h.call("GET", "/api/v1/mcp-servers", tok, nil), h.call("GET", "/api/v1/mcp-servers/"+oauth.ID, tok, nil)} {
		if strings.Contains(string(r.Body), plant) || strings.Contains(string(r.Body), secret) {
			t.Fatalf("a response carries a secret: %s", r.Body)
		}
	}
	if strings.Contains(h.logs.String(), plant) || strings.Contains(h.logs.String(), secret) {
		t.Fatal("the log carries a secret")
	}
	h.stop()
	for _, s := range []string{plant, secret} {
		if hits := filesContain(t, cfg.DataDir, s); len(hits) > 0 {
			t.Fatalf("plaintext %s in %v", s, hits)
		}
	}
}
