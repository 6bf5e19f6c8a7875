package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-server/agents-server/core/domain"
)

// SessionReader reads one session and its entries inside a snapshot, so a
// response assembled from several queries sees one state.
type SessionReader interface {
	// Session returns the session row.
	Session(ctx context.Context) (domain.Session, error)
	// EntryMetas returns the lifted columns of every entry with seq >=
	// fromSeq, oldest first.
	EntryMetas(ctx context.Context, fromSeq int64) ([]domain.EntryMeta, error)
	// ContentEntries returns the newest limit content entries (not updates
	// or leaves) with seq < beforeSeq, oldest first, bodies unparsed; limit
	// 0 means all and beforeSeq 0 means no bound.
	ContentEntries(ctx context.Context, beforeSeq int64, limit int) ([]domain.RawEntry, error)
	// Entries returns every entry of every kind with seq <= maxSeq (0: all),
	// oldest first.
	Entries(ctx context.Context, maxSeq int64) ([]domain.Entry, error)
	// UpdatesTargeting returns the update entries naming any of the targets
	// (entry ids or call ids), oldest first.
	UpdatesTargeting(ctx context.Context, targets []string) ([]domain.Entry, error)
	// FindEntry returns one entry by its entry id; not_found when absent.
	FindEntry(ctx context.Context, entryID string) (domain.Entry, error)
	// EntriesByID returns the entries with those entry ids, oldest first.
	EntriesByID(ctx context.Context, ids []string) ([]domain.Entry, error)
	// FindMeta returns one entry's lifted columns; not_found when absent.
	FindMeta(ctx context.Context, entryID string) (domain.EntryMeta, error)
	// MetasByBranchParent returns the content metas whose branch parent is
	// one of parents: the siblings at those branch points.
	MetasByBranchParent(ctx context.Context, parents []string) ([]domain.EntryMeta, error)
	// SubtreeTip returns the id of the newest content entry in the subtree
	// rooted at entryID (entryID itself when it has no content descendant).
	SubtreeTip(ctx context.Context, entryID string) (string, error)
	// SeqOfRow returns the seq of the entry with that row id; not_found
	// when the row is not this session's.
	SeqOfRow(ctx context.Context, rowID string) (int64, error)
	// LatestContextProfile returns the newest prompt profile a run wrote;
	// ok is false before any run built the session's agent.
	LatestContextProfile(ctx context.Context) (profile json.RawMessage, ok bool, err error)
}

