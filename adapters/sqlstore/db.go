// Package sqlstore implements every store port on a SQL database: SQLite
// embedded in the binary (the pure-Go modernc driver; the default) or a
// Postgres server (pgx), for a team running several replicas on one
// database. The queries are shared: they are written once, with ?
// placeholders, in the SQL both engines speak; what differs (opening,
// placeholders, how writers are serialized, error codes, migrations) is the
// dialect's.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// DB is the open store: read queries go to a pool, writes to the writer
// pool, each write transaction serialized with every other (SQLite's one
// writer connection; Postgres's write lock), so writers never interleave.
type DB struct {
	read    pool
	write   pool
	dialect *dialect
	// where names the database in messages: the SQLite file, or the
	// Postgres URL without its password.
	where string
	log   *slog.Logger
	// url is the Postgres database's URL (with its password), for the
	// backplane's own connections; empty on SQLite.
	url string

	closeOnce sync.Once
	closeErr  error
	// borrowed: the writer is the caller's *sql.DB (OpenWith), closed by
	// the caller, not by Close.
	borrowed bool
	// writes hears each write's timings (ObserveWrites); nil until set.
	// Atomic: writers may already run when the watchers are wired.
	writes atomic.Pointer[writeHook]
}

// WriteObserver hears how long each write took, so one can see whether
// serialized writers (SQLite's one writer; Postgres's write lock) cap a
// team. took is the whole write, from asking for a connection to the
// commit's answer; waited is the part before it held the right to write
// (Postgres: a pooled connection, BEGIN and the advisory lock; SQLite: the
// writer connection's queue and BEGIN IMMEDIATE), so took - waited is how
// long it held the writers' lock. waited is negative when it is not known
// apart: a lone statement on SQLite (database/sql keeps the writer
// connection's queue to itself). It is called on the writer's goroutine,
// after the commit: it must be quick and never block.
type WriteObserver interface {
	StoreWrite(waited, took time.Duration)
}

// writeHook boxes a WriteObserver for the atomic pointer.
type writeHook struct{ o WriteObserver }

// ObserveWrites makes o hear every write from now on (nil: none).
func (db *DB) ObserveWrites(o WriteObserver) {
	if o == nil {
		db.writes.Store(nil)
		return
	}
	db.writes.Store(&writeHook{o})
}

// observeWrite tells the observer, if any, of one write.
func (db *DB) observeWrite(waited, took time.Duration) {
	if h := db.writes.Load(); h != nil {
		h.o.StoreWrite(waited, took)
	}
}

// migrate applies pending migrations, after checking the database is not
// from a newer build: running old code on a newer schema would corrupt it.
func (db *DB) migrate(ctx context.Context) error {
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if db.dialect.goMigrations != nil {
		opts = append(opts, goose.WithGoMigrations(db.dialect.goMigrations(db.dialect, db.log)...))
	}
	if db.dialect.migrateLock != nil {
		lock, err := db.dialect.migrateLock()
		if err != nil {
			return errs.Wrap(errs.Internal, err, "lock migrations")
		}
		opts = append(opts, lock)
	}
	p, err := goose.NewProvider(db.dialect.goose, db.write.DB, db.dialect.migrations, opts...)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "load migrations")
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "read the schema version of %s", db.where)
	}
	sources := p.ListSources()
	known := sources[len(sources)-1].Version
	if current > known {
		return errs.E(errs.Unavailable, "the database %s has schema version %d, newer than this binary knows (%d): "+
			"it was written by a newer agents-server; run that version or point the server at another database", db.where, current, known)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "migrate %s", db.where)
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

// Path is the SQLite database file's location; empty on Postgres.
func (db *DB) Path() string {
	if db.dialect != sqliteDialect {
		return ""
	}
	return db.where
}

// Dialect names the engine: "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect.name }

// Ping checks that both pools answer.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.read.PingContext(ctx); err != nil {
		return translate(err)
	}
	return translate(db.write.PingContext(ctx))
}

