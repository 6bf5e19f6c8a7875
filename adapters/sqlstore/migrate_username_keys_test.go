package sqlstore

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/migrations"
)

// Migration 00009 keys the users an older database holds; names that fold
// together leave the first one signing in and the later one keyed apart.
func TestUsernameKeysMigrationKeysExistingUsers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", dsn(path, url.Values{}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, migrations.SQLite, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, usernameKeysVersion-1); err != nil {
		t.Fatal(err)
	}
	for _, u := range [][2]string{{"u1", "Straße"}, {"u2", "STRASSE"}, {"u3", "bob"}} {
		if _, err := old.ExecContext(ctx, `INSERT INTO users (id, username, role, created_at, updated_at) VALUES (?, ?, 'member', 0, 0)`,
			u[0], u[1]); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	db, err := Open(ctx, path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for name, want := range map[string]string{"strasse": "u1", "STRASSE": "u1", "ｂｏｂ": "u3", "BOB": "u3"} {
		if u, err := db.FindUserByUsername(ctx, name); err != nil || u.ID != want {
			t.Errorf("FindUserByUsername(%q) = %s, %v; want %s", name, u.ID, err, want)
		}
	}
	if err := db.CreateUser(ctx, user("ＢＯＢ", domain.RoleMember)); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a look-alike of bob: %v, want conflict", err)
	}
}
