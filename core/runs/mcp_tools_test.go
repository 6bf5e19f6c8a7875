package runs

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
	kept := keptParts([]ports.MCPContent{{Type: "image", Data: strings.Repeat("A", maxKeptMedia+4)}, {Type: "image", Data: "AAAA"}})
	if kept[0].Data != "" || !strings.Contains(kept[0].Text, "too large") || kept[1].Data != "AAAA" {
		t.Fatalf("kept = %+v", kept[0].Text)
	}
}
