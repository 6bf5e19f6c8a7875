// Package migrations holds the goose SQL migrations of the SQLite store,
// embedded so the binary migrates its own database at open. It is a leaf.
package migrations

import "embed"

// FS holds every *.sql migration, named NNNNN_what.sql.
//
//go:embed *.sql
var FS embed.FS
