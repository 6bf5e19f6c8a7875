package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

var _ ports.TaskStore = (*DB)(nil)

const taskColumns = `id, run_id, owner_id, parent_session_id, parent_run_id, tool_call_id, child_session_id, agent_config_id, label,
	prompt, kind, attempt, dismissed, status, inherit, state, summary, result, pending_call_id, launched_at, created_at, updated_at, ended_at`

// liveTask is the SQL test for a task that is not final.
const liveTask = `status IN ('working', 'input_required')`

// defaultTaskPage is a listing's page without a limit.
const defaultTaskPage = 100

func scanTask(r rowScanner) (domain.Task, error) {
	var t domain.Task
	var kind, status, inherit, state string
	var created, updated int64
	var launched, ended sql.NullInt64
	err := r.Scan(&t.ID, &t.RunID, &t.OwnerID, &t.ParentSessionID, &t.ParentRunID, &t.ToolCallID, &t.ChildSessionID, &t.AgentConfigID,
		&t.Label, &t.Prompt, &kind, &t.Attempt, &t.Dismissed, &status, &inherit, &state, &t.Summary, &t.Result, &t.PendingCallID,
		&launched, &created, &updated, &ended)
	t.LaunchedAt = fromNullMS(launched)
	t.Kind, t.Status = domain.TaskKind(kind), domain.TaskStatus(status)
	if inherit != "" {
		t.Inherit = []byte(inherit)
	}
	if state != "" {
		t.State = []byte(state)
	}
	t.CreatedAt, t.UpdatedAt, t.EndedAt = fromMS(created), fromMS(updated), fromNullMS(ended)
	return t, err
}

func findTask(ctx context.Context, q querier, id string) (domain.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("task")
	}
	return t, translate(err)
}

// insertTask writes a new task row (taskRow's arguments).
const insertTask = `INSERT INTO tasks (` + taskColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func taskRow(t domain.Task) []any {
	return []any{t.ID, t.RunID, t.OwnerID, t.ParentSessionID, t.ParentRunID, t.ToolCallID, t.ChildSessionID, t.AgentConfigID, t.Label,
		t.Prompt, string(t.Kind), max(t.Attempt, 1), t.Dismissed, string(t.Status), string(t.Inherit), string(t.State), t.Summary, t.Result,
		t.PendingCallID, msPtr(t.LaunchedAt), ms(t.CreatedAt), ms(t.UpdatedAt), msPtr(t.EndedAt)}
}

// CreateTask implements ports.TaskStore.
func (db *DB) CreateTask(ctx context.Context, t domain.Task, admit func(live, queued int) error) error {
	if admit == nil {
		_, err := db.exec(ctx, insertTask, taskRow(t)...)
		return err
	}
	// Writers take turns (SQLite's one connection, Postgres's write lock),
	// so the counts still hold at the insert.
	return db.tx(ctx, func(tx txQ) error {
		var live, queued int
		if err := tx.QueryRowContext(ctx, `SELECT
			count(CASE WHEN launched_at IS NOT NULL AND `+liveTask+` THEN 1 END),
			count(CASE WHEN launched_at IS NULL AND status = 'working' THEN 1 END)
			FROM tasks WHERE parent_session_id = ?`, t.ParentSessionID).Scan(&live, &queued); err != nil {
			return translate(err)
		}
		if err := admit(live, queued); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, insertTask, taskRow(t)...)
		return translate(err)
	})
}

// FindTask implements ports.TaskStore.
func (db *DB) FindTask(ctx context.Context, id string) (domain.Task, error) {
	return findTask(ctx, db.read, id)
}

// FindTaskByRun implements ports.TaskStore.
func (db *DB) FindTaskByRun(ctx context.Context, runID string) (domain.Task, error) {
	t, err := scanTask(db.read.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return t, notFound("task")
	}
	return t, translate(err)
}

