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
// and docs.html: a page dist lacks (nothing built yet, or a build from
// before the page existed) is served from the fallback pages, which say how
// to build it.
func Assets() fs.FS {
	base, _ := fs.Sub(fallback, "fallback")
	top, err := fs.Sub(dist, "dist")
	if err != nil {
		return base
	}
	return layered{top: top, base: base}
}

// layered serves a file from top, else from base.
type layered struct{ top, base fs.FS }

func (l layered) Open(name string) (fs.File, error) {
	if f, err := l.top.Open(name); err == nil {
		return f, nil
	}
	return l.base.Open(name)
}

// Built reports whether a real UI build is embedded.
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}
