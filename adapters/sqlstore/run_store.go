package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

const runColumns = `id, session_id, owner_id, agent_config_id, project_id, input, status, last_seq, error_code, error_message,
	final_output, created_at, updated_at, ended_at, partial_output, replica_id, seq_mark, calls_in_flight`

// runRow adapts scanRun to collect.
func runRow(r rowScanner) (domain.Run, error) { return scanRun(r) }

func scanRun(r rowScanner, extra ...any) (domain.Run, error) {
	var x domain.Run
	var status string
	var created, updated int64
	var ended sql.NullInt64
	err := r.Scan(append([]any{&x.ID, &x.SessionID, &x.OwnerID, &x.AgentConfigID, &x.ProjectID, &x.Input, &status, &x.LastSeq, &x.ErrorCode,
		&x.ErrorMessage, &x.FinalOutput, &created, &updated, &ended, &x.PartialOutput, &x.Replica,
		&x.SeqMark, &x.CallsInFlight}, extra...)...)
	x.Status = domain.RunStatus(status)
	x.CreatedAt, x.UpdatedAt, x.EndedAt = fromMS(created), fromMS(updated), fromNullMS(ended)
	return x, err
}

// CreateRun implements ports.RunStore.
func (db *DB) CreateRun(ctx context.Context, r domain.Run) error {
	return insertRun(ctx, db.writer(), r)
}

// UpdateRun implements ports.RunStore.
func (db *DB) UpdateRun(ctx context.Context, r domain.Run) error {
	return updateRun(ctx, db.writer(), r)
}

// CreateRun implements ports.SessionWriter.
func (s sessionQ) CreateRun(ctx context.Context, r domain.Run) error {
	if r.SessionID != s.id {
		return errs.E(errs.Internal, "run %s is not of session %s", r.ID, s.id)
	}
	if r.Status == domain.RunRunning {
		// One process refuses this in memory (the hub's session slot);
		// replicas each have their own, so the store decides between them.
		var holder string
		err := s.q.QueryRowContext(ctx, `SELECT id FROM runs WHERE session_id = ? AND status = 'running' AND id <> ? LIMIT 1`, s.id, r.ID).Scan(&holder)
		if err == nil {
			return errs.E(errs.Conflict, "the session has an active run (%s)", holder)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return translate(err)
		}
	}
	return insertRun(ctx, s.q, r)
}

// EndRun implements ports.SessionWriter.
func (s sessionQ) EndRun(ctx context.Context, r domain.Run) error { return updateRun(ctx, s.q, r) }

// HoldRun implements ports.SessionWriter.
func (s sessionQ) HoldRun(ctx context.Context, runID, replica string) error {
	var run domain.Run
	var status string
	err := s.q.QueryRowContext(ctx, `SELECT status, replica_id FROM runs WHERE id = ?`, runID).Scan(&status, &run.Replica)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("run")
	}
	if err != nil {
		return translate(err)
	}
	run.ID, run.Status = runID, domain.RunStatus(status)
	return domain.HeldBy(run, replica)
}

func insertRun(ctx context.Context, q querier, r domain.Run) error {
	_, err := q.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.SessionID, r.OwnerID, r.AgentConfigID, r.ProjectID, r.Input, string(r.Status), r.LastSeq, r.ErrorCode,
		r.ErrorMessage, r.FinalOutput, ms(r.CreatedAt), ms(r.UpdatedAt), msPtr(r.EndedAt), r.PartialOutput, r.Replica,
		r.SeqMark, r.CallsInFlight)
	return translate(err)
}

func updateRun(ctx context.Context, q querier, r domain.Run) error {
	res, err := q.ExecContext(ctx, `UPDATE runs SET agent_config_id = ?, status = ?, last_seq = ?, error_code = ?, error_message = ?,
		final_output = ?, updated_at = ?, ended_at = ?, partial_output = ?, calls_in_flight = ? WHERE id = ?`,
		r.AgentConfigID, string(r.Status), r.LastSeq, r.ErrorCode, r.ErrorMessage, r.FinalOutput, ms(r.UpdatedAt), msPtr(r.EndedAt),
		r.PartialOutput, r.CallsInFlight, r.ID)
	return affected(res, err, "run")
}

// FindRun implements ports.RunStore.
func (db *DB) FindRun(ctx context.Context, id string) (domain.Run, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound("run")
	}
	return r, translate(err)
}

