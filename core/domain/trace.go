package domain

import (
	"encoding/json"
	"time"
)

// Span kinds: what a trace span records.
const (
	SpanAgent      = "agent"      // one agent's stretch of a run
	SpanGeneration = "generation" // one model call: its whole request and response
	SpanFunction   = "function"   // one tool call
	SpanHandoff    = "handoff"
	SpanGuardrail  = "guardrail"
	SpanRetry      = "retry"      // a retried or fallen-back model call (zero duration)
	SpanTitle      = "title"      // the session title call
	SpanCompaction = "compaction" // a compaction pass's summary call
	SpanMCPTools   = "mcp_tools"  // the MCP tools a build got from one server (zero duration)
)

// Span is one timed step of a run, stored per session. Data holds the
// payload (for a generation: model, system_instructions, input, tools,
// model_settings, handoffs, output_schema, output, usage…) and is what a
// summary listing leaves out.
type Span struct {
	ID        string
	SessionID string
	RunID     string
	ParentID  string // the enclosing span, "" at the top
	Kind      string
	Name      string
	StartedAt time.Time
	EndedAt   time.Time
	Error     string
	// Meta is the small, always-listed part: model, tool name, usage…
	Meta map[string]any
	// Data is the payload; nil when omitted (summary) or never recorded.
	Data json.RawMessage
	// DataBytes is the stored payload's size (the truncation marker's when
	// it was cut).
	DataBytes int
	// PayloadOmitted says Data was left out of this copy (a summary listing,
	// or a live event over the cap).
	PayloadOmitted bool
}

// TruncationMarker replaces a payload past the trace_span_data_kb budget.
func TruncationMarker(size, limit int) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": size, "limit_bytes": limit,
		"note": "the payload was larger than the trace_span_data_kb setting and was not stored"})
	return b
}
