package sqlstore

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/migrations"
)

// entriesBodyLastVersion is migration 00014, which rebuilds entries with
// the body last.
const entriesBodyLastVersion = 14

// Migration 00014 rebuilds the entries table column for column: every
// entry an older database holds reads the same afterwards, and the body
// is the table's last column. Down restores the old order.
func TestEntriesBodyLastMigrationKeepsEveryEntry(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", dsn(path, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	p, err := goose.NewProvider(goose.DialectSQLite3, old, migrations.SQLite, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, entriesBodyLastVersion-1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO users (id, username, role, created_at, updated_at) VALUES ('u', 'u', 'member', 0, 0)`,
		`INSERT INTO sessions (id, owner_id, created_at, updated_at) VALUES ('s', 'u', 0, 0)`,
		`INSERT INTO entries (row_id, session_id, entry_id, seq, kind, compacted, chars, total_tokens, body, created_at)
			VALUES ('r1', 's', 'e1', 1, 'item', 1, 42, 7, '{"kind":"item"}', 123)`,
	} {
		if _, err := old.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	check := func(lastColumn string) {
		t.Helper()
		var compacted, chars, tokens, created int64
		var body string
		if err := old.QueryRowContext(ctx, `SELECT compacted, chars, total_tokens, created_at, body FROM entries WHERE row_id = 'r1'`).
			Scan(&compacted, &chars, &tokens, &created, &body); err != nil || compacted != 1 || chars != 42 || tokens != 7 ||
			created != 123 || body != `{"kind":"item"}` {
			t.Fatalf("entry after the migration: %d %d %d %d %q, %v", compacted, chars, tokens, created, body, err)
		}
		var name string
		if err := old.QueryRowContext(ctx, `SELECT name FROM pragma_table_info('entries') ORDER BY cid DESC LIMIT 1`).Scan(&name); err != nil ||
			name != lastColumn {
			t.Fatalf("last column = %q, %v; want %s", name, err, lastColumn)
		}
	}
	if _, err := p.UpTo(ctx, entriesBodyLastVersion); err != nil {
		t.Fatal(err)
	}
	check("body")
	if _, err := p.DownTo(ctx, entriesBodyLastVersion-1); err != nil {
		t.Fatal(err)
	}
	check("created_at")
}
