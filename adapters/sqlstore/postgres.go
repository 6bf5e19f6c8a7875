package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/migrations"
)

// writeLockKey is the advisory lock every write transaction takes first on
// Postgres ("agents" in ASCII): writers across every replica commit one at
// a time, as SQLite's one writer does, so a transaction's reads still hold
// when it writes without each query taking its own row locks.
const writeLockKey = 0x6167656e7473

// postgresDialect: $N placeholders, writers serialized by an advisory
// transaction lock, repeatable-read snapshots, migrations one replica at a
// time.
var postgresDialect = &dialect{
	name:       "postgres",
	goose:      goose.DialectPostgres,
	migrations: migrations.Postgres,
	numbered:   true,
	lockWrites: "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(writeLockKey, 10) + ")",
	snapshot:   sql.LevelRepeatableRead,
	wordMatch:  postgresWordMatch,
	goMigrations: func(d *dialect, log *slog.Logger) []*goose.Migration {
		return []*goose.Migration{messageTextsMigration(d, 7, log)}
	},
	migrateLock: func() (goose.ProviderOption, error) {
		l, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		return goose.WithSessionLocker(l), nil
	},
}

// IsPostgresURL reports whether s names a Postgres database
// (postgres:// or postgresql://).
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// OpenPostgres connects to the Postgres database at databaseURL
// (postgres://user:password@host:port/db?sslmode=…), migrates it (one
// replica at a time), and refuses a database written by a newer schema
// than this binary knows. The database must exist; the role needs to
// create tables and the citext extension (trusted: a database owner may).
func OpenPostgres(ctx context.Context, databaseURL string, log *slog.Logger) (*DB, error) {
	where := redactURL(databaseURL)
	conn, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return nil, errs.Wrap(errs.Validation, err, "the database URL %s", where)
	}
	conn.SetMaxOpenConns(16)
	conn.SetMaxIdleConns(16)
	conn.SetConnMaxIdleTime(5 * time.Minute)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, errs.Wrap(errs.Unavailable, err, "connect to %s", where)
	}
	db := &DB{where: where, log: log, dialect: postgresDialect, write: pool{DB: conn}, url: databaseURL}
	if err := db.migrate(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	// One pool serves reads and writes: the server keeps the snapshots,
	// and pgx prepares each statement once per connection by itself.
	db.read = pool{DB: conn, d: postgresDialect}
	db.write = pool{DB: conn, d: postgresDialect}
	return db, nil
}

// redactURL is databaseURL without its password, for messages and logs.
func redactURL(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "(an unparsable database URL)"
	}
	return u.Redacted()
}
