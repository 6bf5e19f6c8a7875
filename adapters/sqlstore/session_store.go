package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

const sessionColumns = `id, owner_id, name, pinned, agent_config_id, project_id, planning, hidden, parent_session_id,
	tip_entry_id, last_seq, active_chars, anchor_seq, anchor_usage, chars_after_anchor, session_input_tokens,
	session_output_tokens, created_at, updated_at`

func scanSession(r rowScanner) (domain.Session, error) {
	var s domain.Session
	var anchor string
	var created, updated int64
	err := r.Scan(&s.ID, &s.OwnerID, &s.Name, &s.Pinned, &s.AgentConfigID, &s.ProjectID, &s.Planning, &s.Hidden,
		&s.ParentSessionID, &s.TipID, &s.LastSeq, &s.Totals.ActiveChars, &s.Totals.AnchorSeq, &anchor,
		&s.Totals.CharsAfterAnchor, &s.Totals.SessionInputTokens, &s.Totals.SessionOutputTokens, &created, &updated)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(anchor), &s.Totals.AnchorUsage); err != nil {
		return s, errs.Wrap(errs.Internal, err, "session %s has malformed totals", s.ID)
	}
	s.CreatedAt, s.UpdatedAt = fromMS(created), fromMS(updated)
	return s, nil
}

func usageJSON(u domain.Usage) string {
	b, _ := json.Marshal(u)
	return string(b)
}

func insertSession(ctx context.Context, q querier, s domain.Session) error {
	_, err := q.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.OwnerID, s.Name, s.Pinned, s.AgentConfigID, s.ProjectID, s.Planning, s.Hidden, s.ParentSessionID,
		s.TipID, s.LastSeq, s.Totals.ActiveChars, s.Totals.AnchorSeq, usageJSON(s.Totals.AnchorUsage), s.Totals.CharsAfterAnchor,
		s.Totals.SessionInputTokens, s.Totals.SessionOutputTokens, ms(s.CreatedAt), ms(s.UpdatedAt))
	return translate(err)
}

// CreateSession implements ports.SessionStore.
func (db *DB) CreateSession(ctx context.Context, s domain.Session) error {
	return insertSession(ctx, db.writer(), s)
}

func findSession(ctx context.Context, q querier, id string) (domain.Session, error) {
	s, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("session")
	}
	return s, translate(err)
}

// FindSession implements ports.SessionStore.
func (db *DB) FindSession(ctx context.Context, id string) (domain.Session, error) {
	return findSession(ctx, db.read, id)
}

// ListSessions implements ports.SessionStore.
func (db *DB) ListSessions(ctx context.Context, ownerID string) ([]domain.Session, error) {
	q := `SELECT ` + sessionColumns + ` FROM sessions WHERE hidden = 0`
	args := []any{}
	if ownerID != "" {
		q += ` AND owner_id = ?`
		args = append(args, ownerID)
	}
	return collect(ctx, db.read, scanSession, q+` ORDER BY pinned DESC, updated_at DESC, id DESC`, args...)
}

// UpdateSession implements ports.SessionStore.
func (db *DB) UpdateSession(ctx context.Context, id string, change func(*domain.Session) error) (domain.Session, error) {
	var out domain.Session
	err := db.tx(ctx, func(tx txQ) error {
		s, err := findSession(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := change(&s); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET name = ?, pinned = ?, planning = ?, agent_config_id = ?, updated_at = ?
			WHERE id = ?`, s.Name, s.Pinned, s.Planning, s.AgentConfigID, ms(s.UpdatedAt), id); err != nil {
			return translate(err)
		}
		out = s
		return nil
	})
	return out, err
}

// SetRunContext implements ports.SessionWriter.
func (s sessionQ) SetRunContext(ctx context.Context, agentID string, planning bool, at time.Time) error {
	r, err := s.q.ExecContext(ctx, `UPDATE sessions SET planning = ?, agent_config_id = ?, updated_at = ? WHERE id = ?`,
		planning, agentID, ms(at), s.id)
	if err = affected(r, err, "session"); err == nil && s.row != nil {
		s.row.Planning, s.row.AgentConfigID, s.row.UpdatedAt = planning, agentID, fromMS(ms(at))
	}
	return err
}

// DeleteSession implements ports.SessionStore; entries and profiles cascade.
func (db *DB) DeleteSession(ctx context.Context, id string) error {
	// Its tasks' hidden sessions go with it.
	var r sql.Result
	err := db.tx(ctx, func(tx txQ) error {
		var err error
		if r, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
			return translate(err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE parent_session_id = ? AND hidden = 1`, id)
		return translate(err)
	})
	if err != nil {
		return err
	}
	return affected(r, nil, "session")
}

// ReadSession implements ports.SessionStore with a read transaction: WAL
// gives it a snapshot no concurrent append can tear.
func (db *DB) ReadSession(ctx context.Context, id string, fn func(r ports.SessionReader) error) error {
	return db.snapshot(ctx, inSession(ctx, id, func(q sessionQ) error { return fn(q) }))
}

// WriteSession implements ports.SessionStore.
func (db *DB) WriteSession(ctx context.Context, id string, fn func(tx ports.SessionTx) error) error {
	return db.tx(ctx, inSession(ctx, id, func(q sessionQ) error { return fn(q) }))
}

// inSession opens a transaction on session id: the row read (not_found
// when absent) and kept on the sessionQ fn is given.
func inSession(ctx context.Context, id string, fn func(sessionQ) error) func(txQ) error {
	return func(t txQ) error {
		row, err := findSession(ctx, t, id)
		if err != nil {
			return err
		}
		return fn(opened(t, row))
	}
}

// CreateSessionWithEntries implements ports.SessionStore.
func (db *DB) CreateSessionWithEntries(ctx context.Context, s domain.Session, entries []domain.Entry, metas []domain.EntryMeta) error {
	return db.tx(ctx, func(t txQ) error {
		if err := insertSession(ctx, t, s); err != nil {
			return err
		}
		return sessionQ{q: t, id: s.ID}.InsertEntries(ctx, entries, metas)
	})
}

// saveProfile is the one upsert of a run's context profile.
const saveProfile = `INSERT INTO context_profiles (session_id, run_id, profile, created_at) VALUES (?, ?, ?, ?)
	ON CONFLICT (session_id, run_id) DO UPDATE SET profile = excluded.profile, created_at = excluded.created_at`

// SaveContextProfile implements ports.SessionStore.
func (db *DB) SaveContextProfile(ctx context.Context, sessionID, runID string, profile json.RawMessage, at time.Time) error {
	_, err := db.exec(ctx, saveProfile, sessionID, runID, string(profile), ms(at))
	return err
}

// SaveContextProfile implements ports.SessionWriter.
func (s sessionQ) SaveContextProfile(ctx context.Context, runID string, profile json.RawMessage, at time.Time) error {
	_, err := s.q.ExecContext(ctx, saveProfile, s.id, runID, string(profile), ms(at))
	return translate(err)
}
