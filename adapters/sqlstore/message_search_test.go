package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/migrations"
	"github.com/agents-server/agents-server/ports"
)

// messageSearchVersion is migration 00026, which creates the index; the
// Go migration after it fills it.
const messageSearchVersion = 26

func countRows(t *testing.T, db *DB, query string) int {
	t.Helper()
	var n int
	if err := db.read.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The FTS5 table follows the index rows it was written from: a deleted
// session leaves no words behind (the cascade from sessions through
// entries to message_texts fires the trigger that drops them).
func TestMessageWordsGoWithTheirSession(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	s := newSession(t, db, "s")
	entries := []domain.Entry{
		{ID: "e1", RowID: "r1", Seq: 1, Kind: domain.KindItem, Source: domain.SourceUser, CreatedAt: when,
			Item: domain.TextMessage("user", "input_text", "find the lynx")},
		{ID: "e2", RowID: "r2", ParentID: "e1", Seq: 2, Kind: domain.KindItem, Source: domain.SourceModel, CreatedAt: when,
			Item: domain.AssistantMessage("", "the lynx is found")},
	}
	metas := []domain.EntryMeta{domain.MetaOf(entries[0], ""), domain.MetaOf(entries[1], "e1")}
	if err := db.WriteSession(ctx, s.ID, func(tx ports.SessionTx) error { return tx.InsertEntries(ctx, entries, metas) }); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM message_words WHERE message_words MATCH 'lynx'`); n != 2 {
		t.Fatalf("indexed %d messages, want 2", n)
	}
	if err := db.DeleteSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM message_words`); n != 0 {
		t.Fatalf("%d words rows outlive their session", n)
	}
	if n := countRows(t, db, `SELECT count(*) FROM message_texts`); n != 0 {
		t.Fatalf("%d index rows outlive their session", n)
	}
}

// A database from before the index has its stored messages filed by the
// migration that follows it: they are found as soon as it opens.
func TestMessageSearchMigrationFilesStoredMessages(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", dsn(path, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, migrations.SQLite, goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(sqliteDialect.goMigrations(sqliteDialect, quiet)...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, messageSearchVersion-1); err != nil {
		t.Fatal(err)
	}
	body := func(e domain.Entry) string {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rows := []domain.Entry{
		{ID: "e1", Kind: domain.KindItem, Source: domain.SourceUser, Item: domain.TextMessage("user", "input_text", "an old puffin")},
		{ID: "e2", Kind: domain.KindItem, Source: domain.SourceModel, Item: domain.AssistantMessage("", "puffins nest")},
		{ID: "e3", Kind: domain.KindItem, Source: domain.SourceModel, Item: domain.FunctionCall("", "c", "puffin", "{}")},
	}
	for _, q := range []string{
		`INSERT INTO users (id, username, username_key, role, created_at, updated_at) VALUES ('u', 'u', 'u', 'member', 0, 0)`,
		`INSERT INTO sessions (id, owner_id, name, created_at, updated_at) VALUES ('s', 'u', 'old chat', 0, 0)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i, e := range rows {
		m := domain.MetaOf(e, "")
		if _, err := old.ExecContext(ctx, `INSERT INTO entries (row_id, session_id, entry_id, seq, kind, item_type, body, created_at)
			VALUES (?, 's', ?, ?, 'item', ?, ?, ?)`, fmt.Sprint("r", i), e.ID, i+1, m.ItemType, body(e), 1000+i); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()
	db, err := Open(ctx, path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hits, err := db.SearchMessages(ctx, ports.MessageQuery{OwnerID: "u", Terms: []string{"puffin"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.EntryID+" "+h.Role+" "+h.Text)
	}
	if want := []string{"e2 assistant puffins nest", "e1 user an old puffin"}; !slices.Equal(got, want) {
		t.Fatalf("after the migration: %q, want %q", got, want)
	}
}
