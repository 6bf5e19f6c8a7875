package runs

import (
	"context"
	"encoding/json"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
)

// tracer records a run's spans: stored per session (payloads cut at the
// trace_span_data_kb budget, conversation content left out when
// trace_include_sensitive_data is off) and published live.
type tracer struct {
	s         *Service
	lr        *liveRun
	sensitive bool
	limit     int
}

func (s *Service) newTracer(ctx context.Context, lr *liveRun) *tracer {
	t := &tracer{s: s, lr: lr, sensitive: true, limit: 1024 << 10}
	if v, err := s.d.Settings.Bool(ctx, settings.KeyTraceIncludeSensitiveData); err == nil {
		t.sensitive = v
	}
	if kb, err := s.d.Settings.Int(ctx, settings.KeyTraceSpanDataKB); err == nil && kb > 0 {
		t.limit = kb << 10
	}
	return t
}

// span starts a span now; finish records it.
func (t *tracer) span(kind, name, parent string) *openSpan {
	return &openSpan{t: t, s: domain.Span{ID: t.s.d.IDs.NewID(), SessionID: t.lr.run.SessionID, RunID: t.lr.run.ID,
		ParentID: parent, Kind: kind, Name: name, StartedAt: t.s.d.Clock.Now(), Meta: map[string]any{}}}
}

// openSpan is a span being timed.
type openSpan struct {
	t    *tracer
	s    domain.Span
	data map[string]any
}

// ID is the span's id, for children.
func (o *openSpan) ID() string { return o.s.ID }

// meta sets an always-listed field.
func (o *openSpan) meta(k string, v any) *openSpan { o.s.Meta[k] = v; return o }

// set records a payload field; conversation content is recorded only when
// the trace_include_sensitive_data setting allows it.
func (o *openSpan) set(k string, v any, sensitive bool) *openSpan {
	if sensitive && !o.t.sensitive {
		return o
	}
	if o.data == nil {
		o.data = map[string]any{}
	}
	o.data[k] = v
	return o
}

// finish ends the span with err (nil: success), stores and publishes it. A
// failure to store a span is logged, never fatal to the run.
func (o *openSpan) finish(err error) {
	s := o.s
	s.EndedAt = o.t.s.d.Clock.Now()
	if err != nil {
		s.Error = err.Error()
	}
	if o.data != nil {
		data, mErr := json.Marshal(o.data)
		if mErr == nil {
			if len(data) > o.t.limit {
				data = domain.TruncationMarker(len(data), o.t.limit)
			}
			s.Data = data
		}
	}
	ctx := context.WithoutCancel(o.t.lr.ctx)
	if err := o.t.s.d.Traces.SaveSpan(ctx, s); err != nil {
		o.t.s.d.Log.Warn("storing a trace span failed", "run_id", s.RunID, "kind", s.Kind, "err", err)
	}
	if o.t.s.d.Observer != nil {
		o.t.s.d.Observer.SpanSaved(s)
	}
	o.t.s.publish(o.t.lr, domain.EventTraceSpan, traces.LiveSpan(s))
}

// zero records a zero-duration span (a retry or a fallback).
func (o *openSpan) zero(err error) {
	o.s.StartedAt = o.t.s.d.Clock.Now()
	o.finish(err)
}
