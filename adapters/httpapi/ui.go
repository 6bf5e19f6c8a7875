package httpapi

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// serveUI serves the embedded frontend: a file when the path names one
// (hashed assets cached for a year), else index.html so client-side routes
// survive a reload.
func (s *Server) serveUI(c echo.Context) error {
	name := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
	if name == "" {
		name = "index.html"
	}
	if st, err := fs.Stat(s.deps.UI, name); err != nil || st.IsDir() {
		name = "index.html"
	}
	h := c.Response().Header()
	if strings.HasPrefix(name, "assets/") {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if name == "index.html" {
		servePage(c.Response(), c.Request(), s.deps.UI, name)
		return nil
	}
	http.ServeFileFS(c.Response(), c.Request(), s.deps.UI, name)
	return nil
}

// DocsPath serves the browsable API reference: the frontend's docs.html,
// which renders the served OpenAPI document. Public, like the document.
const DocsPath = "/docs"

// docsContentSecurityPolicy is the UI's policy with one relaxation, on
// /docs alone: inline styles. The reference renderer (Redoc) writes all
// its styling as <style> elements at run time (styled-components), and
// refusing them leaves the page unstyled. Scripts (and so workers) stay
// 'self' only, which is why the reference runs without its blob: search
// worker, and connect-src and img-src keep the page from reaching anywhere
// but this server. The UI itself keeps the strict policy.
const docsContentSecurityPolicy = "default-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// serveDocs answers the API reference page (or, in a build without the UI,
// the page saying how to build it).
func (s *Server) serveDocs(c echo.Context) error {
	if _, err := fs.Stat(s.deps.UI, "docs.html"); err != nil {
		return echo.ErrNotFound
	}
	c.Response().Header().Set("Content-Security-Policy", docsContentSecurityPolicy)
	c.Response().Header().Set("Cache-Control", "no-cache")
	servePage(c.Response(), c.Request(), s.deps.UI, "docs.html")
	return nil
}
