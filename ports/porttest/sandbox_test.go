package porttest_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/agents-server/agents-server/core/domain"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
	"github.com/agents-server/agents-server/ports/porttest"
)

func fakeInstance(project string, gen int64) ports.ProjectInstance {
	return ports.ProjectInstance{ProjectID: project, Name: "agents-" + project, StorageName: "agents-proj-" + project,
		Generation: gen, Target: ports.SandboxTarget{SandboxID: "sb", Type: domain.SandboxDocker, Config: &domain.DockerConfig{Image: "img"}}}
}

// The file and lifecycle promises of ports/sandboxtest a fake can keep
// (it runs no commands, so the exec and PTY parts are not claimed).
func TestSandboxFilesAndLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := &porttest.Sandbox{Caps: domain.SandboxSupports{Rebuild: true}}
	in := fakeInstance("p1", 1)
	if _, err := b.ReadFile(ctx, in, "/workspace/x", 10); !errs.Is(err, errs.NotFound) {
		t.Errorf("a file of an absent instance: %v, want not_found", err)
	}
	if err := b.Ensure(ctx, in); err != nil {
		t.Fatal(err)
	}
	content := []byte("line one\n\x00binary\n")
	if err := b.WriteFile(ctx, in, "/workspace/deep/er/file name.txt", content); err != nil {
		t.Fatal(err)
	}
	_ = b.WriteFile(ctx, in, "empty", nil)
	if got, err := b.ReadFile(ctx, in, "deep/er/file name.txt", 1<<20); err != nil || !bytes.Equal(got, content) {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	var big *ports.FileTooLargeError
	if _, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 5); !errors.As(err, &big) || big.Size != int64(len(content)) {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/deep", 10); !errs.Is(err, errs.Validation) {
		t.Errorf("a directory: %v, want validation", err)
	}
	if list, _ := b.ListFiles(ctx, in, "/workspace", 3); !slices.Equal(list, []string{"deep/", "deep/er/", "deep/er/file name.txt", "empty"}) {
		t.Errorf("ListFiles = %q", list)
	}
	if list, _ := b.ListFiles(ctx, in, "/workspace", 1); !slices.Equal(list, []string{"deep/", "empty"}) {
		t.Errorf("ListFiles depth 1 = %q", list)
	}
	if _, err := b.ListFiles(ctx, in, "/workspace/empty", 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("ListFiles of a file: %v", err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/deep"); !errs.Is(err, errs.Validation) {
		t.Errorf("RemoveFile of a directory: %v", err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/empty"); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/empty"); !errs.Is(err, errs.NotFound) {
		t.Errorf("removing twice: %v", err)
	}

	var buf bytes.Buffer
	if err := b.Export(ctx, in, &buf); err != nil {
		t.Fatal(err)
	}
	hdr, err := tar.NewReader(&buf).Next()
	if err != nil || hdr.Name != "deep/er/file name.txt" {
		t.Errorf("export's first entry = %v, %v", hdr, err)
	}

	if err := b.Stop(ctx, in); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.State(ctx, in); st != ports.SandboxStopped {
		t.Errorf("state after Stop = %s", st)
	}
	if running, _ := b.Running(ctx, in.Target); len(running) != 0 {
		t.Errorf("Running after Stop = %q", running)
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 100); !errs.Is(err, errs.Conflict) {
		t.Errorf("a file of a stopped instance: %v, want conflict", err)
	}
	next := fakeInstance("p1", 2)
	if err := b.Ensure(ctx, next); err != nil {
		t.Fatal(err)
	}
	if b.Replaced(in.Name) != 1 {
		t.Errorf("a new generation replaced the instance %d times, want 1", b.Replaced(in.Name))
	}
	if got, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 100); err != nil || !bytes.Equal(got, content) {
		t.Errorf("after stop, replace and start: %q, %v", got, err)
	}

	// The container admin sees it; removing the container keeps the tree.
	cs, _ := b.Containers(ctx, in.Target)
	if len(cs) != 1 || cs[0].Name != in.Name || cs[0].Image != "img" || cs[0].State != "running" {
		t.Errorf("Containers = %+v", cs)
	}
	if err := b.StopContainer(ctx, in.Target, "someone-else"); !errs.Is(err, errs.NotFound) {
		t.Errorf("stopping a foreign name: %v", err)
	}
	if err := b.RemoveContainer(ctx, in.Target, in.Name); err != nil {
		t.Fatal(err)
	}
	_ = b.Ensure(ctx, in)
	if _, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 100); err != nil {
		t.Errorf("the tree did not survive the container: %v", err)
	}
	if err := b.Destroy(ctx, in); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.State(ctx, in); st != ports.SandboxAbsent {
		t.Errorf("state after Destroy = %s", st)
	}
	if err := b.Destroy(ctx, in); err != nil {
		t.Errorf("a second Destroy: %v", err)
	}
	_ = b.Ensure(ctx, in)
	if _, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 100); !errs.Is(err, errs.NotFound) {
		t.Errorf("a reclaimed tree kept its file: %v", err)
	}
	if n := len(b.Calls("Ensure")); n != 4 {
		t.Errorf("%d Ensure calls logged, want 4", n)
	}
}

func TestSandboxHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := &porttest.Sandbox{}
	in := fakeInstance("p1", 1)
	_ = b.Ensure(ctx, in)
	if _, err := b.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"true"}}); !errs.Is(err, errs.Internal) {
		t.Errorf("Exec without Commands: %v, want internal", err)
	}
	if _, err := b.OpenPTY(ctx, in, 80, 24); !errs.Is(err, errs.Internal) {
		t.Errorf("OpenPTY without Shells: %v, want internal", err)
	}
	if err := b.Rebuild(ctx, in); !errs.Is(err, errs.Validation) {
		t.Errorf("Rebuild without the capability: %v, want validation", err)
	}
	b.Commands = func(_ context.Context, _ ports.ProjectInstance, req ports.ExecRequest) (int, error) {
		_, _ = io.WriteString(req.Stdout, req.Cmd[0])
		return 3, nil
	}
	var out bytes.Buffer
	if code, err := b.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"hello"}, Stdout: &out}); code != 3 || err != nil || out.String() != "hello" {
		t.Errorf("scripted Exec = %d, %v, %q", code, err, out.String())
	}
	boom := errs.E(errs.Upstream, "daemon down")
	b.Fail = func(op string, _ ports.ProjectInstance) error {
		if op == "Stop" {
			return boom
		}
		return nil
	}
	if err := b.Stop(ctx, in); !errors.Is(err, boom) {
		t.Errorf("injected failure: %v", err)
	}
	if ok, out, err := b.Test(ctx, in.Target); !ok || out != "ok" || err != nil {
		t.Errorf("Test = %v, %q, %v", ok, out, err)
	}
}
