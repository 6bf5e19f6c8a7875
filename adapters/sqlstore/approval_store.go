package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

const approvalColumns = `id, session_id, run_id, owner_id, tool_call_id, tool_name, arguments, status, scope, reason, created_at, decided_at`

// approvalSelect reads approvalColumns plus the task whose attempt filed
// the approval, if any.
const approvalSelect = approvalColumns + `, COALESCE((SELECT t.id FROM tasks t WHERE t.run_id = approvals.run_id), '')`

func scanApproval(r rowScanner) (domain.Approval, error) {
	var a domain.Approval
	var created int64
	var decided sql.NullInt64
	err := r.Scan(&a.ID, &a.SessionID, &a.RunID, &a.OwnerID, &a.ToolCallID, &a.ToolName, &a.Arguments, &a.Status, &a.Scope, &a.Reason,
		&created, &decided, &a.TaskID)
	a.CreatedAt, a.DecidedAt = fromMS(created), fromNullMS(decided)
	return a, err
}

// ListApprovals implements ports.ApprovalStore.
func (db *DB) ListApprovals(ctx context.Context, ownerID, sessionID string) ([]domain.Approval, error) {
	q := `SELECT ` + approvalSelect + ` FROM approvals WHERE owner_id = ? AND status = 'pending'`
	args := []any{ownerID}
	if sessionID != "" {
		// A session's list holds its tasks' pauses too: they are decided
		// from the conversation that spawned them.
		q += ` AND (session_id = ? OR session_id IN (SELECT id FROM sessions WHERE parent_session_id = ?))`
		args = append(args, sessionID, sessionID)
	}
	return collect(ctx, db.read, scanApproval, q+` ORDER BY id`, args...)
}

func findApproval(ctx context.Context, q querier, where string, args ...any) (domain.Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalSelect+` FROM approvals WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return a, notFound("approval")
	}
	return a, translate(err)
}

// FindApproval implements ports.ApprovalStore.
func (db *DB) FindApproval(ctx context.Context, id string) (domain.Approval, error) {
	return findApproval(ctx, db.read, "id = ?", id)
}

// FindApprovalByCall implements ports.ApprovalStore.
func (db *DB) FindApprovalByCall(ctx context.Context, ownerID, toolCallID string) (domain.Approval, error) {
	return findApproval(ctx, db.read, "owner_id = ? AND tool_call_id = ? AND status = 'pending' ORDER BY id DESC LIMIT 1", ownerID, toolCallID)
}

// DecideApproval implements ports.ApprovalStore.
func (db *DB) DecideApproval(ctx context.Context, id, status, scope, reason string, at time.Time, maxLive int) ([]domain.Approval, error) {
	var out []domain.Approval
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE approvals SET status = ?, scope = ?, reason = ?, decided_at = ? WHERE id = ? AND status = 'pending'`,
			status, scope, reason, ms(at), id)
		if err := affected(r, err, "approval"); err != nil {
			return err
		}
		a, err := findApproval(ctx, tx, "id = ?", id)
		if err != nil {
			return err
		}
		out, err = collect(ctx, tx, scanApproval, `SELECT `+approvalSelect+` FROM approvals WHERE run_id = ? ORDER BY id`, a.RunID)
		if err != nil || maxLive <= 0 || slices.ContainsFunc(out, func(x domain.Approval) bool { return x.Status == domain.ApprovalPending }) {
			return err
		}
		// The run resumes on this decision, so it is live from now on: the
		// count holds it too.
		live, err := countLiveRuns(ctx, tx, a.OwnerID)
		if err == nil && live > maxLive {
			err = domain.TooManyRuns(maxLive)
		}
		return err
	})
	return out, err
}

// ExpiredApprovals implements ports.ApprovalStore.
func (db *DB) ExpiredApprovals(ctx context.Context, cutoff time.Time) ([]domain.Approval, error) {
	return collect(ctx, db.read, scanApproval, `SELECT `+approvalSelect+` FROM approvals WHERE status = 'pending' AND created_at < ? ORDER BY id`, ms(cutoff))
}

