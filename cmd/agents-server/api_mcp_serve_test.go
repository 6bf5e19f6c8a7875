package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

// bearer adds a token to every request an MCP client sends.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// mcpClient connects the official Go SDK's client to the workbench's /mcp
// with token.
func (h *harness) mcpClient(token string) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err == nil {
		h.t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestWorkbenchServedOverMCP: the workbench at /mcp, through the official
// Go SDK's client: a member sees an ask_ tool per agent they can see (not
// another member's private one), asking one runs it and answers its final
// output, list_sessions and read_session show the conversation, someone
// else's session is refused, no token is refused, and the setting turns it
// off.
func TestWorkbenchServedOverMCP(t *testing.T) {
	t.Parallel()
	model, url := startScripted(t)
	model.SetScript("mcp-served", oneStep(scripted.Step{Text: "hello from the workbench"}))
	h := startServer(t, testConfig(t))
	mia, otto := h.member("mia"), h.member("otto")
	gp := protocols(url)["openai-chat"]
	gp["scope"] = "global"
	h.agentOn(h.admin, gp, map[string]any{"name": "Team Helper", "model": "mcp-served", "scope": "global"})
	h.agentOn(mia, protocols(url)["openai-chat"], map[string]any{"name": "Mine", "model": "mcp-served"})
	h.agentOn(otto, protocols(url)["openai-chat"], map[string]any{"name": "Secret", "model": "mcp-served"})

	cs, err := h.mcpClient(mia)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"ask_team_helper", "ask_mine", "list_sessions", "read_session"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	if slices.Contains(names, "ask_secret") {
		t.Fatalf("mia sees otto's private agent: %v", names)
	}

	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_mine", Arguments: map[string]any{"prompt": "say hello"}})
	if err != nil || res.IsError || textOf(t, res) != "hello from the workbench" {
		t.Fatalf("ask_mine = %+v, %v", res, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_sessions = %+v, %v", res, err)
	}
	var listed struct {
		Sessions []struct{ ID, Name string } `json:"sessions"`
	}
	raw, _ := res.StructuredContent.(map[string]any)
	if sessions, _ := raw["sessions"].([]any); len(sessions) != 1 {
		t.Fatalf("list_sessions = %+v", res.StructuredContent)
	}
	first := raw["sessions"].([]any)[0].(map[string]any)
	listed.Sessions = append(listed.Sessions, struct{ ID, Name string }{first["id"].(string), first["name"].(string)})
	if listed.Sessions[0].Name != "MCP: say hello" {
		t.Fatalf("the session's name = %q", listed.Sessions[0].Name)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_session", Arguments: map[string]any{"session_id": listed.Sessions[0].ID}})
	if err != nil || res.IsError || !strings.Contains(textOf(t, res), "user: say hello") || !strings.Contains(textOf(t, res), "assistant: hello from the workbench") {
		t.Fatalf("read_session = %q, %v", textOf(t, res), err)
	}
	// Someone else's session is not there for mia.
	ottoSession := h.createSession(otto, map[string]any{"name": "private"})
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_session", Arguments: map[string]any{"session_id": ottoSession.ID}})
	if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "not found") {
		t.Fatalf("reading otto's session = %q, %v", textOf(t, res), err)
	}

	// No token, no MCP.
	if _, err := h.mcpClient("ags_l_not-a-token"); err == nil {
		t.Fatal("a bad token connected")
	}
	// The setting turns it off.
	h.call("PUT", "/api/v1/settings/mcp_server_enabled", h.admin, map[string]string{"value": "false"}).want(t, 200)
	resp, err := http.Post(h.base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("with the setting off /mcp answered %d", resp.StatusCode)
	}
}
