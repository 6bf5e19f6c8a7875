package agentsserver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnEmbeddersModuleGraphLeavesTheToolsOut: a fresh module importing
// the workbench package sees the workbench's requirements, not the
// development commands' (go-task and its tree live in tools/go.mod, which
// only this repository's go.work joins). Offline: everything it needs is
// in the module cache once this module builds.
func TestAnEmbeddersModuleGraphLeavesTheToolsOut(t *testing.T) {
	touchSources(t)
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/embedder\n\ngo 1.26\n\nrequire "+module+" v0.0.0\n\nreplace "+module+" => "+root+"\n")
	write("main.go", "package main\n\nimport _ \""+module+"/workbench\"\n\nfunc main() {}\n")
	goCmd := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	all := strings.Fields(goCmd("list", "-m", "-f", "{{.Path}}", "all"))
	for _, m := range all {
		for _, tool := range []string{"github.com/go-task/", "honnef.co/go/tools", "github.com/oapi-codegen/oapi-codegen", "charm.land/",
			"github.com/bufbuild/protocompile", "github.com/creack/pty"} {
			if strings.HasPrefix(m, tool) {
				t.Errorf("an embedder's module graph holds %s (a development tool's)", m)
			}
		}
	}
	t.Logf("an embedder's module graph: %d modules", len(all))
}
