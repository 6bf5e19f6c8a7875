package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/migrations"
)

// FileName is the SQLite database file's name inside the data directory.
const FileName = "agents.db"

// sqliteDialect: one writer connection (so writers never fight over
// SQLite's single write lock), ? placeholders, WAL snapshots.
var sqliteDialect = &dialect{
	name:       "sqlite",
	goose:      goose.DialectSQLite3,
	migrations: migrations.SQLite,
	goMigrations: func(d *dialect, log *slog.Logger) []*goose.Migration {
		return []*goose.Migration{usernameKeysMigration(log), messageTextsMigration(d, 27, log)}
	},
	wordMatch: sqliteWordMatch,
	// The writer checkpoints the WAL into the main file before closing.
	onClose: func(write *sql.DB) error {
		_, err := write.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	},
}

// pragmas run on every connection, in order: busy_timeout first so even the
// switch to WAL waits instead of failing under a concurrent opener.
var pragmas = []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"}

func dsn(path string, extra url.Values) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	for k, vs := range extra {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Open opens (creating when absent) the SQLite database at path, migrates
// it, and refuses a database written by a newer schema than this binary
// knows. Returns unavailable with a message a person can act on.
func Open(ctx context.Context, path string, log *slog.Logger) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "create the data directory %s", filepath.Dir(path))
	}
	// The writer begins IMMEDIATE transactions: taking the write lock up front
	// means a transaction never fails late on a lock upgrade.
	write, err := sql.Open("sqlite", dsn(path, url.Values{"_txlock": {"immediate"}}))
	if err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "open %s", path)
	}
	return startSQLite(ctx, &DB{where: path, log: log, dialect: sqliteDialect}, write)
}

// OpenWith uses a database the caller opened with this driver ("sqlite"):
// it writes through write on one connection (setting the pool's limits and
// the pragmas Open's connections get), migrates it, and reads the same
// file through a pool of its own. The database must be a file: an
// in-memory one has nothing a second pool could open. Close leaves write
// open for the caller to close.
func OpenWith(ctx context.Context, write *sql.DB, log *slog.Logger) (*DB, error) {
	limitWriter(write)
	for _, p := range pragmas {
		if _, err := write.ExecContext(ctx, "PRAGMA "+strings.Replace(strings.TrimSuffix(p, ")"), "(", "=", 1)); err != nil {
			return nil, errs.Wrap(errs.Unavailable, err, "set PRAGMA %s on the supplied database", p)
		}
	}
	var path string
	if err := write.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
		return nil, errs.Wrap(errs.Unavailable, err, "read the supplied database's file")
	}
	if path == "" {
		return nil, errs.E(errs.Validation, "the supplied database is in memory: the workbench needs a file database")
	}
	return startSQLite(ctx, &DB{where: path, log: log, borrowed: true, dialect: sqliteDialect}, write)
}

// limitWriter keeps the writer to one connection, kept open.
func limitWriter(write *sql.DB) {
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
}

// startSQLite finishes opening db on its writer: the migrations, then the
// read pool on the same file. A failure closes what it opened, and the
// writer unless the caller lent it.
func startSQLite(ctx context.Context, db *DB, write *sql.DB) (*DB, error) {
	limitWriter(write)
	db.write = pool{DB: write}
	fail := func(err error) (*DB, error) {
		if !db.borrowed {
			write.Close()
		}
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		return fail(err)
	}
	read, err := sql.Open("sqlite", dsn(db.where, url.Values{"_pragma": {"query_only(1)"}}))
	if err != nil {
		return fail(errs.Wrap(errs.Unavailable, err, "open %s", db.where))
	}
	n := max(4, runtime.NumCPU())
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	// Statements are prepared from here on: the schema is final.
	db.read = pool{DB: read, stmts: newStmtCache(read), d: sqliteDialect}
	db.write = pool{DB: write, stmts: newStmtCache(write), d: sqliteDialect}
	if err := read.PingContext(ctx); err != nil {
		db.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "open %s", db.where)
	}
	return db, nil
}
