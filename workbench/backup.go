package workbench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/agents-server/agents-server/adapters/sqlstore"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/core/secrets"
)

// Backup copies the SQLite store in o.DataDir into a new file to: one
// consistent snapshot, taken while servers keep running on it (the store
// is read, never migrated or locked). Sealed values stay sealed and the
// secret-key canary comes along, so the copy needs the same key. A store
// on Postgres is backed up with pg_dump instead (validation says so).
func Backup(ctx context.Context, o Options, to string) error {
	if o.DatabaseURL != "" || o.DB != nil {
		return errs.E(errs.Validation, "the store is on Postgres: back it up with pg_dump (see the README's Backups)")
	}
	if o.DataDir == "" {
		return errs.E(errs.Validation, "name the data directory to back up")
	}
	if to == "" {
		return errs.E(errs.Validation, "name the file to write the backup to")
	}
	return sqlstore.Backup(ctx, filepath.Join(o.DataDir, sqlstore.FileName), to)
}

// Restore puts a backup made by Backup into o.DataDir, which must hold no
// store yet. The copy is opened as a start would open it — migrated
// forward when the backup is older than this binary, and refused for a
// missing or wrong secret key exactly as a start is — before it takes the
// store's place, so a refused restore leaves the data directory as it was.
func Restore(ctx context.Context, o Options, from string) (err error) {
	if o.DatabaseURL != "" || o.DB != nil {
		return errs.E(errs.Validation, "the store is on Postgres: restore it with pg_restore (see the README's Backups)")
	}
	if o.DataDir == "" {
		return errs.E(errs.Validation, "name the data directory to restore into")
	}
	final := filepath.Join(o.DataDir, sqlstore.FileName)
	if _, err := os.Stat(final); err == nil {
		return errs.E(errs.Conflict, "%s holds a store already: restore into an empty data directory", o.DataDir)
	}
	if err := sqlstore.CheckBackup(ctx, from); err != nil {
		return err
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return errs.Wrap(errs.Unavailable, err, "create %s", o.DataDir)
	}
	staging := final + ".restoring"
	defer func() {
		if err != nil {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(staging + suffix)
			}
		}
	}()
	if err := copyFile(from, staging); err != nil {
		return err
	}
	box, err := secrets.NewBox(o.SecretKey)
	if err != nil {
		return err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := sqlstore.Open(ctx, staging, log)
	if err != nil {
		return err
	}
	if err := secrets.CheckKey(ctx, box, db); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return errs.Wrap(errs.Unavailable, err, "close the restored store")
	}
	if err := os.Rename(staging, final); err != nil {
		return errs.Wrap(errs.Unavailable, err, "put the restored store in place")
	}
	return nil
}

// copyFile copies from into a new file to, synced to disk.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return errs.Wrap(errs.NotFound, err, "open the backup %s", from)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return errs.E(errs.Conflict, "%s exists: another restore may be running", to)
	}
	if err != nil {
		return errs.Wrap(errs.Unavailable, err, "create %s", to)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return errs.Wrap(errs.Unavailable, err, "copy the backup")
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return errs.Wrap(errs.Unavailable, err, "write the backup")
	}
	return out.Close()
}