// ListSessionRuns implements ports.RunStore.
func (db *DB) ListSessionRuns(ctx context.Context, sessionID string) ([]domain.Run, error) {
	return collect(ctx, db.read, runRow, `SELECT `+runColumns+` FROM runs WHERE session_id = ? ORDER BY id`, sessionID)
}

// ListRunningRuns implements ports.RunStore. The first term repeats the
// runs_status index's WHERE word for word, so SQLite sees the partial
// index serves the query (see liveRuns).
func (db *DB) ListRunningRuns(ctx context.Context, ownerID string) ([]domain.Run, error) {
	return collect(ctx, db.read, runRow, `SELECT `+runColumns+` FROM runs WHERE status IN ('running', 'interrupted')
		AND status = 'running' AND owner_id = ? ORDER BY id`, ownerID)
}

// orphaned is the condition of a run left running by a replica that is
// gone: self's when restarted (the first two arguments: self, 1), or
// another's that has not beaten since the fourth (the third: self).
const orphaned = `status = 'running' AND ((replica_id = ? AND ? = 1) OR
	(replica_id <> ? AND replica_id NOT IN (SELECT id FROM replicas WHERE seen_at >= ?)))`

// FailOrphanedRuns implements ports.RunStore.
func (db *DB) FailOrphanedRuns(ctx context.Context, o ports.Orphans) ([]domain.Run, error) {
	var out []domain.Run
	which := []any{o.Self, o.Restarted, o.Self, ms(o.AliveSince)}
	err := db.tx(ctx, func(tx txQ) error {
		var err error
		if out, err = collect(ctx, tx, runRow, `SELECT `+runColumns+` FROM runs WHERE `+orphaned+` ORDER BY id`, which...); err != nil {
			return err
		}
		// last_seq moves past the last checkpoint and the seq mark: the
		// error is numbered after anything its watchers may hold.
		if _, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'error', error_code = ?, error_message = ?, updated_at = ?,
			ended_at = ?, last_seq = CASE WHEN seq_mark > last_seq THEN seq_mark ELSE last_seq END + 1 WHERE `+orphaned, append([]any{o.Code, o.Message, ms(o.At), ms(o.At)}, which...)...); err != nil {
			return translate(err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM replicas WHERE seen_at < ? AND id <> ?`, ms(o.AliveSince), o.Self)
		return translate(err)
	})
	return out, err
}

// liveRuns counts an owner's live runs (the argument): running, or paused
// with no call left pending — its last decision is resuming it. The
// runs_status index holds only running and paused runs; the first term
// repeats its WHERE word for word, the form SQLite needs to see the
// partial index serves the query (without it every start and its
// commit scanned the whole history of runs, twice).
const liveRuns = `SELECT COUNT(*) FROM runs r WHERE r.status IN ('running', 'interrupted') AND r.owner_id = ? AND
	(r.status = 'running' OR NOT EXISTS (SELECT 1 FROM approvals a WHERE a.run_id = r.id AND a.status = 'pending'))`

// CountLiveRuns implements ports.RunStore.
func (db *DB) CountLiveRuns(ctx context.Context, ownerID string) (int, error) {
	return countLiveRuns(ctx, db.read, ownerID)
}

// CountLiveRuns implements ports.SessionWriter.
func (s sessionQ) CountLiveRuns(ctx context.Context, ownerID string) (int, error) {
	return countLiveRuns(ctx, s.q, ownerID)
}

func countLiveRuns(ctx context.Context, q querier, ownerID string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, liveRuns, ownerID).Scan(&n)
	return n, translate(err)
}

// CheckpointRun implements ports.RunStore.
func (db *DB) CheckpointRun(ctx context.Context, id string, lastSeq int64, partial string) error {
	_, err := db.exec(ctx, `UPDATE runs SET last_seq = ?, partial_output = ? WHERE id = ? AND status = 'running'`,
		lastSeq, partial, id)
	return err
}

// MarkRunSeq implements ports.RunStore.
func (db *DB) MarkRunSeq(ctx context.Context, id string, upto int64) error {
	_, err := db.exec(ctx, `UPDATE runs SET seq_mark = ? WHERE id = ? AND seq_mark < ?`, upto, id, upto)
	return err
}

// RecordCallsInFlight implements ports.RunStore.
func (db *DB) RecordCallsInFlight(ctx context.Context, id, calls string) error {
	_, err := db.exec(ctx, `UPDATE runs SET calls_in_flight = ? WHERE id = ? AND status = 'running'`, calls, id)
	return err
}
