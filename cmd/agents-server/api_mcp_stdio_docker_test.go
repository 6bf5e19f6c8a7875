//go:build unix

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/llm/scripted"
)

// TestAMembersStdioServerRunsInTheirProjectOnDocker: a member, refused a
// program on the host, runs theirs inside their project's container
// instead. The workbench starts it over the sandbox's exec stream, and a
// chat's tool call is answered from inside the container (the project's
// environment, its /workspace). Changing the project's environment
// restarts the program in what the project became.
func TestAMembersStdioServerRunsInTheirProjectOnDocker(t *testing.T) {
	t.Parallel()
	needDocker(t)
	bin := echoServerBinary(t)

	model, url := startScripted(t)
	model.SetScript("boxed", scripted.Script{Exchanges: []scripted.Exchange{{Steps: []scripted.Step{
		{ToolCalls: []scripted.ToolCall{{Name: "boxed__echo", Arguments: `{"message":"from the chat"}`}}},
		{Text: "done"},
	}}}})
	h := startServer(t, testConfig(t))
	ann := h.member("ann")
	sb := h.createSandbox(map[string]any{"name": "local", "type": "docker",
		"config": map[string]any{"image": sandboxImage, "memory_mb": 256, "cpus": 1}})
	p := h.createProject(ann, map[string]any{"name": "boxed", "sandbox_id": sb.ID,
		"env": []map[string]string{{"name": "MODE", "value": "first"}}})
	h.call("POST", "/api/v1/projects/"+p.ID+"/sandbox/start", ann, nil).want(t, 200)
	copyIntoProject(t, p.ID, "mcp-echo", bin)

	onHost := map[string]any{"transport": "stdio", "command": "/workspace/mcp-echo"}
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "boxed", "config": onHost}).wantErr(t, 403, "forbidden")
	inBox := map[string]any{"transport": "stdio", "command": "/workspace/mcp-echo", "project_id": p.ID,
		"env": map[string]string{"GREETING": "hi"}}
	var srv httpapi.MCPServerView
	h.call("POST", "/api/v1/mcp-servers", ann, map[string]any{"name": "boxed", "config": inBox}).want(t, 201).decode(t, &srv)
	// Another member cannot name ann's project.
	bob := h.member("bob")
	h.call("POST", "/api/v1/mcp-servers", bob, map[string]any{"name": "bobs", "config": map[string]any{
		"transport": "stdio", "command": "/workspace/mcp-echo", "project_id": p.ID}}).wantErr(t, 400, "validation")
	h.waitMCP(ann, srv.ID, "connected")

	agent := h.agentOn(ann, protocols(url)["openai-responses"], map[string]any{"name": "boxed", "model": "boxed", "tools": []string{"boxed__echo"}})
	s := h.createSession(ann, map[string]any{"agent_config_id": agent})
	ask := func() string { return h.toolOutput(ann, s.ID, "echo") }
	if got := ask(); !strings.Contains(got, "echo: from the chat (MODE=first GREETING=hi workspace=true)") {
		t.Fatalf("the program in the container answered %q", got)
	}

	// A new environment severs the program's hold: it starts again with it.
	h.call("PUT", "/api/v1/projects/"+p.ID, ann, map[string]any{"name": "boxed",
		"env": []map[string]string{{"name": "MODE", "value": "second"}}}).want(t, 200)
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := h.mcpServer(ann, srv.ID)
		if v.Status == "connected" {
			if got := ask(); strings.Contains(got, "MODE=second") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted in the new environment: status %s, last error %q", v.Status, v.LastError)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var (
	echoServerOnce sync.Once
	echoServer     []byte
	echoServerErr  error
)

// echoServerBinary builds adapters/mcp/mcptest/echoserver once, static,
// so it runs in the busybox image and in the E2B double's sandboxes.
func echoServerBinary(t *testing.T) []byte {
	t.Helper()
	echoServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "echoserver")
		if err != nil {
			echoServerErr = err
			return
		}
		defer os.RemoveAll(dir)
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "mcp-echo"), "../../adapters/mcp/mcptest/echoserver")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			echoServerErr = fmt.Errorf("building the echo server: %v\n%s", err, out)
			return
		}
		echoServer, echoServerErr = os.ReadFile(filepath.Join(dir, "mcp-echo"))
	})
	if echoServerErr != nil {
		t.Fatal(echoServerErr)
	}
	return echoServer
}

// copyIntoProject puts an executable file into a project's running
// container, in /workspace.
func copyIntoProject(t *testing.T, projectID, name string, data []byte) {
	t.Helper()
	api, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Uid: 0, Gid: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	tail := strings.ReplaceAll(projectID, "-", "")
	tail = tail[len(tail)-12:]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := api.CopyToContainer(ctx, "agents-"+tail, client.CopyToContainerOptions{DestinationPath: "/workspace", Content: &buf}); err != nil {
		t.Fatal(err)
	}
}
