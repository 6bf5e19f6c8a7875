// Package migrations holds the goose SQL migrations of the store, one
// folder per dialect, embedded so the binary migrates its own database at
// open. It is a leaf.
//
// The dialects number their migrations apart: SQLite's history starts at
// the first release, Postgres's at a baseline equal to SQLite's schema of
// the day Postgres arrived. A schema change lands in both folders.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// SQLite holds the SQLite migrations, named NNNNN_what.sql.
var SQLite = sub("sqlite")

// Postgres holds the Postgres migrations, named NNNNN_what.sql.
var Postgres = sub("postgres")

func sub(dir string) fs.FS {
	f, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // the folder is embedded above: a build can't lack it
	}
	return f
}
