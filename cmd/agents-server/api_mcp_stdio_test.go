//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
)

// TestAStdioServerRunsSupervisedOnTheHost has an admin add the reference
// server in stdio mode: the workbench starts it, a chat calls its echo,
// its environment reads back masked, and killed it is started again by
// the supervisor. A program that dies says why in last_error (its exit
// and its stderr).
func TestAStdioServerRunsSupervisedOnTheHost(t *testing.T) {
	t.Parallel()
	node, args := mcptest.EverythingStdio(t)
	model, url := startScripted(t)
	model.SetScript("stdio", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "local__echo", Arguments: `{"message":"hello over stdio"}`}}},
		{Text: "echoed"},
	}}}})
	h := startServer(t, testConfig(t))
	marker := "stdio-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "local", "config": map[string]any{
		"transport": "stdio", "command": node, "args": args, "env": map[string]string{"TEST_MARKER": marker}}}).
		want(t, 201).decode(t, &srv)
	v := h.waitMCP(h.admin, srv.ID, "connected")
	if v.Config.Transport != "stdio" || v.Config.Command != node || v.Config.Env["TEST_MARKER"] != "********" || v.Config.Endpoint != "" {
		t.Fatalf("config = %+v", v.Config)
	}
	hasEcho := false
	for _, tool := range v.Tools {
		hasEcho = hasEcho || tool.Name == "local__echo"
	}
	if !hasEcho {
		t.Fatalf("tools = %+v", v.Tools)
	}

	prov := h.createProvider(h.admin, protocols(url)["openai-responses"])
	agent := h.createAgent(h.admin, map[string]any{"name": "stdio", "model": "stdio", "provider_id": prov.ID, "tools": []string{"local__echo"}})
	s := h.createSession(h.admin, map[string]any{"agent_config_id": agent.ID})
	if echoed := h.toolOutput(h.admin, s.ID, "echo"); !strings.Contains(echoed, "hello over stdio") {
		t.Fatalf("echo answered %q", echoed)
	}

	// Killed: the supervisor starts it again, as a new process.
	first := programWithMarker(t, marker)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		v = h.mcpServer(h.admin, srv.ID)
		if pid, ok := findProgram(marker); ok && pid != first && v.Status == "connected" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted: status %s, last error %q", v.Status, v.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Disabled: the program is stopped.
	last, _ := findProgram(marker)
	h.call("PUT", "/api/v1/mcp-servers/"+srv.ID, h.admin, map[string]any{"name": "local", "enabled": false, "config": map[string]any{
		"transport": "stdio", "command": node, "args": args, "env": map[string]string{"TEST_MARKER": "********"}}}).want(t, 200)
	mcptest.WaitEnded(t, last)

	// A program that dies before the handshake: its exit and stderr.
	var bad httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "broken", "config": map[string]any{
		"transport": "stdio", "command": "sh", "args": []string{"-c", "echo 'fatal: no config file' >&2; exit 2"}}}).want(t, 201).decode(t, &bad)
	deadline = time.Now().Add(20 * time.Second)
	for {
		bad = h.mcpServer(h.admin, bad.ID)
		if strings.Contains(bad.LastError, "exited with status 2") && strings.Contains(bad.LastError, "fatal: no config file") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broken: status %s, last error %q", bad.Status, bad.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWhoMayRunAStdioServer: a member is refused a program on the host
// until the admin setting allows it, and a program they stop being
// allowed is not started again; an environment value is kept by the mask
// only for the same program; fields are validated.
func TestWhoMayRunAStdioServer(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	ann := h.member("ann")
	program := map[string]any{"transport": "stdio", "command": "sh", "args": []string{"-c", "sleep 600"}, "env": map[string]string{"TOKEN": "s3cret"}}
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "mine", "config": program}).wantErr(t, 403, "forbidden")
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "mine", "config": map[string]any{
		"transport": "stdio", "command": "sh", "project_id": "no-such-project"}}).wantErr(t, 400, "validation")
	h.call("PUT", "/api/v1/settings/mcp_stdio_members_on_host", h.admin, map[string]string{"value": "true"}).want(t, 200)
	var mine httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "mine", "config": program}).want(t, 201).decode(t, &mine)

	// The mask keeps TOKEN only while the program is the same.
	kept := map[string]any{"transport": "stdio", "command": "sh", "args": []string{"-c", "sleep 600"}, "env": map[string]string{"TOKEN": "********"}}
	h.call("PUT", "/api/v1/mcp-servers/"+mine.ID, ann, map[string]any{"name": "mine", "config": kept}).want(t, 200)
	moved := map[string]any{"transport": "stdio", "command": "sh", "args": []string{"-c", "env"}, "env": map[string]string{"TOKEN": "********"}}
	h.call("PUT", "/api/v1/mcp-servers/"+mine.ID, ann, map[string]any{"name": "mine", "config": moved}).wantErr(t, 400, "validation")

	// Bad fields, each named.
	for _, bad := range []map[string]any{
		{"transport": "stdio"},
		{"transport": "stdio", "command": "x", "endpoint": "http://example.com/mcp"},
		{"transport": "stdio", "command": "x", "env": map[string]string{"1BAD": "v"}},
		{"transport": "carrier-pigeon", "endpoint": "http://example.com/mcp"},
		{"endpoint": "http://example.com/mcp", "command": "x"},
	} {
		h.call("POST", "/api/v1/mcp-servers", h.admin, map[string]any{"name": "bad", "config": bad}).wantErr(t, 400, "validation")
	}

	// Allowed no more: the member's program is not started again, and the
	// status says why.
	h.call("PUT", "/api/v1/settings/mcp_stdio_members_on_host", h.admin, map[string]string{"value": "false"}).want(t, 200)
	h.call("POST", "/api/v1/mcp-servers/"+mine.ID+"/connect", ann, nil).want(t, 200)
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := h.mcpServer(ann, mine.ID)
		if v.Status == "disconnected" && strings.Contains(v.LastError, "mcp_stdio_members_on_host") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %s, last error %q", v.Status, v.LastError)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toolOutput runs input in the session and returns its one tool call's
// output, failing the test if the call failed.
func (h *harness) toolOutput(token, sessionID, input string) string {
	h.t.Helper()
	results, _, _ := h.runResults(token, sessionID, map[string]any{"input": input})
	if len(results) != 1 || results[0].IsError {
		h.t.Fatalf("tool results = %+v", results)
	}
	return results[0].Output
}

// findProgram finds the process whose environment holds TEST_MARKER=marker.
func findProgram(marker string) (int, bool) {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(env), "TEST_MARKER="+marker+"\x00") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && !mcptest.Ended(pid) {
			return pid, true
		}
	}
	return 0, false
}

func programWithMarker(t *testing.T, marker string) int {
	t.Helper()
	pid, ok := findProgram(marker)
	if !ok {
		t.Fatal("no program runs with the marker")
	}
	return pid
}
