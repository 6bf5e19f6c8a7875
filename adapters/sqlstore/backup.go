package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"

	"github.com/agents-server/agents-server/core/errs"
)

// Backup copies the SQLite database at path into a new file to, as one
// consistent snapshot (VACUUM INTO), while servers keep using it: the
// database is opened read-only, so this neither migrates it nor takes its
// write lock, and sealed values are copied sealed. to must not exist.
func Backup(ctx context.Context, path, to string) error {
	if _, err := os.Stat(path); err != nil {
		return errs.Wrap(errs.NotFound, err, "no database at %s: name the data directory the server uses", path)
	}
	if _, err := os.Stat(to); err == nil {
		return errs.E(errs.Conflict, "%s exists: a backup is written to a new file", to)
	} else if !errors.Is(err, os.ErrNotExist) {
		return errs.Wrap(errs.Unavailable, err, "check %s", to)
	}
	db, err := sql.Open("sqlite", readOnly(path))
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "open %s", path)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", to); err != nil {
		_ = os.Remove(to)
		return errs.Wrap(errs.Unavailable, err, "copy %s into %s", path, to)
	}
	return nil
}

// CheckBackup opens the file at path read-only and makes sure it is a
// database of this program (it holds the migrations' record), so a restore
// never puts another file in place.
func CheckBackup(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", readOnly(path))
	if err != nil {
		return errs.Wrap(errs.Validation, err, "open %s", path)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version").Scan(&n); err != nil || n == 0 {
		return errs.E(errs.Validation, "%s is not a backup of this program's database", path)
	}
	return nil
}

// readOnly opens a database file without changing it: none of the
// pragmas a store's connections set (a journal mode is a write), only the
// wait for a writer's lock.
func readOnly(path string) string {
	q := url.Values{"mode": {"ro"}, "_pragma": {"busy_timeout(10000)"}}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
