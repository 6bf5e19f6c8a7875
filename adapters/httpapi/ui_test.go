package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func uiServer(t *testing.T, ui fstest.MapFS) *Server {
	t.Helper()
	s, err := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), UI: ui}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func get(t *testing.T, s *Server, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// TestDocsServesTheReferencePage: /docs is the frontend's docs.html, public,
// under a policy that lets the renderer's <style> elements in and nothing
// else the UI's policy keeps out.
func TestDocsServesTheReferencePage(t *testing.T) {
	s := uiServer(t, fstest.MapFS{"index.html": {Data: []byte("the app")}, "docs.html": {Data: []byte("the reference")}})
	w := get(t, s, DocsPath)
	if w.Code != http.StatusOK || w.Body.String() != "the reference" {
		t.Fatalf("GET /docs: %d %q", w.Code, w.Body)
	}
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "style-src 'self' 'unsafe-inline'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the /docs policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || strings.Count(csp, "unsafe-") != 1 {
		t.Errorf("the /docs policy relaxes more than inline styles: %q", csp)
	}
	// Everything else keeps the strict policy, and the app's routes stay
	// the app.
	app := get(t, s, "/docs/elsewhere")
	if app.Body.String() != "the app" || app.Header().Get("Content-Security-Policy") != contentSecurityPolicy {
		t.Fatalf("GET /docs/elsewhere: %q with policy %q", app.Body, app.Header().Get("Content-Security-Policy"))
	}
}

// TestDocsWithoutThePageIsNotFound: a UI build that predates the reference
// answers 404, not the app's index.html under the reference's address.
func TestDocsWithoutThePageIsNotFound(t *testing.T) {
	s := uiServer(t, fstest.MapFS{"index.html": {Data: []byte("the app")}})
	if w := get(t, s, DocsPath); w.Code != http.StatusNotFound {
		t.Fatalf("GET /docs: %d %q", w.Code, w.Body)
	}
}
