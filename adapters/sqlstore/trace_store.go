package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
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

// storedSpan is a span read with its payload as stored: packed or whole.
type storedSpan struct {
	span   domain.Span
	packed bool
}

func spanWithData(r rowScanner) (storedSpan, error) {
	var data sql.NullString
	var packed sql.NullBool
	s, err := scanSpan(r, &data, &packed)
	if data.Valid {
		s.Data = json.RawMessage(data.String)
	}
	return storedSpan{span: s, packed: packed.Bool}, err
}

// withPayload rebuilds a packed payload from its session's blobs.
func (st storedSpan) withPayload(blobs map[string]string) (domain.Span, error) {
	s := st.span
	if !st.packed {
		return s, nil
	}
	data, err := unpack(s.Data, blobs)
	if err != nil {
		return s, errs.Wrap(errs.Internal, err, "span %s has a damaged payload", s.ID)
	}
	s.Data = data
	return s, nil
}

// SaveSpan implements ports.TraceStore.
func (db *DB) SaveSpan(ctx context.Context, s domain.Span) error {
	return db.SaveSpans(ctx, []domain.Span{s})
}

// SaveSpans implements ports.TraceStore.
func (db *DB) SaveSpans(ctx context.Context, spans []domain.Span) error {
	if len(spans) == 0 {
		return nil
	}
	return db.tx(ctx, func(tx txQ) error { return insertSpans(ctx, tx, spans) })
}

// SaveSpans implements ports.SessionWriter.
func (s sessionQ) SaveSpans(ctx context.Context, spans []domain.Span) error {
	return insertSpans(ctx, s.q, spans)
}

func insertSpans(ctx context.Context, tx querier, spans []domain.Span) error {
	for _, s := range spans {
		if err := insertSpan(ctx, tx, s); err != nil {
			return err
		}
	}
	return nil
}