// SessionWriter changes one session inside a write transaction.
type SessionWriter interface {
	// InsertEntries stores fully formed entries (ids, row ids, seqs,
	// parents) with their lifted metas.
	InsertEntries(ctx context.Context, entries []domain.Entry, metas []domain.EntryMeta) error
	// SaveState moves the session's tip, last seq, totals and activity time.
	SaveState(ctx context.Context, tipID string, lastSeq int64, totals domain.ContextTotals, at time.Time) error
	// FileApprovals pauses a run: its pending approvals and resume state,
	// with the run row at status interrupted.
	FileApprovals(ctx context.Context, approvals []domain.Approval, run domain.Run, state domain.PauseState) error
	// EndPause ends a paused run for good (superseded, stopped, expired):
	// only one caller wins (false for the others); its approvals go.
	EndPause(ctx context.Context, run domain.Run) (bool, error)
	// SetRunContext records on the session row the agent a run uses and
	// the planning phase it works in.
	SetRunContext(ctx context.Context, agentID string, planning bool, at time.Time) error
	// CreateRun inserts one of the session's run rows; conflict when its id
	// is taken, or when a running run holds the session (replicas starting
	// runs on one session at once: one wins). A run starts in the
	// transaction that files its input, so a crash keeps both or neither.
	CreateRun(ctx context.Context, run domain.Run) error
	// CountLiveRuns is RunStore.CountLiveRuns in this transaction: writers
	// are serialized, so a start that counts after creating its run row
	// sees every other start's, on every replica.
	CountLiveRuns(ctx context.Context, ownerID string) (int, error)
	// EndRun stores how a run ended (as RunStore.UpdateRun does), in the
	// transaction that files its closing entries; not_found when absent.
	EndRun(ctx context.Context, run domain.Run) error
	// HoldRun is the fence of a run's writes: conflict unless the run's
	// row says it is running on replica — another replica's failover has
	// not ended it — and not_found when absent. A replica that lost a run
	// while cut off writes nothing more for it.
	HoldRun(ctx context.Context, runID, replica string) error
	// MarkCompacted folds entries (by entry id): they leave what the model
	// sees and stay readable. It returns how many were not folded before.
	MarkCompacted(ctx context.Context, ids []string) (int, error)
	// FinalizeTask is TaskStore.FinalizeTask in this transaction: a task
	// attempt ends with its run.
	FinalizeTask(ctx context.Context, f TaskFinal) (bool, error)
	// AdvanceTask moves a working workflow task on to its next step in
	// the transaction that records its step run's end: a compare-and-set
	// on (working, RunID), so a stale attempt cannot drive it. false when
	// the task moved.
	AdvanceTask(ctx context.Context, a TaskAdvance) (bool, error)
	// RecordTaskState writes a live task's state while runID is its
	// attempt, in the transaction that starts that run (a workflow's
	// launch log); conflict when the task moved.
	RecordTaskState(ctx context.Context, taskID, runID string, state []byte, at time.Time) error
	// SaveContextProfile is SessionStore.SaveContextProfile in this
	// transaction: a run's profile goes with its first recorded turn (or
	// its end), not in a commit of its own.
	SaveContextProfile(ctx context.Context, runID string, profile json.RawMessage, at time.Time) error
	// SaveSpans is TraceStore.SaveSpans in this transaction: a run's spans
	// go with its turn or its end, not in a commit of their own.
	SaveSpans(ctx context.Context, spans []domain.Span) error
	// SettleWakeups is TaskStore.SettleWakeups in this transaction: debts
	// are paid by the notification this transaction files — every one of
	// them, or conflict when another payer settled one first.
	SettleWakeups(ctx context.Context, ids []string, at time.Time) error
}

// SessionTx is a write transaction over one session.
type SessionTx interface {
	SessionReader
	SessionWriter
}

// SessionStore keeps sessions and their entry trees.
type SessionStore interface {
	// CreateSession inserts a session row.
	CreateSession(ctx context.Context, s domain.Session) error
	// FindSession returns not_found when absent.
	FindSession(ctx context.Context, id string) (domain.Session, error)
	// ListSessions returns the visible (not hidden) sessions of ownerID, or
	// of everyone when ownerID is "", pinned first, then by latest activity.
	ListSessions(ctx context.Context, ownerID string) ([]domain.Session, error)
	// UpdateSession runs change on the stored row in one transaction and
	// stores the name, pinned, planning and agent fields it leaves.
	UpdateSession(ctx context.Context, id string, change func(*domain.Session) error) (domain.Session, error)
	// DeleteSession removes a session and everything it holds.
	DeleteSession(ctx context.Context, id string) error
	// ReadSession runs fn over a read snapshot of one session; not_found
	// when it does not exist.
	ReadSession(ctx context.Context, id string, fn func(r SessionReader) error) error
	// WriteSession runs fn in one write transaction over one session.
	WriteSession(ctx context.Context, id string, fn func(tx SessionTx) error) error
	// CreateSessionWithEntries inserts a new session with its entries (a
	// fork) in one transaction.
	CreateSessionWithEntries(ctx context.Context, s domain.Session, entries []domain.Entry, metas []domain.EntryMeta) error
	// SaveContextProfile records what a run's build put in front of the
	// conversation (instruction layers and tools, in characters).
	SaveContextProfile(ctx context.Context, sessionID, runID string, profile json.RawMessage, at time.Time) error
}
