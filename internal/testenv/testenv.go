// Package testenv decides what a test suite does when a real peer it needs
// (a Docker daemon, a browser) is missing: under AGENTS_CI=1 the suite is
// required and fails; elsewhere it skips, saying why — and notes the skip
// in the file AGENTS_SKIP_LOG names, so `go tool task test` can end with
// one line per skipped suite and the command that enables it, and a skip
// never reads as a pass.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Require fails (AGENTS_CI=1) or skips t because suite cannot run: reason
// says why, enable is the one command that makes it run.
func Require(t testing.TB, suite, reason, enable string) {
	t.Helper()
	if os.Getenv("AGENTS_CI") == "1" {
		t.Fatalf("the %s is required (AGENTS_CI=1): %s", suite, reason)
	}
	noteSkip(suite, enable)
	t.Skipf("skipping the %s: %s (enable it: %s)", suite, reason, enable)
}

// noteSkip appends "suite — enable" to AGENTS_SKIP_LOG when it is set;
// the summary deduplicates, so every skipping test may note it.
func noteSkip(suite, enable string) {
	path := os.Getenv("AGENTS_SKIP_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return // the summary is a courtesy; the skip itself is still printed
	}
	defer f.Close()
	fmt.Fprintf(f, "%s — enable it with: %s\n", suite, enable)
}
