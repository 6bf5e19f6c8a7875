package traces

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// RecorderDeps are what a run's recorder works with.
type RecorderDeps struct {
	// Store keeps the spans a run's own writes do not carry.
	Store ports.TraceStore
	// Observer hears of every span stored (nil: nobody).
	Observer ports.RunObserver
	// Publish sends a stored span to the run's live watchers.
	Publish func(SpanPayload)
	IDs     ports.IDs
	Clock   ports.Clock
	Log     *slog.Logger
}

// Recorder records one run's spans: stored per session (payloads cut at
// the trace_span_data_kb budget, conversation content left out when
// trace_include_sensitive_data is off) and published live.
//
// While the run's loop goes, finished spans are held and stored with the
// run's own writes: each turn's in the transaction that records the turn
// (Take), the last ones in the run's end (HandOver), a pausing turn's on
// their own before the pause is announced (Flush) — no commit of their
// own. A span is published, and the observer told, only once it is
// stored. After the loop hands its spans over, a span (a title or a
// guardrail that outlives the loop) is stored as it finishes.
type Recorder struct {
	d                RecorderDeps
	ctx              context.Context // the run's; its writes outlive a cancel
	sessionID, runID string
	sensitive        bool
	limit            int

	mu       sync.Mutex
	held     []domain.Span // finished, not yet stored
	released bool
}

// NewRecorder returns the recorder of run runID of session sessionID, with
// the trace settings as they stand now.
func NewRecorder(ctx context.Context, set *settings.Service, d RecorderDeps, sessionID, runID string) *Recorder {
	r := &Recorder{d: d, ctx: context.WithoutCancel(ctx), sessionID: sessionID, runID: runID, sensitive: true, limit: 1024 << 10}
	if v, err := set.Bool(ctx, settings.KeyTraceIncludeSensitiveData); err == nil {
		r.sensitive = v
	}
	if kb, err := set.Int(ctx, settings.KeyTraceSpanDataKB); err == nil && kb > 0 {
		r.limit = kb << 10
	}
	return r
}

// Span starts a span now; Finish records it.
func (r *Recorder) Span(kind, name, parent string) *OpenSpan {
	return &OpenSpan{r: r, s: domain.Span{ID: r.d.IDs.NewID(), SessionID: r.sessionID, RunID: r.runID,
		ParentID: parent, Kind: kind, Name: name, StartedAt: r.d.Clock.Now(), Meta: map[string]any{}}}
}

// OpenSpan is a span being timed.
type OpenSpan struct {
	r    *Recorder
	s    domain.Span
	data map[string]any
}

// ID is the span's id, for children.
func (o *OpenSpan) ID() string { return o.s.ID }

// Meta sets an always-listed field.
func (o *OpenSpan) Meta(k string, v any) *OpenSpan { o.s.Meta[k] = v; return o }

// Set records a payload field; conversation content (sensitive) is
// recorded only when the trace_include_sensitive_data setting allows it.
func (o *OpenSpan) Set(k string, v any, sensitive bool) *OpenSpan {
	if sensitive && !o.r.sensitive {
		return o
	}
	if o.data == nil {
		o.data = map[string]any{}
	}
	o.data[k] = v
	return o
}

// Finish ends the span with err (nil: success); the recorder stores and
// publishes it (see Recorder).
func (o *OpenSpan) Finish(err error) {
	s := o.s
	s.EndedAt = o.r.d.Clock.Now()
	if err != nil {
		s.Error = err.Error()
	}
	if o.data != nil {
		data, mErr := json.Marshal(o.data)
		if mErr == nil {
			if len(data) > o.r.limit {
				data = domain.TruncationMarker(len(data), o.r.limit)
			}
			s.Data = data
		}
	}
	r := o.r
	r.mu.Lock()
	if !r.released {
		r.held = append(r.held, s)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.store([]domain.Span{s})
}

// Zero records a zero-duration span (a retry or a fallback).
func (o *OpenSpan) Zero(err error) {
	o.s.StartedAt = o.r.d.Clock.Now()
	o.Finish(err)
}

// Flush stores the held spans and publishes them.
func (r *Recorder) Flush() {
	r.mu.Lock()
	spans := r.held
	r.held = nil
	r.mu.Unlock()
	r.store(spans)
}

// Take hands the held spans over to a session write.
func (r *Recorder) Take() Batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := Batch{r: r, spans: r.held}
	r.held = nil
	return b
}

// HandOver is Take at the loop's end: from now on a span is stored as it
// finishes.
func (r *Recorder) HandOver() Batch {
	b := r.Take()
	r.mu.Lock()
	r.released = true
	r.mu.Unlock()
	return b
}

// Batch is held spans riding on a session write.
type Batch struct {
	r     *Recorder
	spans []domain.Span
}

// with is also preceded by the spans' insert, if there are any.
func (b Batch) with(also func(tx ports.SessionTx) error) func(tx ports.SessionTx) error {
	if len(b.spans) == 0 {
		return also
	}
	return func(tx ports.SessionTx) error {
		if err := tx.SaveSpans(b.r.ctx, b.spans); err != nil {
			return err
		}
		if also == nil {
			return nil
		}
		return also(tx)
	}
}

// In runs write with the spans in its transaction (before also) and
// announces them. A span never costs the write it rides on: should the
// write fail, the spans are stored on their own and the write is tried
// once more without them.
func (b Batch) In(write func(also func(tx ports.SessionTx) error) error, also func(tx ports.SessionTx) error) error {
	if len(b.spans) == 0 {
		return write(also)
	}
	if err := write(b.with(also)); err != nil {
		b.Alone()
		return write(also)
	}
	b.r.announce(b.spans)
	return nil
}

// Alone stores the spans in a commit of their own and announces them.
func (b Batch) Alone() {
	if b.r != nil {
		b.r.store(b.spans)
	}
}

// store saves spans in one transaction, then tells the observer and
// publishes each. Should the batch fail, each is saved on its own, so one
// bad span costs only itself; a failure to store is logged, never fatal
// to the run.
func (r *Recorder) store(spans []domain.Span) {
	if len(spans) == 0 {
		return
	}
	if err := r.d.Store.SaveSpans(r.ctx, spans); err != nil {
		for _, s := range spans {
			if err := r.d.Store.SaveSpan(r.ctx, s); err != nil {
				r.d.Log.Warn("storing a trace span failed", "run_id", s.RunID, "kind", s.Kind, "err", err)
			}
		}
	}
	r.announce(spans)
}

// announce tells the observer of stored spans and publishes them.
func (r *Recorder) announce(spans []domain.Span) {
	for _, s := range spans {
		if r.d.Observer != nil {
			r.d.Observer.SpanSaved(s)
		}
		r.d.Publish(LiveSpan(s))
	}
}

// Started is the span as it stands before it finishes: its id, name and
// start, for a record made of it should the run never finish it.
func (o *OpenSpan) Started() domain.Span { return o.s }

// Len is how many spans ride on the write.
func (b Batch) Len() int { return len(b.spans) }
