package traces

import (
	"encoding/json"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// LiveSpanCap bounds a trace.span event: a payload past it is left out of
// the event (payload_omitted) — the stored row keeps it.
const LiveSpanCap = 256 << 10

// SpanPayload is a span as the trace.span event and the traces API carry it.
type SpanPayload struct {
	RunID          string          `json:"run_id"`
	TraceID        string          `json:"trace_id"`
	SpanID         string          `json:"span_id"`
	ParentID       string          `json:"parent_id,omitempty"`
	Kind           string          `json:"kind"`
	Name           string          `json:"name"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        time.Time       `json:"ended_at"`
	DurationMS     int64           `json:"duration_ms"`
	Error          string          `json:"error,omitempty"`
	Meta           map[string]any  `json:"meta"`
	Data           json.RawMessage `json:"data,omitempty"`
	DataBytes      int             `json:"data_bytes"`
	PayloadOmitted bool            `json:"payload_omitted,omitempty"`
}

// SpanView renders a stored span (trace id = its run: one trace per run).
func SpanView(s domain.Span) SpanPayload {
	meta := s.Meta
	if meta == nil {
		meta = map[string]any{}
	}
	return SpanPayload{RunID: s.RunID, TraceID: s.RunID, SpanID: s.ID, ParentID: s.ParentID, Kind: s.Kind, Name: s.Name,
		StartedAt: s.StartedAt, EndedAt: s.EndedAt, DurationMS: s.EndedAt.Sub(s.StartedAt).Milliseconds(), Error: s.Error,
		Meta: meta, Data: s.Data, DataBytes: max(s.DataBytes, len(s.Data)), PayloadOmitted: s.PayloadOmitted}
}

// LiveSpan is the trace.span event's payload: the payload left out past the
// live cap.
func LiveSpan(s domain.Span) SpanPayload {
	v := SpanView(s)
	if len(v.Data) > LiveSpanCap {
		v.Data, v.PayloadOmitted = nil, true
	}
	return v
}