// ResumeRun implements ports.ApprovalStore.
func (db *DB) ResumeRun(ctx context.Context, runID, replica string, at time.Time) (domain.Run, domain.PauseState, []domain.Approval, bool, error) {
	var run domain.Run
	var state domain.PauseState
	var decided []domain.Approval
	won := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'running', replica_id = ?, updated_at = ? WHERE id = ? AND status = 'interrupted'`,
			replica, ms(at), runID)
		if err != nil {
			return translate(err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return nil // another decision resumed it, or it ended
		}
		won = true
		var raw string
		run, err = scanRun(tx.QueryRowContext(ctx, `SELECT `+runColumns+`, resume_state FROM runs WHERE id = ?`, runID), &raw)
		if err != nil {
			return translate(err)
		}
		if err := json.Unmarshal([]byte(raw), &state); err != nil {
			return errs.Wrap(errs.Internal, err, "run %s has a malformed resume state", runID)
		}
		if decided, err = collect(ctx, tx, scanApproval, `SELECT `+approvalSelect+` FROM approvals WHERE run_id = ? ORDER BY id`, runID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM approvals WHERE run_id = ?`, runID)
		return translate(err)
	})
	return run, state, decided, won, err
}

// ListInterruptedRuns implements ports.ApprovalStore.
func (db *DB) ListInterruptedRuns(ctx context.Context) ([]domain.Run, error) {
	return collect(ctx, db.read, runRow, `SELECT `+runColumns+` FROM runs WHERE status = 'interrupted' ORDER BY id`)
}

// FindPausedRun implements ports.ApprovalStore.
func (db *DB) FindPausedRun(ctx context.Context, sessionID string) (domain.Run, bool, error) {
	r, err := scanRun(db.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE session_id = ? AND status = 'interrupted'
		ORDER BY id DESC LIMIT 1`, sessionID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, translate(err)
}

// FileApprovals implements ports.SessionWriter.
func (s sessionQ) FileApprovals(ctx context.Context, approvals []domain.Approval, run domain.Run, state domain.PauseState) error {
	for _, a := range approvals {
		if _, err := s.q.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', '', '', ?, NULL)`,
			a.ID, a.SessionID, a.RunID, a.OwnerID, a.ToolCallID, a.ToolName, a.Arguments, ms(a.CreatedAt)); err != nil {
			return translate(err)
		}
	}
	raw, err := json.Marshal(state)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "encode the resume state of run %s", run.ID)
	}
	r, err := s.q.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', agent_config_id = ?, last_seq = ?, resume_state = ?, updated_at = ?
		WHERE id = ? AND status = 'running'`, run.AgentConfigID, run.LastSeq, string(raw), ms(run.UpdatedAt), run.ID)
	return affected(r, err, "running run")
}

// EndPause implements ports.SessionWriter.
func (s sessionQ) EndPause(ctx context.Context, run domain.Run) (bool, error) {
	r, err := s.q.ExecContext(ctx, `UPDATE runs SET status = ?, error_code = ?, error_message = ?, resume_state = '', updated_at = ?,
		ended_at = ? WHERE id = ? AND status = 'interrupted'`, string(run.Status), run.ErrorCode, run.ErrorMessage, ms(run.UpdatedAt),
		msPtr(run.EndedAt), run.ID)
	if err != nil {
		return false, translate(err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return false, nil
	}
	_, err = s.q.ExecContext(ctx, `DELETE FROM approvals WHERE run_id = ?`, run.ID)
	return true, translate(err)
}

// PauseState implements ports.ApprovalStore.
func (db *DB) PauseState(ctx context.Context, runID string) (domain.PauseState, error) {
	var raw string
	var state domain.PauseState
	err := db.read.QueryRowContext(ctx, `SELECT resume_state FROM runs WHERE id = ?`, runID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return state, notFound("run")
	}
	if err != nil {
		return state, translate(err)
	}
	if raw == "" {
		return state, nil
	}
	if err := json.Unmarshal([]byte(raw), &state); err != nil {
		return state, errs.Wrap(errs.Internal, err, "run %s has a malformed resume state", runID)
	}
	return state, nil
}
