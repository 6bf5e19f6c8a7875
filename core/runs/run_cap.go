package runs

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// What max_runs_per_user holds to (see domain.TooManyRuns for what is
// live): every run started on a user's behalf — a message over REST, the
// WebSocket or /mcp, a trigger's turn, a background task's attempt, a
// workflow's first step and a step a person cleared — and the decision
// that resumes a paused run. Two kinds of run carry on work instead and
// are not refused (they are counted while they run): a workflow's next
// step, launched as its previous step's run ends, and a wake-up reading
// finished tasks' results. Each takes the place of a run of the same user
// that has just ended, one per conversation at most; refusing them would
// fail a workflow half-way or strand results nobody is told about.

// admit reads max_runs_per_user and refuses (rate_limited) a start when
// ownerID already has that many live runs: the early answer, before a
// start does anything it would have to undo. The cap itself is held by
// capIn, in the transaction that records the run.
func (s *Service) admit(ctx context.Context, ownerID string) (int, error) {
	limit, err := s.d.Settings.Int(ctx, settings.KeyMaxRunsPerUser)
	if err != nil {
		return 0, err
	}
	live, err := s.d.Runs.CountLiveRuns(ctx, ownerID)
	if err != nil {
		return 0, err
	}
	if live >= limit {
		return 0, domain.TooManyRuns(limit)
	}
	return limit, nil
}

// CheckRunCap refuses (rate_limited) work that would start a run for
// ownerID while they have max_runs_per_user live runs: for callers that
// set up more than a run before starting it (a workflow start, a task's
// retry, a cleared step), so a refusal leaves nothing half-made.
func (s *Service) CheckRunCap(ctx context.Context, ownerID string) error {
	_, err := s.admit(ctx, ownerID)
	return err
}

// capIn is what a start runs in the transaction that records its run
// (then also, when set): writers are serialized on both engines, so the
// count — which holds the run just created — sees every other start's
// row, from any replica, and no two starts can pass the cap together.
func capIn(ctx context.Context, ownerID string, limit int, also func(tx ports.SessionTx) error) func(tx ports.SessionTx) error {
	return func(tx ports.SessionTx) error {
		live, err := tx.CountLiveRuns(ctx, ownerID)
		if err != nil {
			return err
		}
		if live > limit {
			return domain.TooManyRuns(limit)
		}
		if also == nil {
			return nil
		}
		return also(tx)
	}
}