// ListSessionTasks implements ports.TaskStore.
func (db *DB) ListSessionTasks(ctx context.Context, parentSessionID string) ([]domain.Task, error) {
	return collect(ctx, db.read, scanTask, `SELECT `+taskColumns+` FROM tasks WHERE parent_session_id = ?
		ORDER BY created_at DESC, id DESC`, parentSessionID)
}

// ListTasks implements ports.TaskStore.
func (db *DB) ListTasks(ctx context.Context, ownerID string, f ports.TaskFilter) ([]domain.Task, int, error) {
	var where []string
	var args []any
	if ownerID != "" {
		where, args = append(where, "owner_id = ?"), append(args, ownerID)
	}
	if f.Kind != "" {
		where, args = append(where, "kind = ?"), append(args, string(f.Kind))
	}
	if f.Live {
		where = append(where, liveTask)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var out []domain.Task
	var total int
	err := db.snapshot(ctx, func(tx txQ) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM tasks`+cond, args...).Scan(&total); err != nil {
			return translate(err)
		}
		limit := f.Limit
		if limit <= 0 {
			limit = defaultTaskPage
		}
		var err error
		out, err = collect(ctx, tx, scanTask, `SELECT `+taskColumns+` FROM tasks`+cond+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
			append(args, limit, max(f.Offset, 0))...)
		return err
	})
	return out, total, err
}

// CountLiveTasks implements ports.TaskStore.
func (db *DB) CountLiveTasks(ctx context.Context, parentSessionID string) (int, error) {
	var n int
	err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE parent_session_id = ? AND launched_at IS NOT NULL AND `+liveTask,
		parentSessionID).Scan(&n)
	return n, translate(err)
}

// LaunchTask implements ports.TaskStore.
func (db *DB) LaunchTask(ctx context.Context, id string, at time.Time) (bool, error) {
	r, err := db.exec(ctx, `UPDATE tasks SET launched_at = ?, updated_at = ? WHERE id = ? AND launched_at IS NULL AND `+liveTask, ms(at), ms(at), id)
	return changed(r, err)
}

// NextQueuedTask implements ports.TaskStore.
func (db *DB) NextQueuedTask(ctx context.Context, parentSessionID string) (domain.Task, bool, error) {
	t, err := scanTask(db.read.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE parent_session_id = ? AND launched_at IS NULL
		AND status = 'working' ORDER BY created_at, id LIMIT 1`, parentSessionID))
	if errors.Is(err, sql.ErrNoRows) {
		return t, false, nil
	}
	return t, err == nil, translate(err)
}

// StalledQueues implements ports.TaskStore. The queued tasks are the
// tasks_queued index's rows; the live count is tasks_parent's.
func (db *DB) StalledQueues(ctx context.Context, queuedBefore time.Time, limit int) ([]string, error) {
	return collect(ctx, db.read, scanString, `SELECT DISTINCT q.parent_session_id FROM tasks q
		WHERE q.launched_at IS NULL AND q.status = 'working' AND q.updated_at < ?
		AND (SELECT count(*) FROM tasks l WHERE l.parent_session_id = q.parent_session_id AND l.launched_at IS NOT NULL
			AND l.`+liveTask+`) < ?
		ORDER BY q.parent_session_id`, ms(queuedBefore), limit)
}

// PauseTask implements ports.TaskStore.
func (db *DB) PauseTask(ctx context.Context, id, runID string, status domain.TaskStatus, pendingCallID string, state []byte,
	at time.Time) (bool, error) {
	if status.Terminal() {
		return false, fmt.Errorf("PauseTask takes a live status, not %s", status)
	}
	r, err := db.exec(ctx, `UPDATE tasks SET status = ?, pending_call_id = ?, state = CASE WHEN ? = 1 THEN ? ELSE state END, updated_at = ?
		WHERE id = ? AND run_id = ? AND `+liveTask, string(status), pendingCallID, state != nil, string(state), ms(at), id, runID)
	return changed(r, err)
}

// FinalizeTask implements ports.TaskStore.
func (db *DB) FinalizeTask(ctx context.Context, f ports.TaskFinal) (bool, error) {
	won := false
	err := db.tx(ctx, func(tx txQ) error {
		var err error
		won, err = finalizeTask(ctx, tx, f)
		return err
	})
	return won, err
}

// FinalizeTask implements ports.SessionWriter: an attempt's end written in
// the transaction that records its run's end.
func (s sessionQ) FinalizeTask(ctx context.Context, f ports.TaskFinal) (bool, error) {
	return finalizeTask(ctx, s.q, f)
}

// finalizeTask writes an attempt's terminal status once, with the parent's
// wake-up debt when it owes one.
func finalizeTask(ctx context.Context, q querier, f ports.TaskFinal) (bool, error) {
	if !f.Status.Terminal() {
		return false, fmt.Errorf("FinalizeTask takes a terminal status, not %s", f.Status)
	}
	r, err := q.ExecContext(ctx, `UPDATE tasks SET status = ?, summary = ?, result = ?, pending_call_id = '', updated_at = ?, ended_at = ?,
		state = CASE WHEN ? = 1 THEN ? ELSE state END
		WHERE id = ? AND run_id = ? AND `+liveTask, string(f.Status), f.Summary, f.Result, ms(f.At), ms(f.At),
		f.State != nil, string(f.State), f.TaskID, f.RunID)
	won, err := changed(r, err)
	if err != nil || !won {
		return won, err
	}
	// A step approval filed under a run that never started goes with the
	// task (a started run's approvals go with its pause).
	if _, err := q.ExecContext(ctx, `DELETE FROM approvals WHERE run_id = ? AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.id = approvals.run_id)`,
		f.RunID); err != nil {
		return false, translate(err)
	}
	if !f.Status.OwesWakeup() {
		return true, nil
	}
	return true, oweWakeups(ctx, q, `id = ?`, []any{f.TaskID}, f.At)
}

// oweWakeups writes the debts of the tasks matching cond, as they are now
// (final, completed or failed).
func oweWakeups(ctx context.Context, tx querier, cond string, args []any, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO task_wakeups (id, session_id, task_id, attempt, status, summary, created_at)
		SELECT id || ':' || attempt, parent_session_id, id, attempt, status, summary, ? FROM tasks
		WHERE status IN ('completed', 'failed') AND `+cond+` ON CONFLICT DO NOTHING`, append([]any{ms(at)}, args...)...)
	return translate(err)
}

