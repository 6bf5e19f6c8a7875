package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"strings"
	"unicode"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// The message search index (migrations 00026 SQLite, 00006 Postgres): a
// message_texts row per message people read, holding its words; SQLite
// indexes them in an FTS5 table its triggers keep in step, Postgres in a
// generated tsvector under a GIN index. Only the match differs.

// insertMessageText files an entry's words in the index, in the
// transaction that inserts the entry; entries that are not read as
// bubbles, or hold no word, are not filed.
func insertMessageText(ctx context.Context, q querier, sessionID string, e domain.Entry) (filed bool, err error) {
	role, text, ok := domain.ReadableText(e)
	if !ok {
		return false, nil
	}
	words := domain.SearchWords(text)
	if words == "" {
		return false, nil
	}
	_, err = q.ExecContext(ctx, `INSERT INTO message_texts (row_id, session_id, entry_id, role, created_at, words) VALUES (?, ?, ?, ?, ?, ?)`,
		e.RowID, sessionID, e.ID, role, ms(e.CreatedAt), words)
	return err == nil, translate(err)
}

// sqliteWordMatch finds the index rows holding every term as a word's
// start: an FTS5 query of quoted prefix terms. The terms are letters and
// digits only (domain.SearchTerms), so quoting cannot be broken out of.
// The FTS table leads the join: with the owner's sessions leading
// instead, SQLite probed every matching row once per session (540 ms for
// a word in all of 25,000 messages; 13 ms this way).
func sqliteWordMatch(terms []string) (from, cond, arg string) {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + t + `"*`
	}
	return `message_words JOIN message_texts m ON m.id = message_words.rowid`, `message_words MATCH ?`, strings.Join(q, " ")
}

// postgresWordMatch is the same as a tsquery literal of prefix lexemes,
// taken verbatim (no parser or dictionary), as the tsvector's are.
func postgresWordMatch(terms []string) (from, cond, arg string) {
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `'` + t + `':*`
	}
	return `message_texts m`, `m.lexemes @@ ?::tsquery`, strings.Join(q, " & ")
}

// SearchMessages implements ports.MessageSearch. The page's rows are
// chosen from the index alone, and only their bodies are read.
func (db *DB) SearchMessages(ctx context.Context, q ports.MessageQuery) ([]ports.MessageHit, error) {
	if len(q.Terms) == 0 || q.Limit <= 0 {
		return []ports.MessageHit{}, nil
	}
	for _, t := range q.Terms {
		// The match quotes the terms: only a word is safe to quote.
		if t == "" || strings.ContainsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			return nil, errs.E(errs.Internal, "search term %q is not a word", t)
		}
	}
	from, cond, match := db.dialect.wordMatch(q.Terms)
	args := []any{match, q.OwnerID}
	page := ``
	if !q.After.IsZero() {
		at := ms(q.After.CreatedAt)
		page = ` AND (m.created_at < ? OR (m.created_at = ? AND m.row_id < ?))`
		args = append(args, at, at, q.After.RowID)
	}
	query := `SELECT p.session_id, p.name, p.entry_id, p.row_id, p.created_at, e.body FROM (
			SELECT m.session_id, s.name, m.entry_id, m.row_id, m.created_at FROM ` + from + `
			JOIN sessions s ON s.id = m.session_id
			WHERE ` + cond + ` AND s.owner_id = ? AND s.hidden = 0` + page + `
			ORDER BY m.created_at DESC, m.row_id DESC LIMIT ?
		) p JOIN entries e ON e.row_id = p.row_id ORDER BY p.created_at DESC, p.row_id DESC`
	return collect(ctx, db.read, scanMessageHit, query, append(args, q.Limit)...)
}

func scanMessageHit(r rowScanner) (ports.MessageHit, error) {
	var h ports.MessageHit
	var created int64
	var body []byte
	if err := r.Scan(&h.SessionID, &h.SessionName, &h.EntryID, &h.RowID, &created, &body); err != nil {
		return h, err
	}
	h.CreatedAt = fromMS(created)
	var e domain.Entry
	if err := json.Unmarshal(body, &e); err != nil {
		return h, errs.Wrap(errs.Internal, err, "entry %s has a malformed body", h.RowID)
	}
	h.Role, h.Text, _ = domain.ReadableText(e)
	return h, nil
}

// storedMessage is an entry as the backfill reads it.
type storedMessage struct {
	session string
	entry   domain.Entry
}

func scanStoredMessage(r rowScanner) (storedMessage, error) {
	var m storedMessage
	var rowID string
	var body []byte
	if err := r.Scan(&rowID, &m.session, &body); err != nil {
		return m, err
	}
	_ = json.Unmarshal(body, &m.entry) // a malformed body leaves no id: skipped
	m.entry.RowID = rowID
	return m, nil
}

// messageTextsMigration is the Go migration (after the one creating the
// index) that files the messages stored before it: the words are Go's
// (domain.SearchWords), which SQL cannot compute.
func messageTextsMigration(d *dialect, version int64, log *slog.Logger) *goose.Migration {
	up := func(ctx context.Context, tx *sql.Tx) error {
		q := txQ{Tx: tx, d: d}
		filed, after := 0, ""
		for {
			// In batches: a transaction's connection cannot write while it
			// still streams a read.
			batch, err := collect(ctx, q, scanStoredMessage, `SELECT row_id, session_id, body FROM entries
				WHERE kind = 'item' AND item_type = 'message' AND row_id > ? ORDER BY row_id LIMIT 500`, after)
			if err != nil || len(batch) == 0 {
				if filed > 0 {
					log.Info("filed the stored messages in the search index", "messages", filed)
				}
				return err
			}
			for _, m := range batch {
				after = m.entry.RowID
				if m.entry.ID == "" {
					continue // a malformed body is not a message anyone reads
				}
				ok, err := insertMessageText(ctx, q, m.session, m.entry)
				if err != nil {
					return err
				}
				if ok {
					filed++
				}
			}
		}
	}
	down := func(context.Context, *sql.Tx) error { return nil } // the index's own migration drops it
	return goose.NewGoMigration(version, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: down})
}
