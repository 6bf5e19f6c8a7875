//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/sandbox/e2b/e2bdouble"
)

// TestAMembersStdioServerRunsInTheirProjectOnE2B: the Docker scenario on
// an E2B-compatible service (the double): the member's program is started
// in their project's sandbox and its stdio carried over the E2B process
// stream, and a chat's tool call is answered from there.
func TestAMembersStdioServerRunsInTheirProjectOnE2B(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startE2BDouble(t, e2bdouble.Options{Templates: []string{"base"}, Dir: dir})
	bin := echoServerBinary(t)
	model, url := startScripted(t)
	model.SetScript("boxed", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "cloudy__echo", Arguments: `{"message":"from the chat"}`}}},
		{Text: "done"},
	}}}})
	cfg := testConfig(t)
	cfg.E2BHTTP = d.Client()
	h := startServer(t, cfg)
	ann := h.member("ann")
	sb := h.createSandbox(map[string]any{"name": "cloud", "type": "e2b", "config": map[string]any{"api_url": d.APIURL(),
		"domain": d.Domain(), "api_key": e2bKey, "template_id": "base", "timeout_seconds": 600}})
	p := h.createProject(ann, map[string]any{"name": "cloudy", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "MODE", "value": "first"}}})
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/start", ann, nil).want(t, 200)
	boxes := d.Sandboxes()
	if len(boxes) != 1 {
		t.Fatalf("sandboxes = %+v", boxes)
	}
	if err := os.WriteFile(filepath.Join(dir, boxes[0].ID, "fs/workspace/mcp-echo"), bin, 0o755); err != nil {
		t.Fatal(err)
	}

	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "cloudy", "config": map[string]any{
		"transport": "stdio", "command": "/workspace/mcp-echo", "project_id": p.ID, "env": map[string]string{"GREETING": "hi"}}}).
		want(t, 201).decode(t, &srv)
	h.waitMCP(ann, srv.ID, "connected")

	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "cloudy", "model": "boxed", "tools": []string{"cloudy__echo"}})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	if got := h.toolOutput(ann, s.ID, "echo"); !strings.Contains(got, "echo: from the chat (MODE=first GREETING=hi workspace=true)") {
		t.Fatalf("the program in the sandbox answered %q", got)
	}
	// Disabled: the program in the sandbox ends.
	h.call("PUT", "/api/v1/mcp-servers/"+srv.ID, ann, map[string]any{"name": "cloudy", "enabled": false, "config": map[string]any{
		"transport": "stdio", "command": "/workspace/mcp-echo", "project_id": p.ID, "env": map[string]string{"GREETING": "********"}}}).want(t, 200)
	waitFor(t, func() bool { // the program in the sandbox ends
		info, ok := d.Sandbox(boxes[0].ID)
		return ok && info.Processes == 0
	})
}
