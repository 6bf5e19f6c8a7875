// Package traces serves a session's trace spans — the summary listing
// without payloads, a span whole on demand — and prunes old ones.
package traces

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/sessions"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Service reads and prunes traces.
type Service struct {
	store    ports.TraceStore
	sessions *sessions.Service
	settings *settings.Service
	clock    ports.Clock
}

// New returns a Service.
func New(store ports.TraceStore, sessions *sessions.Service, settings *settings.Service, clock ports.Clock) *Service {
	return &Service{store: store, sessions: sessions, settings: settings, clock: clock}
}

// MaxPageLimit bounds one page of spans.
const MaxPageLimit = 1000

// List returns a session's spans, oldest first: all of them, or with a
// page limit the newest ones before page.BeforeID; summary leaves every
// payload out, so opening a long session's traces costs its rows, not its
// bytes. Returns not_found for a session that is not the caller's,
// validation for a bad limit or a cursor that is not one of its spans.
func (s *Service) List(ctx context.Context, p domain.Principal, sessionID string, summary bool, page ports.SpanPage) ([]domain.Span, error) {
	if page.Limit < 0 || page.Limit > MaxPageLimit {
		return nil, errs.Field("limit", "must be a whole number from 1 to %d", MaxPageLimit)
	}
	if _, err := s.sessions.Get(ctx, p, sessionID); err != nil {
		return nil, err
	}
	return s.store.ListSpans(ctx, sessionID, !summary, page)
}

// Get returns one span whole. Returns not_found.
func (s *Service) Get(ctx context.Context, p domain.Principal, sessionID, spanID string) (domain.Span, error) {
	if _, err := s.sessions.Get(ctx, p, sessionID); err != nil {
		return domain.Span{}, err
	}
	return s.store.FindSpan(ctx, sessionID, spanID)
}

// Prune deletes spans older than trace_retention_days (0 keeps them).
func (s *Service) Prune(ctx context.Context) (int, error) {
	days, err := s.settings.Int(ctx, settings.KeyTraceRetentionDays)
	if err != nil || days <= 0 {
		return 0, err
	}
	return s.store.DeleteSpansBefore(ctx, s.clock.Now().Add(-time.Duration(days)*24*time.Hour))
}
