package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agents-server/agents-server/core/errs"
)

// translate maps driver errors to coded errors by SQLite result code or
// Postgres SQLSTATE, never by message text: no rows → not_found, a UNIQUE
// or primary-key clash → conflict, a busy or unreachable database →
// unavailable, a cancelled context stays itself.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errs.CodeOf(err) != errs.Internal {
		return err // already coded
	}
	if errors.Is(err, sql.ErrNoRows) {
		return errs.Wrap(errs.NotFound, err, "not found")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errs.Wrap(errs.Conflict, err, "already exists")
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errs.Wrap(errs.Conflict, err, "still referenced by other rows")
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return errs.Wrap(errs.Unavailable, err, "the database is busy, retry shortly")
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return errs.Wrap(errs.Conflict, err, "already exists")
		case pe.Code == "23503":
			return errs.Wrap(errs.Conflict, err, "still referenced by other rows")
		// serialization failure, deadlock, lock not available, too many
		// connections, the server shutting down or starting.
		case pe.Code == "40001" || pe.Code == "40P01" || pe.Code == "55P03" ||
			strings.HasPrefix(pe.Code, "53") || strings.HasPrefix(pe.Code, "57P"):
			return errs.Wrap(errs.Unavailable, err, "the database is busy, retry shortly")
		}
		return errs.Wrap(errs.Internal, err, "database")
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.Is(err, driver.ErrBadConn) {
		return errs.Wrap(errs.Unavailable, err, "the database is unreachable, retry shortly")
	}
	return errs.Wrap(errs.Internal, err, "database")
}

// notFound is the error for a write or read that matched no row.
func notFound(what string) error { return errs.E(errs.NotFound, "%s not found", what) }
