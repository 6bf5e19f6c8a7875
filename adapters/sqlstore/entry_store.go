package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// sessionQ implements ports.SessionTx for one session over a transaction.
type sessionQ struct {
	q  querier
	id string
	// row is the session row as this transaction last read or wrote it
	// (nil: not yet read). A transaction opens by reading it, and the
	// writes below keep it true, so a run's transactions read it once.
	row *domain.Session
}

// opened is a sessionQ over q whose row was read as the transaction
// opened.
func opened(q querier, row domain.Session) sessionQ {
	return sessionQ{q: q, id: row.ID, row: &row}
}

const metaColumns = `row_id, entry_id, parent_id, branch_parent, seq, kind, source, run_id, call_id, item_type, target, compacted, chars,
	input_tokens, output_tokens, cached_tokens, cache_write_tokens, total_tokens, created_at`

// scanMeta reads the lifted columns, then any extra columns after them.
func scanMeta(r rowScanner, extra ...any) (domain.EntryMeta, error) {
	var m domain.EntryMeta
	var in, out, cached, cacheWrite, total sql.NullInt64
	var created int64
	err := r.Scan(append([]any{&m.RowID, &m.ID, &m.ParentID, &m.BranchParent, &m.Seq, &m.Kind, &m.Source, &m.RunID, &m.CallID,
		&m.ItemType, &m.Target, &m.Compacted, &m.Chars, &in, &out, &cached, &cacheWrite, &total, &created}, extra...)...)
	m.CreatedAt = fromMS(created)
	if in.Valid {
		m.Usage = &domain.Usage{InputTokens: in.Int64, OutputTokens: out.Int64, CachedTokens: cached.Int64,
			CacheWriteTokens: cacheWrite.Int64, TotalTokens: total.Int64}
	}
	return m, err
}

// metaRow adapts scanMeta to collect.
func metaRow(r rowScanner) (domain.EntryMeta, error) { return scanMeta(r) }

const entryColumns = metaColumns + `, body`

func scanRaw(r rowScanner) (domain.RawEntry, error) {
	var raw domain.RawEntry
	var body []byte
	m, err := scanMeta(r, &body)
	raw.Meta, raw.Body = m, body
	return raw, err
}

func scanEntry(r rowScanner) (domain.Entry, error) {
	raw, err := scanRaw(r)
	if err != nil {
		return domain.Entry{}, err
	}
	e, err := raw.Decode()
	if err != nil {
		return e, errs.Wrap(errs.Internal, err, "entry %s has a malformed body", raw.Meta.RowID)
	}
	return e, nil
}

// Session implements ports.SessionReader.
func (s sessionQ) Session(ctx context.Context) (domain.Session, error) {
	if s.row != nil {
		return *s.row, nil
	}
	return findSession(ctx, s.q, s.id)
}

// EntryMetas implements ports.SessionReader.
func (s sessionQ) EntryMetas(ctx context.Context, fromSeq int64) ([]domain.EntryMeta, error) {
	return collect(ctx, s.q, metaRow, `SELECT `+metaColumns+` FROM entries WHERE session_id = ? AND seq >= ? ORDER BY seq`, s.id, fromSeq)
}

