package observe

import (
	"context"
	"crypto/sha256"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agents-server/agents-server/core/domain"
)

// Traces exports runs to an OpenTelemetry collector over OTLP/HTTP: one
// trace per run — a span for the run, under it the runner's own spans
// (agents, model calls, tool calls, guardrails, handoffs) with their times,
// names and small facts (model, provider, tool, usage), never their
// payloads: conversation content stays in the workbench. Spans go out in
// batches through the SDK's batch processor.
//
// The ids are derived from the workbench's own (the trace from the run's
// id, each span from its span's), so a span stored before its parent run
// ended still lands in the right place, and an id seen in the trace panel
// finds the same step in Jaeger or Tempo.
type Traces struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
}

// NewTraces exports to endpoint, an OTLP/HTTP traces URL
// (http://collector:4318/v1/traces).
func NewTraces(ctx context.Context, endpoint, version string) (*Traces, error) {
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("otlp: %w", err)
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("agents-server"), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(derivedIDs{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	return &Traces{tp: tp, tracer: tp.Tracer("github.com/agents-server/agents-server")}, nil
}

// Shutdown sends what is batched and stops.
func (t *Traces) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// RunEnded exports the run's own span, the parent of its top spans.
func (t *Traces) RunEnded(r domain.Run) {
	if r.EndedAt == nil {
		return
	}
	ctx := context.WithValue(context.Background(), idsKey{}, ids{trace: traceID(r.ID), span: spanID("run:" + r.ID)})
	_, sp := t.tracer.Start(ctx, "run", trace.WithTimestamp(r.CreatedAt), trace.WithNewRoot(),
		trace.WithAttributes(attribute.String("agents.run_id", r.ID), attribute.String("agents.session_id", r.SessionID),
			attribute.String("agents.agent_id", r.AgentConfigID), attribute.String("agents.status", string(r.Status))))
	if r.Status == domain.RunError {
		sp.SetStatus(codes.Error, r.ErrorCode+": "+r.ErrorMessage)
	}
	sp.End(trace.WithTimestamp(*r.EndedAt))
}

// SpanSaved exports one of the runner's spans under its parent (the run's
// span for a top one).
func (t *Traces) SpanSaved(s domain.Span) {
	if s.RunID == "" {
		return
	}
	tid := traceID(s.RunID)
	parent := spanID("run:" + s.RunID)
	if s.ParentID != "" {
		parent = spanID("span:" + s.ParentID)
	}
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: tid, SpanID: parent, TraceFlags: trace.FlagsSampled, Remote: true}))
	ctx = context.WithValue(ctx, idsKey{}, ids{trace: tid, span: spanID("span:" + s.ID)})
	attrs := []attribute.KeyValue{attribute.String("agents.kind", s.Kind), attribute.String("agents.run_id", s.RunID),
		attribute.String("agents.session_id", s.SessionID), attribute.String("agents.span_id", s.ID)}
	for k, v := range s.Meta {
		switch v := v.(type) {
		case string:
			attrs = append(attrs, attribute.String("agents."+k, v))
		case float64:
			attrs = append(attrs, attribute.Float64("agents."+k, v))
		case int:
			attrs = append(attrs, attribute.Int("agents."+k, v))
		case int64:
			attrs = append(attrs, attribute.Int64("agents."+k, v))
		case bool:
			attrs = append(attrs, attribute.Bool("agents."+k, v))
		}
	}
	name := s.Kind
	if s.Name != "" {
		name += " " + s.Name
	}
	_, sp := t.tracer.Start(ctx, name, trace.WithTimestamp(s.StartedAt), trace.WithAttributes(attrs...))
	if s.Error != "" {
		sp.SetStatus(codes.Error, s.Error)
	}
	sp.End(trace.WithTimestamp(s.EndedAt))
}

// traceID is a run's trace id.
func traceID(runID string) trace.TraceID {
	sum := sha256.Sum256([]byte("trace:" + runID))
	var id trace.TraceID
	copy(id[:], sum[:])
	return id
}

// spanID is the span id of one of the workbench's ids.
func spanID(key string) trace.SpanID {
	sum := sha256.Sum256([]byte(key))
	var id trace.SpanID
	copy(id[:], sum[:])
	return id
}

// ids carries the ids the next span takes.
type ids struct {
	trace trace.TraceID
	span  trace.SpanID
}

type idsKey struct{}

// derivedIDs gives a span the ids its context carries: the SDK asks its
// generator with the start's context, which is how a span gets an id
// derived from the workbench's rather than a random one.
type derivedIDs struct{}

// NewIDs implements sdktrace.IDGenerator.
func (derivedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.trace, v.span
}

// NewSpanID implements sdktrace.IDGenerator.
func (derivedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v, _ := ctx.Value(idsKey{}).(ids)
	return v.span
}
