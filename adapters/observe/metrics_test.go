package observe

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// A store write lands in the write histogram, and in the lock-wait one
// only when its wait is known.
func TestStoreWritesAreTimed(t *testing.T) {
	m := NewMetrics(Sources{})
	m.StoreWrite(2*time.Millisecond, 5*time.Millisecond)
	m.StoreWrite(-1, 3*time.Millisecond) // a lone SQLite statement
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	text := rec.Body.String()
	for _, want := range []string{
		"agents_store_write_duration_seconds_count 2\n",
		"agents_store_write_duration_seconds_sum 0.008\n",
		`agents_store_write_duration_seconds_bucket{le="0.0025"} 0` + "\n",
		`agents_store_write_duration_seconds_bucket{le="0.005"} 2` + "\n",
		"agents_store_write_lock_wait_seconds_count 1\n",
		`agents_store_write_lock_wait_seconds_bucket{le="0.0025"} 1` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in the scrape", want)
		}
	}
}
