package workbench

import (
	"context"
	"net/http"
	"strings"

	"github.com/agents-server/agents-server/adapters/httpapi"
	"github.com/agents-server/agents-server/adapters/mcpserver"
	"github.com/agents-server/agents-server/core/auth"
	"github.com/agents-server/agents-server/core/errs"
)

// Identity is who the host program's sign-in says a request comes from.
type Identity struct {
	// Username names the workbench account; the first request of a new one
	// creates it, with a password nobody knows (it signs in through the
	// host only).
	Username string
	// Admin makes a new account an admin. An existing account keeps its
	// role: from then on, roles are managed in the workbench.
	Admin bool
}

// MountOptions says how Handler serves the workbench.
type MountOptions struct {
	// Prefix is the path the workbench is served under, e.g. "/agents";
	// "" serves it at the root. The UI, the API (Prefix+"/api/v1"), the
	// sockets and the MCP endpoint all live under it.
	Prefix string
	// SignIn, when set, signs requests in through the host's own
	// authentication (its cookie, its session): it returns who the request
	// comes from, or an error to refuse it — every call that needs a caller
	// then answers 401 with the error's text, while public routes (the
	// UI's files, webhook deliveries, health) still answer. A request
	// carrying a workbench bearer token is signed in by the token instead,
	// so scripts and personal access tokens keep working; a state-changing
	// request the host signed in must come from the same origin (cross-site
	// requests are refused with 403, as the host's cookie would ride them).
	SignIn func(r *http.Request) (Identity, error)
}

// Handler serves the whole workbench: the REST API, the event and
// terminal sockets, the MCP endpoint and the web UI, under o.Prefix. A
// request outside the prefix is answered 404; the bare prefix redirects to
// the prefix with a slash.
func (w *Workbench) Handler(o MountOptions) http.Handler {
	prefix := "/" + strings.Trim(o.Prefix, "/")
	if prefix == "/" {
		prefix = ""
	}
	mux := http.NewServeMux()
	mux.Handle("/ws", w.bus)
	mux.Handle("/ws/terminal", w.terminal)
	mux.Handle(mcpserver.Path, w.mcpServer)
	mux.Handle("/", w.api.Handler())
	inner := w.api.BoundBodyReads(mux)
	sameOrigin := http.NewCrossOriginProtection()
	mount := httpapi.Mount{Prefix: prefix, Host: o.SignIn != nil}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, prefix)
		switch {
		case prefix != "" && rest == "":
			target := prefix + "/"
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			http.Redirect(rw, r, target, http.StatusMovedPermanently)
			return
		case !ok || !strings.HasPrefix(rest, "/"):
			httpapi.WriteError(rw, errs.E(errs.NotFound, "no such path: the workbench is served under %s/", prefix))
			return
		}
		ctx := httpapi.WithMount(r.Context(), mount)
		if o.SignIn != nil && r.Header.Get("Authorization") == "" {
			var err error
			if ctx, err = w.hostSignIn(ctx, o.SignIn, r, sameOrigin); err != nil {
				httpapi.WriteError(rw, err)
				return
			}
		}
		r2 := r.Clone(ctx)
		r2.URL.Path = rest
		if r.URL.RawPath != "" {
			r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, prefix)
		}
		inner.ServeHTTP(rw, r2)
	})
}

// hostSignIn asks the host who r comes from. Signed in, the request
// carries its principal (and must be same-origin if it changes anything:
// the host's cookie rides cross-site requests too). Refused, it carries the
// reason, so the routes that need a caller answer 401 with it while public
// ones — the UI's files, webhooks, health — still answer.
func (w *Workbench) hostSignIn(ctx context.Context, signIn func(*http.Request) (Identity, error), r *http.Request,
	sameOrigin *http.CrossOriginProtection) (context.Context, error) {
	id, err := signIn(r)
	if err != nil {
		return auth.WithHostRefusal(ctx, err.Error()), nil
	}
	if err := sameOrigin.Check(r); err != nil {
		return ctx, errs.E(errs.Forbidden, "a cross-origin request cannot use the host's sign-in")
	}
	p, err := w.auth.HostPrincipal(ctx, auth.HostIdentity{Username: id.Username, Admin: id.Admin})
	if err != nil {
		return ctx, err
	}
	return auth.WithHostPrincipal(ctx, p), nil
}
