// Package approvals keeps the approval gate's records and rules: the
// pending decisions of paused runs (listing them with their previews,
// checking and recording a decision, finding the expired ones), the rows a
// pause files and what a decided or abandoned pause leaves of its calls,
// the shell commands a session trusts, and the desk where decisions land
// (Desk: the last one resumes the run, through the run engine's callback;
// a pause superseded, cancelled or expired is ended and recorded). Pausing
// a live run stays with core/runs, which builds its desk.
package approvals

import (
	"context"
	"log/slog"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/core/tools"
	"github.com/agents-server/agents-server/ports"
)

// Sessions finds the sessions approvals belong to.
type Sessions interface {
	// Get returns a session the caller may read (not_found otherwise).
	Get(ctx context.Context, p domain.Principal, id string) (domain.Session, error)
}

// Deps are what the gate works with.
type Deps struct {
	Store    ports.ApprovalStore
	Sessions Sessions
	Settings *settings.Service
	// Toolsets draw the previews of their tools' approvals (the
	// tools.Previewer among them).
	Toolsets []tools.Toolset
	Clock    ports.Clock
	Log      *slog.Logger
}

// Service lists, checks and records decisions, and holds the session
// trust they grant.
type Service struct {
	d     Deps
	trust *TrustStore
}

// New returns a Service with an empty trust store.
func New(d Deps) *Service { return &Service{d: d, trust: NewTrustStore()} }

// Trust is the shell commands sessions trust, which decisions extend.
func (s *Service) Trust() *TrustStore { return s.trust }

// List lists the caller's pending decisions: of one session, or (""), of
// all, each with its preview. Returns not_found for a session that is not
// the caller's.
func (s *Service) List(ctx context.Context, p domain.Principal, sessionID string) ([]domain.Approval, error) {
	if sessionID != "" {
		if _, err := s.d.Sessions.Get(ctx, p, sessionID); err != nil {
			return nil, err
		}
	}
	list, err := s.d.Store.ListApprovals(ctx, p.User.ID, sessionID)
	return s.withPreviews(ctx, list), err
}

// ByCall finds the caller's pending approval of a tool call (the
// WebSocket names calls, not approvals). Returns not_found.
func (s *Service) ByCall(ctx context.Context, p domain.Principal, toolCallID string) (domain.Approval, error) {
	return s.d.Store.FindApprovalByCall(ctx, p.User.ID, toolCallID)
}

// withPreviews adds to each approval what its card shows, as the toolsets
// that draw previews draw them.
func (s *Service) withPreviews(ctx context.Context, list []domain.Approval) []domain.Approval {
	for _, ts := range s.d.Toolsets {
		p, ok := ts.(tools.Previewer)
		if !ok {
			continue
		}
		for i := range list {
			if err := p.Preview(ctx, &list[i]); err != nil {
				s.d.Log.Warn("drawing an approval's preview failed", "approval_id", list[i].ID, "tool", list[i].ToolName, "err", err)
			}
		}
	}
	return list
}

// Pending is the caller's undecided approval a decision of scope names.
// Returns validation (scope) or not_found (unknown, someone else's, or
// already decided or superseded).
func (s *Service) Pending(ctx context.Context, p domain.Principal, approvalID string, scope domain.ApprovalScope) (domain.Approval, error) {
	if err := domain.ValidScope(scope); err != nil {
		return domain.Approval{}, err
	}
	a, err := s.d.Store.FindApproval(ctx, approvalID)
	if err == nil {
		err = a.CheckOwner(p)
	}
	if err == nil && a.Status != domain.ApprovalPending {
		err = errs.E(errs.NotFound, "approval not found")
	}
	if err != nil {
		return domain.Approval{}, err
	}
	return a, nil
}

// Record records a decision on a pending approval and returns every
// approval of its run, as they now stand; an approved shell command's
// scope extends the session's trust. The decision that would resume the
// run is refused past the owner's max_runs_per_user live runs, before
// anything is recorded (rate_limited): the approval stays pending, to be
// decided again once a run ends.
func (s *Service) Record(ctx context.Context, a domain.Approval, approve bool, scope domain.ApprovalScope, reason string) ([]domain.Approval, error) {
	status := domain.ApprovalRejected
	if approve {
		status = domain.ApprovalApproved
	}
	limit, err := s.d.Settings.Int(ctx, settings.KeyMaxRunsPerUser)
	if err != nil {
		return nil, err
	}
	all, err := s.d.Store.DecideApproval(ctx, a.ID, status, string(scope), reason, s.d.Clock.Now(), limit)
	if err != nil {
		return nil, err
	}
	if approve {
		s.trust.GrantApproved(a, scope)
	}
	return all, nil
}

// Expired is one approval per run that waited past approval_ttl_minutes,
// and that setting (0, with nothing: approvals never expire).
func (s *Service) Expired(ctx context.Context) ([]domain.Approval, int, error) {
	ttl, err := s.d.Settings.Int(ctx, settings.KeyApprovalTTLMinutes)
	if err != nil || ttl <= 0 {
		return nil, 0, err
	}
	expired, err := s.d.Store.ExpiredApprovals(ctx, s.d.Clock.Now().Add(-time.Duration(ttl)*time.Minute))
	if err != nil {
		return nil, 0, err
	}
	var out []domain.Approval
	seen := map[string]bool{}
	for _, a := range expired {
		if !seen[a.RunID] {
			seen[a.RunID] = true
			out = append(out, a)
		}
	}
	return out, ttl, nil
}
