package httpapi

import (
	"context"
	"html"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

// Mount is where a request reached the workbench: under the prefix a host
// program mounted it at ("" at the root), and whether the host signed the
// request in. The pages the UI is served from carry both, so the app
// reaches the API, the sockets and its own assets under the prefix.
type Mount struct {
	Prefix string // "" or "/agents": a leading slash, no trailing one
	Host   bool   // the host's sign-in, not a bearer token, admits its requests
}

type mountKey struct{}

// WithMount records the mount a request came through.
func WithMount(ctx context.Context, m Mount) context.Context {
	return context.WithValue(ctx, mountKey{}, m)
}

// MountOf returns the mount a request came through (the root when none).
func MountOf(ctx context.Context) Mount {
	m, _ := ctx.Value(mountKey{}).(Mount)
	return m
}

// servePage answers an HTML page of the UI with the mount written into its
// head: a <base> the page's relative asset URLs resolve against, and meta
// tags the app reads (agents-base, agents-auth).
func servePage(w http.ResponseWriter, r *http.Request, ui fs.FS, name string) {
	body, err := fs.ReadFile(ui, name)
	if err != nil {
		http.Error(w, "the UI is missing "+name, http.StatusInternalServerError)
		return
	}
	m := MountOf(r.Context())
	var head strings.Builder
	head.WriteString(`<head><base href="` + html.EscapeString(m.Prefix) + `/">`)
	head.WriteString(`<meta name="agents-base" content="` + html.EscapeString(m.Prefix) + `">`)
	if m.Host {
		head.WriteString(`<meta name="agents-auth" content="host">`)
	}
	page := strings.Replace(string(body), "<head>", head.String(), 1)
	http.ServeContent(w, r, name, time.Time{}, strings.NewReader(page))
}
