package runs

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/traces"
	"github.com/agents-server/agents-server/ports"
)

// tracer records a run's spans: stored per session (payloads cut at the
// trace_span_data_kb budget, conversation content left out when
// trace_include_sensitive_data is off) and published live.
//
// While the run's loop goes, finished spans are held and stored with the
// run's own writes: each turn's in the transaction that records the turn,
// the last ones in the run's end (before its final event), a pausing
// turn's on their own before the pause is announced — no commit of their
// own. A span is published, and the observer told, only once it is
// stored. After the loop hands its spans over, a span (a title or a
// guardrail that outlives the loop) is stored as it finishes.
type tracer struct {
	s         *Service
	lr        *liveRun
	sensitive bool
	limit     int

	mu       sync.Mutex
	held     []domain.Span // finished, not yet stored
	released bool
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

// finish ends the span with err (nil: success); the tracer stores and
// publishes it (see tracer).
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
	t := o.t
	t.mu.Lock()
	if !t.released {
		t.held = append(t.held, s)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	t.store([]domain.Span{s})
}

// flush stores the held spans and publishes them.
func (t *tracer) flush() {
	t.mu.Lock()
	spans := t.held
	t.held = nil
	t.mu.Unlock()
	t.store(spans)
}

// take hands the held spans over to a session write.
func (t *tracer) take() spanBatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := spanBatch{t: t, spans: t.held}
	t.held = nil
	return b
}

// handOver is take at the loop's end: from now on a span is stored as it
// finishes.
func (t *tracer) handOver() spanBatch {
	b := t.take()
	t.mu.Lock()
	t.released = true
	t.mu.Unlock()
	return b
}

// spanBatch is held spans riding on a session write.
type spanBatch struct {
	t     *tracer
	spans []domain.Span
}

// with is also preceded by the spans' insert, if there are any.
func (b spanBatch) with(ctx context.Context, also func(tx ports.SessionTx) error) func(tx ports.SessionTx) error {
	if len(b.spans) == 0 {
		return also
	}
	return func(tx ports.SessionTx) error {
		if err := tx.SaveSpans(ctx, b.spans); err != nil {
			return err
		}
		if also == nil {
			return nil
		}
		return also(tx)
	}
}

// in runs write with the spans in its transaction and announces them. A
// span never costs the write it rides on: should the write fail, the
// spans are stored on their own and the write is tried once more without
// them.
func (b spanBatch) in(write func(also func(tx ports.SessionTx) error) error, also func(tx ports.SessionTx) error) error {
	if len(b.spans) == 0 {
		return write(also)
	}
	if err := write(b.with(context.WithoutCancel(b.t.lr.ctx), also)); err != nil {
		b.alone()
		return write(also)
	}
	b.t.announce(b.spans)
	return nil
}

// alone stores the spans in a commit of their own and announces them.
func (b spanBatch) alone() {
	if b.t != nil {
		b.t.store(b.spans)
	}
}

// store saves spans in one transaction, then tells the observer and
// publishes each. Should the batch fail, each is saved on its own, so one
// bad span costs only itself; a failure to store is logged, never fatal
// to the run.
func (t *tracer) store(spans []domain.Span) {
	if len(spans) == 0 {
		return
	}
	ctx := context.WithoutCancel(t.lr.ctx)
	if err := t.s.d.Traces.SaveSpans(ctx, spans); err != nil {
		for _, s := range spans {
			if err := t.s.d.Traces.SaveSpan(ctx, s); err != nil {
				t.s.d.Log.Warn("storing a trace span failed", "run_id", s.RunID, "kind", s.Kind, "err", err)
			}
		}
	}
	t.announce(spans)
}

// announce tells the observer of stored spans and publishes them.
func (t *tracer) announce(spans []domain.Span) {
	for _, s := range spans {
		if t.s.d.Observer != nil {
			t.s.d.Observer.SpanSaved(s)
		}
		t.s.publish(t.lr, domain.EventTraceSpan, traces.LiveSpan(s))
	}
}

// zero records a zero-duration span (a retry or a fallback).
func (o *openSpan) zero(err error) {
	o.s.StartedAt = o.t.s.d.Clock.Now()
	o.finish(err)
}