// RetryTask implements ports.TaskStore.
func (db *DB) RetryTask(ctx context.Context, id, newRunID string, maxAttempts int, at time.Time) (domain.Task, bool, error) {
	var out domain.Task
	won := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE tasks SET run_id = ?, attempt = attempt + 1, status = 'working', summary = '', result = '',
			dismissed = 0, pending_call_id = '', launched_at = NULL, updated_at = ?, ended_at = NULL WHERE id = ? AND status = 'failed' AND attempt < ?`,
			newRunID, ms(at), id, maxAttempts)
		if won, err = changed(r, err); err != nil {
			return err
		}
		out, err = findTask(ctx, tx, id)
		return err
	})
	return out, won, err
}

// DismissTask implements ports.TaskStore.
func (db *DB) DismissTask(ctx context.Context, id string, at time.Time) (bool, error) {
	r, err := db.exec(ctx, `UPDATE tasks SET dismissed = 1, updated_at = ? WHERE id = ? AND NOT (`+liveTask+`)`, ms(at), id)
	return changed(r, err)
}

// FailOrphanTasks implements ports.TaskStore.
func (db *DB) FailOrphanTasks(ctx context.Context, runs []string, launchedBefore time.Time, end func(domain.Task) (string, []byte),
	at time.Time) ([]domain.Task, error) {
	if runs != nil && len(runs) == 0 && launchedBefore.IsZero() {
		return nil, nil
	}
	var out []domain.Task
	err := db.tx(ctx, func(tx txQ) error {
		query, args := `SELECT `+taskColumns+` FROM tasks WHERE status = 'working'`, []any(nil)
		if runs != nil {
			var which []string
			if len(runs) > 0 {
				which, args = append(which, `run_id IN (`+inList(len(runs))+`)`), withIDs(nil, runs)
			}
			if !launchedBefore.IsZero() {
				which = append(which, `(launched_at IS NOT NULL AND launched_at < ? AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = tasks.run_id))`)
				args = append(args, ms(launchedBefore))
			}
			query += ` AND (` + strings.Join(which, ` OR `) + `)`
		}
		var err error
		if out, err = collect(ctx, tx, scanTask, query+` ORDER BY created_at, id`, args...); err != nil || len(out) == 0 {
			return err
		}
		ids := make([]any, len(out))
		ended := fromMS(ms(at))
		for i, t := range out {
			result, state := end(t)
			if state == nil {
				state = t.State
			}
			if _, err := tx.ExecContext(ctx, `UPDATE tasks SET status = 'failed', result = ?, summary = ?, state = ?, pending_call_id = '',
				updated_at = ?, ended_at = ? WHERE id = ?`, result, result, string(state), ms(at), ms(at), t.ID); err != nil {
				return translate(err)
			}
			ids[i] = t.ID
			out[i].Status, out[i].Result, out[i].Summary, out[i].State = domain.TaskFailed, result, result, state
			out[i].PendingCallID, out[i].UpdatedAt, out[i].EndedAt = "", ended, &ended
		}
		return oweWakeups(ctx, tx, `id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, ids, at)
	})
	return out, err
}

