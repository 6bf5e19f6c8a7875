// Package frontend embeds the built web UI (frontend/dist) into the binary:
// the app (index.html) and the API reference (docs.html). Before the UI is
// built, dist holds only a placeholder, and Assets serves pages that say how
// to build it — so `go build` and `go test ./...` work on a machine with Go
// alone.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

//go:embed fallback/*.html
var fallback embed.FS

// Assets returns the UI's files, rooted at dist; it always holds index.html
// and docs.html.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err == nil {
		if _, statErr := fs.Stat(sub, "index.html"); statErr == nil {
			return sub
		}
	}
	sub, _ = fs.Sub(fallback, "fallback")
	return sub
}

// Built reports whether a real UI build is embedded.
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}
