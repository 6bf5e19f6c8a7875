package observe

import (
	"testing"

	"github.com/agents-server/agents-server/core/domain"
)

// A tool call's label is a built-in's own name or the origin of a tool
// people named; a name alone is never trusted to be a built-in's.
func TestToolLabelsComeFromABoundedSet(t *testing.T) {
	for _, c := range []struct {
		name, origin, want string
	}{
		{"exec_command", "sandbox", "exec_command"},
		{"todo_write", "checklist", "todo_write"},
		{"github__create_issue", "mcp", "mcp"},
		{"lookup_customer", "native", "native"},
		{"transfer_to_billing", "handoff", "handoff"},
		{"read_file", "mcp", "mcp"}, // an MCP tool that took a built-in's name
		{"made_up_by_the_model", "unknown", "unknown"},
		{"no_origin_recorded", "", "unknown"},
	} {
		meta := map[string]any{}
		if c.origin != "" {
			meta["origin"] = c.origin
		}
		if got := toolLabel(domain.Span{Kind: domain.SpanFunction, Name: c.name, Meta: meta}); got != c.want {
			t.Errorf("%s from %q is labelled %q, want %q", c.name, c.origin, got, c.want)
		}
	}
}
