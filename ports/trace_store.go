package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// TraceStore keeps trace spans, payloads apart from the rows that list them,
// so a summary listing never reads a payload.
type TraceStore interface {
	// SaveSpan inserts a span (its Data as the payload, if any).
	SaveSpan(ctx context.Context, s domain.Span) error
	// SaveSpans inserts spans in one transaction, all or none: a run's
	// spans stored together cost one commit, not one each.
	SaveSpans(ctx context.Context, spans []domain.Span) error
	// ListSpans returns a session's spans, oldest first (by start, then
	// id) — all of them, or the page's; withData false leaves every payload
	// out (PayloadOmitted set where one exists). Returns validation for a
	// page cursor that is not a span of the session.
	ListSpans(ctx context.Context, sessionID string, withData bool, page SpanPage) ([]domain.Span, error)
	// FindSpan returns one span of a session, whole; not_found when absent.
	FindSpan(ctx context.Context, sessionID, spanID string) (domain.Span, error)
	// FindSpanByID returns a span, whole, by its id alone; not_found when
	// absent.
	FindSpanByID(ctx context.Context, spanID string) (domain.Span, error)
	// DeleteSpansBefore removes spans that started before cutoff and says
	// how many.
	DeleteSpansBefore(ctx context.Context, cutoff time.Time) (int, error)
	// CopySpans copies the spans of the given runs of one session into
	// another (a fork), under new span ids.
	CopySpans(ctx context.Context, fromSession, toSession string, runIDs []string, newID func() string) error
}

// SpanPage bounds a span listing: with Limit, the newest Limit spans
// before BeforeID (exclusive; "" = from the newest), still oldest first.
// The zero page is every span.
type SpanPage struct {
	Limit    int
	BeforeID string
}
