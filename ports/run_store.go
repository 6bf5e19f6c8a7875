package ports

import (
	"context"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// RunStore keeps the run rows.
type RunStore interface {
	// CreateRun inserts a run row.
	CreateRun(ctx context.Context, r domain.Run) error
	// UpdateRun stores a run's status, sequence, outcome and times.
	UpdateRun(ctx context.Context, r domain.Run) error
	// FindRun returns not_found when absent.
	FindRun(ctx context.Context, id string) (domain.Run, error)
	// ListSessionRuns returns a session's runs, oldest first.
	ListSessionRuns(ctx context.Context, sessionID string) ([]domain.Run, error)
	// FailRunningRuns ends every run left running (a crash or kill) as an
	// error with the given code and message, its last_seq one past its last
	// checkpoint's, and returns them as they were (PartialOutput included).
	FailRunningRuns(ctx context.Context, code, message string, at time.Time) ([]domain.Run, error)
	// CheckpointRun records a running run's progress: the last seq it sent
	// and what the model call in flight has streamed. A run that is no
	// longer running is left alone.
	CheckpointRun(ctx context.Context, id string, lastSeq int64, partial string) error
}