// ContentEntries implements ports.SessionReader.
func (s sessionQ) ContentEntries(ctx context.Context, beforeSeq int64, limit int) ([]domain.RawEntry, error) {
	q := `SELECT ` + entryColumns + ` FROM entries WHERE session_id = ? AND kind NOT IN ('update', 'leaf')`
	args := []any{s.id}
	if beforeSeq > 0 {
		q += ` AND seq < ?`
		args = append(args, beforeSeq)
	}
	if limit <= 0 {
		return collect(ctx, s.q, scanRaw, q+` ORDER BY seq`, args...)
	}
	out, err := collect(ctx, s.q, scanRaw, q+` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// Entries implements ports.SessionReader.
func (s sessionQ) Entries(ctx context.Context, maxSeq int64) ([]domain.Entry, error) {
	if maxSeq <= 0 {
		return collect(ctx, s.q, scanEntry, `SELECT `+entryColumns+` FROM entries WHERE session_id = ? ORDER BY seq`, s.id)
	}
	return collect(ctx, s.q, scanEntry, `SELECT `+entryColumns+` FROM entries WHERE session_id = ? AND seq <= ? ORDER BY seq`, s.id, maxSeq)
}

// inList renders n placeholders for an IN clause.
func inList(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func withIDs(args []any, ids []string) []any {
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// UpdatesTargeting implements ports.SessionReader.
func (s sessionQ) UpdatesTargeting(ctx context.Context, targets []string) ([]domain.Entry, error) {
	if len(targets) == 0 {
		return []domain.Entry{}, nil
	}
	// INDEXED BY: left to itself the planner walks the seq index to save a
	// sort — a scan of the whole session, bodies and all.
	return collect(ctx, s.q, scanEntry, `SELECT `+entryColumns+` FROM entries INDEXED BY entries_update_target
		WHERE session_id = ? AND kind = 'update' AND target IN (`+inList(len(targets))+`) ORDER BY seq`, withIDs([]any{s.id}, targets)...)
}

// FindEntry implements ports.SessionReader.
func (s sessionQ) FindEntry(ctx context.Context, entryID string) (domain.Entry, error) {
	e, err := scanEntry(s.q.QueryRowContext(ctx, `SELECT `+entryColumns+` FROM entries WHERE session_id = ? AND entry_id = ?`, s.id, entryID))
	if errors.Is(err, sql.ErrNoRows) {
		return e, notFound("entry")
	}
	return e, translate(err)
}

// EntriesByID implements ports.SessionReader, in batches that stay under
// SQLite's parameter limit.
func (s sessionQ) EntriesByID(ctx context.Context, ids []string) ([]domain.Entry, error) {
	out := []domain.Entry{}
	for len(ids) > 0 {
		n := min(len(ids), 500)
		batch, err := collect(ctx, s.q, scanEntry, `SELECT `+entryColumns+` FROM entries WHERE session_id = ? AND entry_id IN (`+
			inList(n)+`)`, withIDs([]any{s.id}, ids[:n])...)
		if err != nil {
			return nil, err
		}
		out = append(out, batch...)
		ids = ids[n:]
	}
	slices.SortFunc(out, func(a, b domain.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, nil
}

// FindMeta implements ports.SessionReader.
func (s sessionQ) FindMeta(ctx context.Context, entryID string) (domain.EntryMeta, error) {
	m, err := scanMeta(s.q.QueryRowContext(ctx, `SELECT `+metaColumns+` FROM entries WHERE session_id = ? AND entry_id = ?`, s.id, entryID))
	if errors.Is(err, sql.ErrNoRows) {
		return m, notFound("entry")
	}
	return m, translate(err)
}

// MetasByBranchParent implements ports.SessionReader.
func (s sessionQ) MetasByBranchParent(ctx context.Context, parents []string) ([]domain.EntryMeta, error) {
	if len(parents) == 0 {
		return []domain.EntryMeta{}, nil
	}
	return collect(ctx, s.q, metaRow, `SELECT `+metaColumns+` FROM entries INDEXED BY entries_branch_parent
		WHERE session_id = ? AND kind NOT IN ('update', 'leaf') AND branch_parent IN (`+inList(len(parents))+`) ORDER BY seq`,
		withIDs([]any{s.id}, parents)...)
}

// SubtreeTip implements ports.SessionReader with a recursive walk down the
// parent index; it costs the subtree's size.
func (s sessionQ) SubtreeTip(ctx context.Context, entryID string) (string, error) {
	var tip string
	err := s.q.QueryRowContext(ctx, `WITH RECURSIVE sub(entry_id, seq, kind) AS (
			SELECT entry_id, seq, kind FROM entries WHERE session_id = ?1 AND entry_id = ?2
			UNION ALL
			SELECT e.entry_id, e.seq, e.kind FROM entries e JOIN sub ON e.session_id = ?1 AND e.parent_id = sub.entry_id
		) SELECT entry_id FROM sub WHERE kind NOT IN ('update', 'leaf') ORDER BY seq DESC LIMIT 1`, s.id, entryID).Scan(&tip)
	if errors.Is(err, sql.ErrNoRows) {
		return entryID, nil
	}
	return tip, translate(err)
}

// SeqOfRow implements ports.SessionReader.
func (s sessionQ) SeqOfRow(ctx context.Context, rowID string) (int64, error) {
	var seq int64
	err := s.q.QueryRowContext(ctx, `SELECT seq FROM entries WHERE row_id = ? AND session_id = ?`, rowID, s.id).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound("entry")
	}
	return seq, translate(err)
}

// LatestContextProfile implements ports.SessionReader.
func (s sessionQ) LatestContextProfile(ctx context.Context) (json.RawMessage, bool, error) {
	var p string
	err := s.q.QueryRowContext(ctx, `SELECT profile FROM context_profiles WHERE session_id = ? ORDER BY created_at DESC, run_id DESC LIMIT 1`, s.id).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, translate(err)
	}
	return json.RawMessage(p), true, nil
}

// InsertEntries implements ports.SessionWriter.
func (s sessionQ) InsertEntries(ctx context.Context, entries []domain.Entry, metas []domain.EntryMeta) error {
	if len(entries) != len(metas) {
		return errs.E(errs.Internal, "%d entries with %d metas", len(entries), len(metas))
	}
	for i, e := range entries {
		body, err := json.Marshal(e)
		if err != nil {
			return errs.Wrap(errs.Internal, err, "encode entry %s", e.ID)
		}
		m := metas[i]
		var in, out, cached, cacheWrite, total sql.NullInt64
		if u := m.Usage; u != nil {
			in, out = sql.NullInt64{Int64: u.InputTokens, Valid: true}, sql.NullInt64{Int64: u.OutputTokens, Valid: true}
			cached, cacheWrite = sql.NullInt64{Int64: u.CachedTokens, Valid: true}, sql.NullInt64{Int64: u.CacheWriteTokens, Valid: true}
			total = sql.NullInt64{Int64: u.TotalTokens, Valid: true}
		}
		if _, err := s.q.ExecContext(ctx, `INSERT INTO entries (row_id, session_id, entry_id, parent_id, branch_parent, seq, kind,
			source, run_id, call_id, item_type, target, compacted, chars, input_tokens, output_tokens, cached_tokens, cache_write_tokens,
			total_tokens, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.RowID, s.id, e.ID, e.ParentID, m.BranchParent, e.Seq, e.Kind, e.Source, e.RunID, m.CallID, m.ItemType, m.Target, e.Compacted,
			m.Chars, in, out, cached, cacheWrite, total, string(body), ms(e.CreatedAt)); err != nil {
			return translate(err)
		}
		if _, err := insertMessageText(ctx, s.q, s.id, e); err != nil {
			return err
		}
	}
	return s.bindAttachments(ctx, entries)
}

