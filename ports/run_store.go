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
	// ListRunningRuns returns ownerID's running runs, on whichever replica
	// runs them, oldest first.
	ListRunningRuns(ctx context.Context, ownerID string) ([]domain.Run, error)
	// FailOrphanedRuns ends the runs left running by replicas that are
	// gone (a crash or kill; see Orphans). Each ends as an error with the
	// sweep's code and message, its last_seq one past the higher of its
	// last checkpoint's and its seq mark; they are returned as they were
	// (PartialOutput, SeqMark and CallsInFlight included). The gone replicas leave the roll in the same transaction.
	FailOrphanedRuns(ctx context.Context, o Orphans) ([]domain.Run, error)
	// CheckpointRun records a running run's progress: the last seq it sent
	// and what the model call in flight has streamed. A run that is no
	// longer running is left alone.
	CheckpointRun(ctx context.Context, id string, lastSeq int64, partial string) error
	// MarkRunSeq raises a run's seq mark to upto (never lowers it): the
	// run may number events up to it.
	MarkRunSeq(ctx context.Context, id string, upto int64) error
	// RecordCallsInFlight sets the tool calls a running run has started
	// and not yet recorded ("" for none). A run that is no longer running
	// is left alone.
	RecordCallsInFlight(ctx context.Context, id, calls string) error
	// CountLiveRuns says how many of ownerID's runs are live (see
	// domain.TooManyRuns): running, or paused with every call decided.
	CountLiveRuns(ctx context.Context, ownerID string) (int, error)
}

// Orphans says which running runs a sweep ends: those of every replica
// but Self that has not beaten since AliveSince, and Self's own when
// Restarted (at start, what Self runs is its previous life's).
type Orphans struct {
	Self       string
	Restarted  bool
	AliveSince time.Time
	// Code and Message are the error the runs end with, at At.
	Code, Message string
	At            time.Time
}
