package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

// TestOpenWithUsesTheCallersDatabase: a *sql.DB the caller opened is
// migrated, written through and read back with the pragmas Open sets, and
// is left open by Close; an in-memory one is refused.
func TestOpenWithUsesTheCallersDatabase(t *testing.T) {
	ctx := context.Background()
	mine, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "host.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	db, err := OpenWith(ctx, mine, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateUser(ctx, user("host-ada", domain.RoleAdmin)); err != nil {
		t.Fatal(err)
	}
	if u, err := db.FindUserByUsername(ctx, "host-ada"); err != nil || u.Username != "host-ada" {
		t.Fatalf("read back through the read pool: %+v %v", u, err)
	}
	var mode string
	var fk int
	db.read.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	db.write.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	if mode != "wal" || fk != 1 {
		t.Errorf("journal_mode=%s foreign_keys=%d", mode, fk)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := mine.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the caller's database after Close: %d users, %v", n, err)
	}

	memory, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer memory.Close()
	if _, err := OpenWith(ctx, memory, quiet); errs.CodeOf(err) != errs.Validation {
		t.Fatalf("an in-memory database: %v", err)
	}
}
