package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionPrintsWhatTheReleaseLinkedIn: a release's link-time version,
// revision and date are what "agents-server version" prints.
func TestVersionPrintsWhatTheReleaseLinkedIn(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go tool on PATH to build the binary with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "agents-server")
	flags := "-X main.buildVersion=v9.8.7 -X main.buildRevision=0123456789abcdef -X main.buildDate=2026-12-03T06:00:00Z"
	if out, err := exec.Command(goTool, "build", "-ldflags", flags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || lines[0] != "agents-server v9.8.7" || lines[1] != "revision 0123456789abcdef" || lines[2] != "built 2026-12-03T06:00:00Z" {
		t.Fatalf("version printed:\n%s", out)
	}
}

// TestHealthAsksTheServer: "agents-server health" exits 0 while the
// server at --addr answers ok (a wildcard address asked on loopback), and
// 1 once nothing listens there.
func TestHealthAsksTheServer(t *testing.T) {
	t.Parallel()
	h := startServer(t, testConfig(t))
	port := h.base[strings.LastIndex(h.base, ":")+1:]
	if code, out, errOut := runCommand("health", "--addr", "0.0.0.0:"+port); code != 0 || !strings.HasPrefix(out, "ok ") {
		t.Fatalf("health of a running server: %d %q %q", code, out, errOut)
	}
	h.stop()
	if code, _, errOut := runCommand("health", "--addr", "127.0.0.1:"+port); code != 1 || errOut == "" {
		t.Fatalf("health with nothing listening: %d %q", code, errOut)
	}
}
