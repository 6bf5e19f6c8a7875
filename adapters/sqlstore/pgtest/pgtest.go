// Package pgtest gives a test a Postgres database of its own on the private
// test cluster (scripts/postgres/up.sh, whose URL AGENTS_TEST_POSTGRES
// carries): created empty for the test and dropped when it ends, so tests
// run in parallel on one cluster without seeing each other's rows.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/agents-server/agents-server/internal/testenv"
)

// Env names the variable holding the test cluster's URL.
const Env = "AGENTS_TEST_POSTGRES"

// Enable is the command that starts the test cluster and sets Env.
const Enable = `export "$(scripts/postgres/up.sh | tail -1)"`

// Available returns the test cluster's URL, or "" when Env is unset.
func Available() string { return os.Getenv(Env) }

// URL returns the URL of a new, empty database on the test cluster, dropped
// (with its connections) when t ends. Without a cluster the suite skips,
// or fails under AGENTS_CI=1.
func URL(t testing.TB, suite string) string {
	t.Helper()
	admin := Available()
	if admin == "" {
		testenv.Require(t, suite, Env+" is not set (no test Postgres cluster)", Enable)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		t.Fatalf("create a test database on %s: %v", u.Redacted(), err)
	}
	t.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop the test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// StoreEnv names the variable choosing the engine of the suites that run
// on either (the store's contract tests, the API suite): "postgres" runs
// them on the test cluster, anything else on SQLite (the default).
const StoreEnv = "AGENTS_TEST_STORE"

// OnPostgres reports whether StoreEnv chooses Postgres.
func OnPostgres() bool { return os.Getenv(StoreEnv) == "postgres" }
