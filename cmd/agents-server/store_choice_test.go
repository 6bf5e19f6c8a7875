package main

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/agents-server/agents-server/adapters/sqlstore/pgtest"
)

// The API suite runs on SQLite, or, when AGENTS_TEST_STORE=postgres, on a
// database of its own per server on the test Postgres cluster: the same
// tests, unchanged, on either engine.

// suiteOnPostgres names the suite in a skip or a CI failure.
const suiteOnPostgres = "API suite on Postgres"

// dirDatabases maps a data dir to the Postgres database standing for it, so
// a restart on the same dir finds the same data.
var dirDatabases sync.Map

// databaseFor returns the Postgres URL standing for dataDir (the run's
// choice, or a replica test's), or "" on SQLite.
func databaseFor(t testing.TB, dataDir string) string {
	t.Helper()
	if u, ok := dirDatabases.Load(dataDir); ok {
		return u.(string)
	}
	if !pgtest.OnPostgres() {
		return ""
	}
	u := pgtest.URL(t, suiteOnPostgres)
	dirDatabases.Store(dataDir, u)
	return u
}

// storeArgs are the flags that put a binary's store in dataDir, or in the
// database standing for it.
func storeArgs(t testing.TB, dataDir string) []string {
	t.Helper()
	args := []string{"--data-dir", dataDir}
	if u := databaseFor(t, dataDir); u != "" {
		args = append(args, "--database-url", u)
	}
	return args
}

// tablesContain lists the tables of the Postgres database standing for
// dataDir whose rows, as text, hold needle; none on SQLite (its file is
// in dataDir, where filesContain looks).
func tablesContain(t *testing.T, dataDir, needle string) []string {
	t.Helper()
	u, ok := dirDatabases.Load(dataDir)
	if !ok {
		return nil
	}
	db, err := sql.Open("pgx", u.(string))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) == 0 {
		t.Fatal("the test database has no tables")
	}
	var hits []string
	for _, table := range tables {
		var n int
		// Every row as text, columns and all: a plaintext secret shows.
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` r WHERE strpos(r::text, $1) > 0`, needle).Scan(&n)
		if err != nil {
			t.Fatalf("search %s: %v", table, err)
		}
		if n > 0 {
			hits = append(hits, "table "+table)
		}
	}
	return hits
}
