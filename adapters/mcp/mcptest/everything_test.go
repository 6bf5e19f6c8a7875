//go:build unix

package mcptest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-server/agents-server/adapters/mcp/mcptest"
)

// TestEverythingSpeaksStreamableHTTP proves the helper yields a real MCP
// server: the official Go SDK connects over streamable HTTP, lists and
// calls its tools, and after Stop a call fails — the behaviour later
// integration tests rely on to simulate a server dying mid-session.
func TestEverythingSpeaksStreamableHTTP(t *testing.T) {
	srv := mcptest.Everything(t)
	if !strings.HasSuffix(srv.URL, "/mcp") {
		t.Fatalf("URL = %q, want the /mcp endpoint", srv.URL)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"echo", "get-sum"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %q", names, want)
		}
	}

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("call echo: %v", err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("echo result = %+v, want text content", res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || !strings.Contains(text.Text, "hi") {
		t.Fatalf("echo content = %#v, want text containing %q", res.Content[0], "hi")
	}

	srv.Stop()
	srv.Stop() // idempotent
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "again"}}); err == nil {
		t.Fatal("call after Stop succeeded, want an error")
	}
}