// PauseStep implements ports.TaskStore.
func (db *DB) PauseStep(ctx context.Context, taskID string, a domain.Approval, at time.Time) (bool, error) {
	won := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `UPDATE tasks SET status = 'input_required', pending_call_id = ?, launched_at = NULL, updated_at = ?
			WHERE id = ? AND run_id = ? AND status = 'working'`, a.ToolCallID, ms(at), taskID, a.RunID)
		if won, err = changed(r, err); err != nil || !won {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', '', '', ?, NULL)`,
			a.ID, a.SessionID, a.RunID, a.OwnerID, a.ToolCallID, a.ToolName, a.Arguments, ms(a.CreatedAt))
		return translate(err)
	})
	return won, err
}

// ResolveStep implements ports.TaskStore.
func (db *DB) ResolveStep(ctx context.Context, a domain.Approval, end *ports.TaskFinal, state []byte, at time.Time) (bool, error) {
	won := false
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM approvals WHERE id = ? AND status = 'pending'`, a.ID)
		if won, err = changed(r, err); err != nil || !won {
			return err
		}
		if end != nil {
			won, err = finalizeTask(ctx, tx, *end)
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE tasks SET status = 'working', pending_call_id = '', state = ?, updated_at = ?
				WHERE run_id = ? AND status = 'input_required' AND pending_call_id = ?`, string(state), ms(at), a.RunID, a.ToolCallID)
			won, err = changed(r, err)
		}
		if err == nil && !won {
			err = errLostStep
		}
		return err
	})
	if errors.Is(err, errLostStep) {
		return false, nil
	}
	return won, err
}

// errLostStep rolls a step decision back when its task moved on.
var errLostStep = errors.New("the task moved on")

// AdvanceTask implements ports.SessionWriter.
func (s sessionQ) AdvanceTask(ctx context.Context, a ports.TaskAdvance) (bool, error) {
	r, err := s.q.ExecContext(ctx, `UPDATE tasks SET run_id = ?, agent_config_id = ?, state = ?, launched_at = NULL, pending_call_id = '',
		updated_at = ? WHERE id = ? AND run_id = ? AND status = 'working'`, a.NewRunID, a.AgentConfigID, string(a.State), ms(a.At), a.TaskID, a.RunID)
	return changed(r, err)
}

