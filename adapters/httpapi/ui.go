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
	http.ServeFileFS(c.Response(), c.Request(), s.deps.UI, name)
	return nil
}
