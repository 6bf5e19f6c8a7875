package sqlstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openTemp opens an empty store on the engine the run chose (see
// pgtest.StoreEnv): the same tests are the contract of both engines.
func openTemp(t *testing.T) *DB {
	t.Helper()
	open := sqliteOpener(t, filepath.Join(t.TempDir(), FileName))
	if pgtest.OnPostgres() {
		url := pgtest.URL(t, "store suite on Postgres")
		open = func() (*DB, error) { return OpenPostgres(context.Background(), url, quiet) }
	}
	db, err := open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reopeners.Store(db, open)
	return db
}

// reopeners holds how each test store was opened, for reopen.
var reopeners sync.Map

// reopen closes db and opens its database again, as a restart does.
func reopen(t *testing.T, db *DB) *DB {
	t.Helper()
	open, ok := reopeners.Load(db)
	if !ok {
		t.Fatal("reopen takes a store openTemp opened")
	}
	db.Close()
	again, err := open.(func() (*DB, error))()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	reopeners.Store(again, open)
	return again
}

func sqliteOpener(t *testing.T, path string) func() (*DB, error) {
	return func() (*DB, error) { return Open(context.Background(), path, quiet) }
}

// openSQLite opens an empty SQLite store, for the tests of SQLite itself.
func openSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), FileName), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var seq int

func user(name string, role domain.Role) domain.User {
	seq++
	now := time.UnixMilli(1_700_000_000_000 + int64(seq)).UTC()
	return domain.User{ID: fmt.Sprintf("u%03d", seq), Username: name, Role: role, CreatedAt: now, UpdatedAt: now}
}

func TestOpenSetsPragmasAndMigrates(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	var mode string
	var fk, sync int
	db.read.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	db.read.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk)
	db.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync)
	if mode != "wal" || fk != 1 || sync != 1 {
		t.Fatalf("journal_mode=%s foreign_keys=%d synchronous=%d", mode, fk, sync)
	}
	// The read pool cannot write.
	if _, err := db.read.ExecContext(ctx, "INSERT INTO server_meta VALUES ('x','y')"); err == nil {
		t.Fatal("the read pool accepted a write")
	}
}

func TestANewerSchemaRefusesToOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(context.Background(), path, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), path, quiet)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("opened a newer schema: %v", err)
	}
	// Reopening an up-to-date database is fine and idempotent.
	path2 := filepath.Join(t.TempDir(), FileName)
	for i := 0; i < 2; i++ {
		db, err := Open(context.Background(), path2, quiet)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}
