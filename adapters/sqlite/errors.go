package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agents-server/agents-server/core/errs"
)

// translate maps driver errors to coded errors by SQLite result code, never by
// message text: no rows → not_found, a UNIQUE or primary-key clash →
// conflict, a busy database → unavailable, a cancelled context stays itself.
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
	return errs.Wrap(errs.Internal, err, "database")
}

// notFound is the error for a write or read that matched no row.
func notFound(what string) error { return errs.E(errs.NotFound, "%s not found", what) }
