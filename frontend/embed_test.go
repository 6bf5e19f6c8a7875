package frontend

import (
	"io/fs"
	"strings"
	"testing"
)

// TestAssetsAlwaysHoldTheAppAndTheReference: built or not, the binary
// serves index.html and docs.html.
func TestAssetsAlwaysHoldTheAppAndTheReference(t *testing.T) {
	for _, name := range []string{"index.html", "docs.html"} {
		if _, err := fs.Stat(Assets(), name); err != nil {
			t.Errorf("Assets() lacks %s (built: %v): %v", name, Built(), err)
		}
	}
}

// TestFallbackReferenceSaysHowToBuildIt: without a UI build /docs answers a
// page that says how to get the reference and where the document is.
func TestFallbackReferenceSaysHowToBuildIt(t *testing.T) {
	page, err := fs.ReadFile(fallback, "fallback/docs.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go tool task build", "npm run build", "/api/v1/openapi.yaml"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the fallback reference page does not mention %q", want)
		}
	}
}
