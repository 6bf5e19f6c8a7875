// Package runcap holds max_runs_per_user: how many live runs one user
// may have at once.
//
// The cap holds to (see domain.TooManyRuns for what is live) every run
// started on a user's behalf — a message over REST, the WebSocket or /mcp,
// a trigger's turn, a background task's attempt, a workflow's first step
// and a step a person cleared — and the decision that resumes a paused
// run. Two kinds of run carry on work instead and are not refused (they
// are counted while they run): a workflow's next step, launched as its
// previous step's run ends, and a wake-up reading finished tasks' results.
// Each takes the place of a run of the same user that has just ended, one
// per conversation at most; refusing them would fail a workflow half-way
// or strand results nobody is told about.
package runcap

import (
	"context"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/settings"
	"github.com/agents-server/agents-server/ports"
)

// Counter counts a user's live runs.
type Counter interface {
	CountLiveRuns(ctx context.Context, ownerID string) (int, error)
}

// Admit reads max_runs_per_user and refuses (rate_limited) a start when
// ownerID already has that many live runs: the early answer, before a
// start does anything it would have to undo. The cap itself is held by
// In, in the transaction that records the run. It returns the cap.
func Admit(ctx context.Context, st *settings.Service, runs Counter, ownerID string) (int, error) {
	limit, err := st.Int(ctx, settings.KeyMaxRunsPerUser)
	if err != nil {
		return 0, err
	}
	live, err := runs.CountLiveRuns(ctx, ownerID)
	if err != nil {
		return 0, err
	}
	if live >= limit {
		return 0, domain.TooManyRuns(limit)
	}
	return limit, nil
}

// In is what a start runs in the transaction that records its run (then
// also, when set): writers are serialized on both engines, so the count —
// which holds the run just created — sees every other start's row, from
// any replica, and no two starts can pass the cap together.
func In(ctx context.Context, ownerID string, limit int, also func(tx ports.SessionTx) error) func(tx ports.SessionTx) error {
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
