package mcp

import (
	"strings"
	"testing"

	"github.com/agents-server/agents-server/ports"
)

func TestMCPOutputForTheModel(t *testing.T) {
	res := ports.MCPResult{Content: []ports.MCPContent{{Type: "text", Text: "hello"}, {Type: "image", MIMEType: "image/png", Data: "AAAA"},
		{Type: "resource", URI: "file:///a.txt", Text: "inside"}}}
	out := mcpOutput(res)
	if !strings.Contains(out, "hello") || !strings.Contains(out, "[image: image/png, 3 bytes") || !strings.Contains(out, "[resource: file:///a.txt]\ninside") {
		t.Fatalf("output = %q", out)
	}
	// Structured content stands in for missing text; an error says so.
	if out := mcpOutput(ports.MCPResult{Structured: []byte(`{"sum":5}`), IsError: true}); out != `Error: {"sum":5}` {
		t.Fatalf("structured error = %q", out)
	}
	// A huge result keeps its head and tail within the cap.
	big := strings.Repeat("a", maxMCPOutput) + strings.Repeat("z", maxMCPOutput)
	out = mcpOutput(ports.MCPResult{Content: []ports.MCPContent{{Type: "text", Text: big}}})
	if len(out) > maxMCPOutput+100 || !strings.HasPrefix(out, "aaa") || !strings.HasSuffix(out, "zzz") || !strings.Contains(out, "bytes cut") {
		t.Fatalf("capped output: %d bytes", len(out))
	}
	// Media past the budget keep their type and size, not their data.
	kept, _ := keptParts([]ports.MCPContent{{Type: "image", Data: strings.Repeat("A", maxKeptMedia+4)}, {Type: "image", Data: "AAAA"}}, 8<<20)
	if kept[0].Data != "" || !strings.Contains(kept[0].Text, "too large") || kept[1].Data != "AAAA" {
		t.Fatalf("kept = %+v", kept[0].Text)
	}
}

// A result of many parts, each below the per-part cut, keeps no more than
// its budget in all, and says what it dropped.
func TestMCPResultKeepsItsBudget(t *testing.T) {
	parts := make([]ports.MCPContent, 500)
	for i := range parts {
		parts[i] = ports.MCPContent{Type: "text", Text: strings.Repeat("p", 60<<10)}
	}
	kept, left := keptParts(parts, 1<<20)
	size := 0
	for _, c := range kept {
		size += len(c.Text) + len(c.Data)
	}
	last := kept[len(kept)-1].Text
	if size > 1<<20+200 || left != 0 || len(kept) != 18 || !strings.Contains(last, "483 more parts") || !strings.Contains(last, "mcp_result_max_kb") {
		t.Fatalf("kept %d parts, %d bytes, %d left; last %q", len(kept), size, left, last)
	}
	if kept, left := keptParts(parts[:2], 1<<20); len(kept) != 2 || left != 1<<20-2*(60<<10) {
		t.Fatalf("a small result: %d parts, %d left", len(kept), left)
	}
}
