package sqlite

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

const spanColumns = `s.id, s.session_id, s.run_id, s.parent_id, s.kind, s.name, s.started_at, s.ended_at, s.error, s.meta, s.data_bytes`

func scanSpan(r rowScanner, extra ...any) (domain.Span, error) {
	var s domain.Span
	var started, ended int64
	var meta string
	if err := r.Scan(append([]any{&s.ID, &s.SessionID, &s.RunID, &s.ParentID, &s.Kind, &s.Name, &started, &ended, &s.Error, &meta,
		&s.DataBytes}, extra...)...); err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(meta), &s.Meta); err != nil {
		return s, errs.Wrap(errs.Internal, err, "span %s has malformed meta", s.ID)
	}
	s.StartedAt, s.EndedAt = fromMS(started), fromMS(ended)
	return s, nil
}

func spanRow(r rowScanner) (domain.Span, error) {
	s, err := scanSpan(r)
	s.PayloadOmitted = s.DataBytes > 0
	return s, err
}

func spanWithData(r rowScanner) (domain.Span, error) {
	var data sql.NullString
	s, err := scanSpan(r, &data)
	if data.Valid {
		s.Data = json.RawMessage(data.String)
	}
	return s, err
}

// SaveSpan implements ports.TraceStore.
func (db *DB) SaveSpan(ctx context.Context, s domain.Span) error {
	meta, err := json.Marshal(s.Meta)
	if err != nil || s.Meta == nil {
		meta = []byte("{}")
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trace_spans (id, session_id, run_id, parent_id, kind, name, started_at,
			ended_at, error, meta, data_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.SessionID, s.RunID, s.ParentID, s.Kind, s.Name, ms(s.StartedAt), ms(s.EndedAt), s.Error, string(meta), len(s.Data)); err != nil {
			return translate(err)
		}
		if len(s.Data) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO trace_payloads (span_id, data) VALUES (?, ?)`, s.ID, string(s.Data))
		return translate(err)
	})
}

// ListSpans implements ports.TraceStore.
func (db *DB) ListSpans(ctx context.Context, sessionID string, withData bool) ([]domain.Span, error) {
	if !withData {
		return collect(ctx, db.read, spanRow, `SELECT `+spanColumns+` FROM trace_spans s WHERE s.session_id = ? ORDER BY s.started_at, s.id`, sessionID)
	}
	return collect(ctx, db.read, spanWithData, `SELECT `+spanColumns+`, p.data FROM trace_spans s
		LEFT JOIN trace_payloads p ON p.span_id = s.id WHERE s.session_id = ? ORDER BY s.started_at, s.id`, sessionID)
}

// FindSpan implements ports.TraceStore.
func (db *DB) FindSpan(ctx context.Context, sessionID, spanID string) (domain.Span, error) {
	s, err := spanWithData(db.read.QueryRowContext(ctx, `SELECT `+spanColumns+`, p.data FROM trace_spans s
		LEFT JOIN trace_payloads p ON p.span_id = s.id WHERE s.session_id = ? AND s.id = ?`, sessionID, spanID))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("span")
	}
	return s, translate(err)
}

// FindSpanByID implements ports.TraceStore.
func (db *DB) FindSpanByID(ctx context.Context, spanID string) (domain.Span, error) {
	s, err := spanWithData(db.read.QueryRowContext(ctx, `SELECT `+spanColumns+`, p.data FROM trace_spans s
		LEFT JOIN trace_payloads p ON p.span_id = s.id WHERE s.id = ?`, spanID))
	if errors.Is(err, sql.ErrNoRows) {
		return s, notFound("span")
	}
	return s, translate(err)
}

// DeleteSpansBefore implements ports.TraceStore; payloads cascade.
func (db *DB) DeleteSpansBefore(ctx context.Context, cutoff time.Time) (int, error) {
	r, err := db.exec(ctx, `DELETE FROM trace_spans WHERE started_at < ?`, ms(cutoff))
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

// CopySpans implements ports.TraceStore.
func (db *DB) CopySpans(ctx context.Context, fromSession, toSession string, runIDs []string, newID func() string) error {
	all, err := db.ListSpans(ctx, fromSession, true)
	if err != nil {
		return err
	}
	var spans []domain.Span
	ids := map[string]string{}
	for _, s := range all {
		if slices.Contains(runIDs, s.RunID) {
			spans = append(spans, s)
			ids[s.ID] = newID()
		}
	}
	for _, s := range spans {
		s.ID, s.SessionID, s.ParentID = ids[s.ID], toSession, ids[s.ParentID]
		if err := db.SaveSpan(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