// SaveState implements ports.SessionWriter.
func (s sessionQ) SaveState(ctx context.Context, tipID string, lastSeq int64, t domain.ContextTotals, at time.Time) error {
	r, err := s.q.ExecContext(ctx, `UPDATE sessions SET tip_entry_id = ?, last_seq = ?, active_chars = ?, anchor_seq = ?,
		anchor_usage = ?, chars_after_anchor = ?, session_input_tokens = ?, session_output_tokens = ?, updated_at = ? WHERE id = ?`,
		tipID, lastSeq, t.ActiveChars, t.AnchorSeq, usageJSON(t.AnchorUsage), t.CharsAfterAnchor, t.SessionInputTokens,
		t.SessionOutputTokens, ms(at), s.id)
	if err = affected(r, err, "session"); err == nil && s.row != nil {
		s.row.TipID, s.row.LastSeq, s.row.Totals, s.row.UpdatedAt = tipID, lastSeq, t, fromMS(ms(at))
	}
	return err
}

// MarkCompacted implements ports.SessionWriter.
func (s sessionQ) MarkCompacted(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{s.id}
	for _, id := range ids {
		args = append(args, id)
	}
	r, err := s.q.ExecContext(ctx, `UPDATE entries SET compacted = 1 WHERE session_id = ? AND compacted = 0 AND entry_id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := r.RowsAffected()
	return int(n), translate(err)
}