// RecordTaskState implements ports.SessionWriter.
func (s sessionQ) RecordTaskState(ctx context.Context, taskID, runID string, state []byte, at time.Time) error {
	r, err := s.q.ExecContext(ctx, `UPDATE tasks SET state = ?, updated_at = ? WHERE id = ? AND run_id = ? AND `+liveTask,
		string(state), ms(at), taskID, runID)
	if won, err := changed(r, err); err != nil || won {
		return err
	}
	return errs.E(errs.Conflict, "the task was stopped before its step could start")
}

func scanWakeup(r rowScanner) (domain.TaskWakeup, error) {
	var w domain.TaskWakeup
	var status string
	var created int64
	var settled sql.NullInt64
	err := r.Scan(&w.ID, &w.SessionID, &w.TaskID, &w.Attempt, &status, &w.Summary, &created, &settled)
	w.Status, w.CreatedAt, w.SettledAt = domain.TaskStatus(status), fromMS(created), fromNullMS(settled)
	return w, err
}

// DueWakeups implements ports.TaskStore.
func (db *DB) DueWakeups(ctx context.Context, sessionID string) ([]domain.TaskWakeup, error) {
	return collect(ctx, db.read, scanWakeup, `SELECT id, session_id, task_id, attempt, status, summary, created_at, settled_at
		FROM task_wakeups WHERE session_id = ? AND settled_at IS NULL ORDER BY created_at, id`, sessionID)
}

// SessionsWithDueWakeups implements ports.TaskStore.
func (db *DB) SessionsWithDueWakeups(ctx context.Context) ([]string, error) {
	return collect(ctx, db.read, scanString, `SELECT DISTINCT session_id FROM task_wakeups WHERE settled_at IS NULL ORDER BY session_id`)
}

// SettleWakeups implements ports.TaskStore.
func (db *DB) SettleWakeups(ctx context.Context, ids []string, at time.Time) error {
	_, err := settleWakeups(ctx, db.writer(), ids, at)
	return err
}

// SettleWakeups implements ports.SessionWriter: debts paid in the
// transaction that files the notification paying them — all of them, or
// conflict (another payer got there first) and the transaction rolls back.
func (s sessionQ) SettleWakeups(ctx context.Context, ids []string, at time.Time) error {
	n, err := settleWakeups(ctx, s.q, ids, at)
	if err == nil && n != len(ids) {
		err = errs.E(errs.Conflict, "%d of %d debts were settled already", len(ids)-n, len(ids))
	}
	return err
}

func settleWakeups(ctx context.Context, q querier, ids []string, at time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{ms(at)}
	for _, id := range ids {
		args = append(args, id)
	}
	r, err := q.ExecContext(ctx, `UPDATE task_wakeups SET settled_at = ? WHERE settled_at IS NULL AND id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := r.RowsAffected()
	return int(n), translate(err)
}

// PruneTasks implements ports.TaskStore.
func (db *DB) PruneTasks(ctx context.Context, settledBefore, orphanBefore time.Time) (int, error) {
	n := 0
	err := db.tx(ctx, func(tx txQ) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM task_wakeups WHERE settled_at IS NOT NULL AND settled_at < ?`, ms(settledBefore))
		if err != nil {
			return translate(err)
		}
		a, _ := r.RowsAffected()
		r, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE hidden = 1 AND parent_session_id != '' AND created_at < ?
			AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.child_session_id = sessions.id)`, ms(orphanBefore))
		if err != nil {
			return translate(err)
		}
		b, _ := r.RowsAffected()
		n = int(a + b)
		return nil
	})
	return n, err
}

// changed reports whether an update wrote a row.
func changed(r sql.Result, err error) (bool, error) {
	if err != nil {
		return false, translate(err)
	}
	n, _ := r.RowsAffected()
	return n > 0, nil
}
