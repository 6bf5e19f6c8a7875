// Package traces serves a session's trace spans — the summary listing
// without payloads, a span whole on demand — and prunes old ones.
package traces

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
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

// List returns a session's spans, oldest first; summary leaves every payload
// out, so opening a long session's traces costs its rows, not its bytes.
// Returns not_found for a session that is not the caller's.
func (s *Service) List(ctx context.Context, p domain.Principal, sessionID string, summary bool) ([]domain.Span, error) {
	if _, err := s.sessions.Get(ctx, p, sessionID); err != nil {
		return nil, err
	}
	return s.store.ListSpans(ctx, sessionID, !summary)
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