// insertSpan writes a span's row and its payload, if any.
func insertSpan(ctx context.Context, tx querier, s domain.Span) error {
	meta, err := json.Marshal(s.Meta)
	if err != nil || s.Meta == nil {
		meta = []byte("{}")
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO trace_spans (id, session_id, run_id, parent_id, kind, name, started_at,
		ended_at, error, meta, data_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.SessionID, s.RunID, s.ParentID, s.Kind, s.Name, ms(s.StartedAt), ms(s.EndedAt), s.Error, string(meta), len(s.Data)); err != nil {
		return translate(err)
	}
	if len(s.Data) == 0 {
		return nil
	}
	return savePayload(ctx, tx, s.SessionID, s.ID, s.Data)
}

// ListSpans implements ports.TraceStore. With data, the blobs the listed
// spans name are read once for all of them.
func (db *DB) ListSpans(ctx context.Context, sessionID string, withData bool, page ports.SpanPage) ([]domain.Span, error) {
	var out []domain.Span
	err := db.snapshot(ctx, func(tx txQ) error {
		where, args, err := spanPageWhere(ctx, tx, sessionID, page)
		if err != nil {
			return err
		}
		order := ` ORDER BY s.started_at, s.id`
		if page.Limit > 0 {
			// The newest page, read newest first and turned round below.
			order, args = ` ORDER BY s.started_at DESC, s.id DESC LIMIT ?`, append(args, page.Limit)
		}
		if !withData {
			out, err = collect(ctx, tx, spanRow, `SELECT `+spanColumns+` FROM trace_spans s WHERE `+where+order, args...)
			if page.Limit > 0 {
				slices.Reverse(out)
			}
			return err
		}
		stored, err := collect(ctx, tx, spanWithData, `SELECT `+spanColumns+`, p.data, p.packed FROM trace_spans s
			LEFT JOIN trace_payloads p ON p.span_id = s.id WHERE `+where+order, args...)
		if err != nil {
			return err
		}
		if page.Limit > 0 {
			slices.Reverse(stored)
		}
		blobs, err := blobsOfSpans(ctx, tx, sessionID, stored, page)
		if err != nil {
			return err
		}
		out = make([]domain.Span, 0, len(stored))
		for _, st := range stored {
			s, err := st.withPayload(blobs)
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// spanPageWhere is the condition selecting a page's spans: the session's,
// and those before the cursor span in listing order.
func spanPageWhere(ctx context.Context, tx txQ, sessionID string, page ports.SpanPage) (string, []any, error) {
	if page.BeforeID == "" {
		return `s.session_id = ?`, []any{sessionID}, nil
	}
	var started int64
	err := tx.QueryRowContext(ctx, `SELECT started_at FROM trace_spans WHERE session_id = ? AND id = ?`, sessionID, page.BeforeID).Scan(&started)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, errs.Field("before_id", "is not a span of this session")
	}
	if err != nil {
		return "", nil, translate(err)
	}
	return `s.session_id = ? AND (s.started_at < ? OR (s.started_at = ? AND s.id < ?))`,
		[]any{sessionID, started, started, page.BeforeID}, nil
}

// blobsOfSpans reads the payload elements the listed spans name: the
// session's whole set for a full listing, only the page's for a page.
func blobsOfSpans(ctx context.Context, tx txQ, sessionID string, spans []storedSpan, page ports.SpanPage) (map[string]string, error) {
	if page.Limit == 0 && page.BeforeID == "" {
		return blobsOf(ctx, tx, `SELECT hash, data FROM trace_blobs WHERE session_id = ?`, sessionID)
	}
	ids := make([]any, 0, len(spans)+1)
	ids = append(ids, sessionID)
	for _, st := range spans {
		if st.packed {
			ids = append(ids, st.span.ID)
		}
	}
	if len(ids) == 1 {
		return map[string]string{}, nil
	}
	marks := strings.Repeat(",?", len(ids)-1)[1:]
	return blobsOf(ctx, tx, `SELECT DISTINCT b.hash, b.data FROM trace_blob_refs r
		JOIN trace_blobs b ON b.session_id = ? AND b.hash = r.hash WHERE r.span_id IN (`+marks+`)`, ids...)
}

// findSpan reads one span whole: its row, and the blobs its payload names.
func (db *DB) findSpan(ctx context.Context, where string, args ...any) (domain.Span, error) {
	var s domain.Span
	err := db.snapshot(ctx, func(tx txQ) error {
		st, err := spanWithData(tx.QueryRowContext(ctx, `SELECT `+spanColumns+`, p.data, p.packed FROM trace_spans s
			LEFT JOIN trace_payloads p ON p.span_id = s.id WHERE `+where, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("span")
		}
		if err != nil {
			return translate(err)
		}
		blobs, err := blobsOf(ctx, tx, `SELECT b.hash, b.data FROM trace_blob_refs r
			JOIN trace_blobs b ON b.session_id = ? AND b.hash = r.hash WHERE r.span_id = ?`, st.span.SessionID, st.span.ID)
		if err != nil {
			return err
		}
		s, err = st.withPayload(blobs)
		return err
	})
	return s, err
}

// FindSpan implements ports.TraceStore.
func (db *DB) FindSpan(ctx context.Context, sessionID, spanID string) (domain.Span, error) {
	return db.findSpan(ctx, `s.session_id = ? AND s.id = ?`, sessionID, spanID)
}

// FindSpanByID implements ports.TraceStore.
func (db *DB) FindSpanByID(ctx context.Context, spanID string) (domain.Span, error) {
	return db.findSpan(ctx, `s.id = ?`, spanID)
}

// DeleteSpansBefore implements ports.TraceStore; payloads and blob
// references cascade, and the blobs no span uses any more go with them.
func (db *DB) DeleteSpansBefore(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	err := db.tx(ctx, func(tx txQ) error {
		sessions, err := collect(ctx, tx, scanString, `SELECT DISTINCT session_id FROM trace_spans WHERE started_at < ?`, ms(cutoff))
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `DELETE FROM trace_spans WHERE started_at < ?`, ms(cutoff))
		if err != nil {
			return translate(err)
		}
		n, _ = r.RowsAffected()
		return pruneBlobs(ctx, tx, sessions)
	})
	return int(n), err
}

// CopySpans implements ports.TraceStore.
func (db *DB) CopySpans(ctx context.Context, fromSession, toSession string, runIDs []string, newID func() string) error {
	all, err := db.ListSpans(ctx, fromSession, true, ports.SpanPage{})
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
