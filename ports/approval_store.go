package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// ApprovalStore keeps the decisions paused runs wait for. Filing and ending
// a pause happen inside a SessionTx (with the entries they go with); this
// port reads, decides and resumes.
type ApprovalStore interface {
	// ListApprovals returns an owner's pending approvals, oldest first, of
	// one session and the task sessions it spawned (their pauses are
	// decided from it), or (sessionID "") of all. An approval's TaskID
	// names the task whose attempt is its run.
	ListApprovals(ctx context.Context, ownerID, sessionID string) ([]domain.Approval, error)
	// FindApproval returns not_found when absent.
	FindApproval(ctx context.Context, id string) (domain.Approval, error)
	// FindApprovalByCall returns an owner's pending approval of a tool
	// call; not_found when absent.
	FindApprovalByCall(ctx context.Context, ownerID, toolCallID string) (domain.Approval, error)
	// DecideApproval records a decision on a pending approval (one wins:
	// not_found when it is no longer pending) and returns every approval of
	// its run. When it is the run's last pending one (the decision resumes
	// the run) and maxLive > 0, it is refused — rate_limited
	// (domain.TooManyRuns), nothing recorded — while the owner has maxLive
	// live runs besides this one; counted in the write, so starts and
	// resumes racing on any replica cannot pass the cap together.
	DecideApproval(ctx context.Context, id, status, scope, reason string, at time.Time, maxLive int) ([]domain.Approval, error)
	// ExpiredApprovals returns pending approvals filed before cutoff.
	ExpiredApprovals(ctx context.Context, cutoff time.Time) ([]domain.Approval, error)
	// ResumeRun moves a paused run back to running on replica — only one
	// caller wins (ok false for the others) — and hands back its resume
	// state and the decisions, deleting them in the same transaction.
	ResumeRun(ctx context.Context, runID, replica string, at time.Time) (run domain.Run, state domain.PauseState, decided []domain.Approval, ok bool, err error)
	// ListInterruptedRuns returns every paused run, for start-up.
	ListInterruptedRuns(ctx context.Context) ([]domain.Run, error)
	// FindPausedRun returns a session's paused run; ok false when none.
	FindPausedRun(ctx context.Context, sessionID string) (run domain.Run, ok bool, err error)
	// PauseState returns a paused run's resume state.
	PauseState(ctx context.Context, runID string) (domain.PauseState, error)
}