// Close closes both pools (SQLite first checkpoints its WAL into the main
// file). Later calls return the first call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.read.stmts.close()
		db.write.stmts.close()
		if db.read.DB != nil && db.read.DB != db.write.DB {
			db.closeErr = db.read.Close()
		}
		if db.dialect.onClose != nil {
			if err := db.dialect.onClose(db.write.DB); err != nil && db.closeErr == nil {
				db.closeErr = err
			}
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
// Its timings go to the write observer (a time.Now per step, no query):
// one that failed after taking the write right counts too, it held it.
func (db *DB) tx(ctx context.Context, fn func(txQ) error) error {
	asked := time.Now()
	return db.write.run(ctx, nil, func(t txQ) error {
		// SQLite's right to write is the writer connection and its BEGIN
		// IMMEDIATE, both behind run's BeginTx; Postgres's is the lock.
		if db.dialect.lockWrites != "" {
			if _, err := t.Tx.ExecContext(ctx, db.dialect.lockWrites); err != nil {
				_ = t.Rollback()
				return translate(err)
			}
		}
		waited := time.Since(asked)
		err := fn(t)
		if err == nil {
			// The records of the change go in its own transaction: a change
			// cannot commit without them, a failed one leaves none.
			err = writeStagedAudit(ctx, t)
		}
		if err != nil {
			_ = t.Rollback()
		} else if err = translate(t.Commit()); err == nil {
			ports.StagedAudit(ctx).Landed()
		}
		db.observeWrite(waited, time.Since(asked))
		return err
	})
}

// snapshot runs fn in a read transaction that sees one snapshot no
// concurrent write can tear (SQLite's WAL; Postgres's repeatable read).
func (db *DB) snapshot(ctx context.Context, fn func(txQ) error) error {
	return db.read.run(ctx, &sql.TxOptions{ReadOnly: true, Isolation: db.dialect.snapshot}, func(t txQ) error {
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
	err = fn(txQ{Tx: t, stmts: p.stmts, d: p.d, missed: &missed})
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

// exec runs one write statement outside an explicit transaction; where
// writers are serialized by a lock (Postgres), in a transaction holding it,
// so a lone statement never lands between a transaction's reads; and when
// ctx stages audit records, in a transaction writing them too.
func (db *DB) exec(ctx context.Context, query string, args ...any) (r sql.Result, err error) {
	if db.dialect.lockWrites == "" && len(ports.StagedAudit(ctx).Pending()) == 0 {
		asked := time.Now()
		r, err = db.write.ExecContext(ctx, query, args...)
		db.observeWrite(-1, time.Since(asked))
		return r, translate(err)
	}
	err = db.tx(ctx, func(t txQ) error {
		if r, err = t.ExecContext(ctx, query, args...); err != nil {
			return translate(err)
		}
		// A statement that changed no row (a delete of what is not there)
		// changed nothing to record: its caller reports not_found.
		if n, err := r.RowsAffected(); err == nil && n == 0 && len(ports.StagedAudit(ctx).Pending()) > 0 {
			return errUnchanged
		}
		return nil
	})
	if err == errUnchanged {
		err = nil
	}
	return r, err
}

// errUnchanged rolls back the audit records of a lone statement that
// changed no row.
var errUnchanged = errors.New("the statement changed no row")

// writer is what lone writes (one statement, no transaction of their own)
// go through: the write pool, or, where writers are serialized by a lock,
// one locked transaction per statement; either way through exec, which
// times them.
func (db *DB) writer() querier { return lockedWriter{db} }

// lockedWriter runs each statement as exec does; reads go to the write
// pool.
type lockedWriter struct{ db *DB }

func (w lockedWriter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return w.db.exec(ctx, query, args...)
}

func (w lockedWriter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return w.db.write.QueryContext(ctx, query, args...)
}

func (w lockedWriter) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return w.db.write.QueryRowContext(ctx, query, args...)
}

// String is for logs.
func (db *DB) String() string { return db.dialect.name + "(" + db.where + ")" }
