package main

import (
	"strings"
	"testing"
)

// The API reference is public at /docs: the rendered page when the UI is
// built, else the page saying how to build it — HTML either way.
func TestDocsPageIsPublic(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	r := h.call("GET", "/docs", "", nil).want(t, 200)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "API reference") {
		t.Fatalf("GET /docs: %s %.300s", r.Header.Get("Content-Type"), r.Body)
	}
}
