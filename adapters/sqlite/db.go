// Package sqlite implements every store port on an embedded SQLite database
// (the pure-Go modernc driver): a pool of read connections plus a single
// writer connection, WAL journaling, and goose migrations run at open.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/migrations"
)

// FileName is the database file's name inside the data directory.
const FileName = "agents.db"

// DB is the open store: read queries go to a pool, every write goes through
// one connection, so writers never fight over SQLite's single write lock.
type DB struct {
	read  pool
	write pool
	path  string
	log   *slog.Logger

	closeOnce sync.Once
	closeErr  error
	// borrowed: the writer is the caller's *sql.DB (OpenWith), closed by
	// the caller, not by Close.
	borrowed bool
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

// Open opens (creating when absent) the database at path, migrates it, and
// refuses a database written by a newer schema than this binary knows.
// Returns unavailable with a message a person can act on.
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
	return start(ctx, &DB{path: path, log: log}, write)
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
	return start(ctx, &DB{path: path, log: log, borrowed: true}, write)
}

// limitWriter keeps the writer to one connection, kept open.
func limitWriter(write *sql.DB) {
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
}

// start finishes opening db on its writer: the migrations, then the read
// pool on the same file. A failure closes what it opened, and the writer
// unless the caller lent it.
func start(ctx context.Context, db *DB, write *sql.DB) (*DB, error) {
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
	read, err := sql.Open("sqlite", dsn(db.path, url.Values{"_pragma": {"query_only(1)"}}))
	if err != nil {
		return fail(errs.Wrap(errs.Unavailable, err, "open %s", db.path))
	}
	n := max(4, runtime.NumCPU())
	read.SetMaxOpenConns(n)
	read.SetMaxIdleConns(n)
	// Statements are prepared from here on: the schema is final.
	db.read, db.write = newPool(read), newPool(write)
	if err := read.PingContext(ctx); err != nil {
		db.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "open %s", db.path)
	}
	return db, nil
}

// migrate applies pending migrations, after checking the database is not
// from a newer build: running old code on a newer schema would corrupt it.
func (db *DB) migrate(ctx context.Context) error {
	p, err := goose.NewProvider(goose.DialectSQLite3, db.write.DB, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(usernameKeysMigration(db.log)))
	if err != nil {
		return errs.Wrap(errs.Internal, err, "load migrations")
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "read the schema version of %s", db.path)
	}
	sources := p.ListSources()
	known := sources[len(sources)-1].Version
	if current > known {
		return errs.E(errs.Unavailable, "the database %s has schema version %d, newer than this binary knows (%d): "+
			"it was written by a newer agents-server; run that version or point --data-dir elsewhere", db.path, current, known)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "migrate %s", db.path)
	}
	for _, r := range results {
		file := filepath.Base(r.Source.Path)
		if r.Source.Path == "" {
			file = "(Go migration)"
		}
		db.log.Info("migrated database", "version", r.Source.Version, "file", file)
	}
	return nil
}

// Path is the database file's location.
func (db *DB) Path() string { return db.path }

// Ping checks that both pools answer.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return translate(err)
	}
	return translate(db.write.PingContext(ctx))
}

// Close checkpoints the WAL into the main file and closes both pools. Later
// calls return the first call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		if db.read.DB != nil {
			db.read.stmts.close()
			db.closeErr = db.read.Close()
		}
		if db.write.stmts != nil {
			db.write.stmts.close()
		}
		if _, err := db.write.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil && db.closeErr == nil {
			db.closeErr = err
		}
		if db.borrowed {
			return
		}
		if err := db.write.Close(); err != nil && db.closeErr == nil {
			db.closeErr = err
		}
	})
	return db.closeErr
}

// tx runs fn in one write transaction, committing when it returns nil.
func (db *DB) tx(ctx context.Context, fn func(txQ) error) error {
	return db.write.run(ctx, nil, func(t txQ) error {
		if err := fn(t); err != nil {
			_ = t.Rollback()
			return err
		}
		return translate(t.Commit())
	})
}

// snapshot runs fn in a read transaction: WAL gives it a snapshot no
// concurrent write can tear.
func (db *DB) snapshot(ctx context.Context, fn func(txQ) error) error {
	return db.read.run(ctx, &sql.TxOptions{ReadOnly: true}, func(t txQ) error {
		defer t.Rollback()
		return fn(t)
	})
}

// run begins a transaction on the pool and hands it to fn, which ends it;
// then the statements it met for the first time are prepared, now that
// its connection is back in the pool.
func (p pool) run(ctx context.Context, opts *sql.TxOptions, fn func(txQ) error) error {
	t, err := p.BeginTx(ctx, opts)
	if err != nil {
		return translate(err)
	}
	var missed []string
	err = fn(txQ{Tx: t, stmts: p.stmts, missed: &missed})
	for _, q := range missed {
		p.stmts.prepare(ctx, q)
	}
	return err
}

// scanString reads a one-column text row.
func scanString(r rowScanner) (string, error) {
	var s string
	err := r.Scan(&s)
	return s, err
}

// exec runs one write statement outside an explicit transaction.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	r, err := db.write.ExecContext(ctx, query, args...)
	return r, translate(err)
}

// String is for logs.
func (db *DB) String() string { return fmt.Sprintf("sqlite(%s)", db.path) }
