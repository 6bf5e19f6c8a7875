// Package sandboxtest is the contract every ports.SandboxBackend keeps,
// as one suite each backend's tests run against the real thing (a Docker
// daemon, an E2B-compatible service): exec exit codes and streams, a
// long-lived shell keeping its state, files round-tripping, a PTY echoing
// and resizing, export, stop then start keeping the tree, reclaim removing
// it.
package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// Harness is what the contract needs of one backend.
type Harness struct {
	// Backend is the backend under test.
	Backend ports.SandboxBackend
	// NewInstance names a fresh project instance on the backend (nothing
	// created yet); the harness reclaims it when the test ends.
	NewInstance func(t *testing.T) ports.ProjectInstance
	// Target is a sandbox Test must pass on.
	Target ports.SandboxTarget
	// Timeout bounds each subtest; 0 means two minutes.
	Timeout time.Duration
}

// Contract runs the suite. Subtests run in parallel, each on its own
// instance.
func Contract(t *testing.T, h Harness) {
	if h.Timeout == 0 {
		h.Timeout = 2 * time.Minute
	}
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance)
	}{
		{"ExecExitCodesAndStreams", execExitCodesAndStreams},
		{"ExecStreamsBeforeExit", execStreamsBeforeExit},
		{"ExecCancelEndsTheCommand", execCancelEndsTheCommand},
		{"LongLivedShellKeepsState", longLivedShellKeepsState},
		{"FilesRoundTrip", filesRoundTrip},
		{"PTYEchoesAndResizes", ptyEchoesAndResizes},
		{"ExportIsATarOfTheTree", exportIsATarOfTheTree},
		{"StopThenEnsureKeepsFiles", stopThenEnsureKeepsFiles},
		{"DestroyReclaims", destroyReclaims},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
			defer cancel()
			in := h.NewInstance(t)
			if err := h.Backend.Ensure(ctx, in); err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			c.fn(t, ctx, h, in)
		})
	}
	t.Run("TestRunsEchoOK", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), h.Timeout)
		defer cancel()
		ok, out, err := h.Backend.Test(ctx, h.Target)
		if err != nil || !ok || strings.TrimSpace(out) != "ok" {
			t.Fatalf("Test = %v, %q, %v; want true, ok", ok, out, err)
		}
	})
}

// run executes a shell script and returns its code, stdout and stderr.
func run(t *testing.T, ctx context.Context, b ports.SandboxBackend, in ports.ProjectInstance, req ports.ExecRequest) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	req.Stdout, req.Stderr = &out, &errOut
	code, err := b.Exec(ctx, in, req)
	if err != nil {
		t.Fatalf("Exec %q: %v", req.Cmd, err)
	}
	return code, out.String(), errOut.String()
}

func sh(script string) []string { return []string{"sh", "-c", script} }

func execExitCodesAndStreams(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	code, out, errOut := run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: sh(`echo out; echo err >&2; exit 3`)})
	if code != 3 || out != "out\n" || errOut != "err\n" {
		t.Errorf("exit 3 = %d, %q, %q", code, out, errOut)
	}
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: []string{"pwd"}})
	if code != 0 || strings.TrimSpace(out) != "/workspace" {
		t.Errorf("the default working directory = %d, %q; want /workspace", code, out)
	}
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: sh(`mkdir -p sub && cd sub && pwd`)})
	if code != 0 || strings.TrimSpace(out) != "/workspace/sub" {
		t.Fatalf("mkdir sub = %d, %q", code, out)
	}
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: []string{"pwd"}, WorkDir: "/workspace/sub"})
	if code != 0 || strings.TrimSpace(out) != "/workspace/sub" {
		t.Errorf("WorkDir = %d, %q", code, out)
	}
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: sh(`printf %s "$CONTRACT_VAR"`), Env: map[string]string{"CONTRACT_VAR": "a b"}})
	if code != 0 || out != "a b" {
		t.Errorf("Env = %d, %q", code, out)
	}
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: []string{"cat"}, Stdin: strings.NewReader("from stdin")})
	if code != 0 || out != "from stdin" {
		t.Errorf("Stdin = %d, %q", code, out)
	}
	big := 1 << 20
	code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: sh(`head -c 1048576 /dev/zero | tr '\0' x`)})
	if code != 0 || len(out) != big {
		t.Errorf("1 MiB of output: exit %d, %d bytes", code, len(out))
	}
}

// notifyWriter signals the first write.
type notifyWriter struct {
	first chan struct{}
	buf   bytes.Buffer
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	if w.buf.Len() == 0 && len(p) > 0 {
		close(w.first)
	}
	return w.buf.Write(p)
}

func execStreamsBeforeExit(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	w := &notifyWriter{first: make(chan struct{})}
	stdin, feed := io.Pipe()
	done := make(chan error, 1)
	go func() {
		// The command prints, then waits on stdin: its first line must
		// arrive while it still runs.
		_, err := h.Backend.Exec(ctx, in, ports.ExecRequest{Cmd: sh(`echo early; read line; echo "$line"`), Stdin: stdin, Stdout: w, Stderr: io.Discard})
		done <- err
	}()
	select {
	case <-w.first:
	case err := <-done:
		t.Fatalf("the command ended before its output was seen: %v", err)
	case <-ctx.Done():
		t.Fatal("no output streamed while the command ran")
	}
	_, _ = io.WriteString(feed, "late\n")
	_ = feed.Close()
	if err := <-done; err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if got := w.buf.String(); got != "early\nlate\n" {
		t.Errorf("output = %q", got)
	}
}

func execCancelEndsTheCommand(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	cctx, cancel := context.WithCancel(ctx)
	started := &notifyWriter{first: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := h.Backend.Exec(cctx, in, ports.ExecRequest{Cmd: sh(`echo started; touch /tmp/contract-sleeping; sleep 300; touch /tmp/contract-woke`), Stdout: started, Stderr: io.Discard})
		done <- err
	}()
	select {
	case <-started.first:
	case <-ctx.Done():
		t.Fatal("the command never started")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a cancelled Exec returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled Exec did not return")
	}
	// The sleep goes: nothing of the command is left running. A backend
	// may return before the kill it sent has landed; it lands at once.
	var code int
	var out string
	for deadline := time.Now().Add(5 * time.Second); ; {
		code, out, _ = run(t, ctx, h.Backend, in, ports.ExecRequest{Cmd: sh(`for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '[s]leep 300' || true`)})
		if (code == 0 && strings.TrimSpace(out) == "0") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code != 0 || strings.TrimSpace(out) != "0" {
		t.Errorf("after the cancel, sleeps still running: %q (exit %d)", out, code)
	}
}

func longLivedShellKeepsState(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	stdin, feed := io.Pipe()
	out := &lineWriter{lines: make(chan string, 16)}
	done := make(chan error, 1)
	go func() {
		_, err := h.Backend.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"sh"}, Stdin: stdin, Stdout: out, Stderr: io.Discard})
		done <- err
	}()
	say := func(cmd, want string) {
		t.Helper()
		if _, err := io.WriteString(feed, cmd+"\n"); err != nil {
			t.Fatalf("write %q: %v", cmd, err)
		}
		select {
		case got := <-out.lines:
			if got != want {
				t.Errorf("%q printed %q, want %q", cmd, got, want)
			}
		case <-ctx.Done():
			t.Fatalf("%q printed nothing", cmd)
		}
	}
	say("mkdir -p /workspace/kept && cd /workspace/kept && pwd", "/workspace/kept")
	say("export KEPT=yes; echo $KEPT", "yes")
	say("pwd; echo", "/workspace/kept")
	<-out.lines // the empty line of `echo`
	say("echo $KEPT", "yes")
	_ = feed.Close()
	if err := <-done; err != nil {
		t.Errorf("the shell ended with %v", err)
	}
}

// lineWriter sends each complete line.
type lineWriter struct {
	lines   chan string
	partial string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.partial += string(p)
	for {
		i := strings.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- w.partial[:i]
		w.partial = w.partial[i+1:]
	}
}

func filesRoundTrip(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	b := h.Backend
	content := []byte("line one\nwith 'quotes' and $dollars\n\x00binary\n")
	if err := b.WriteFile(ctx, in, "/workspace/deep/er/file name.txt", content); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	got, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 1<<20)
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("ReadFile = %q, %v; want %q", got, err, content)
	}
	if err := b.WriteFile(ctx, in, "/workspace/empty", nil); err != nil {
		t.Fatalf("WriteFile empty: %v", err)
	}
	if got, err := b.ReadFile(ctx, in, "/workspace/empty", 10); err != nil || len(got) != 0 {
		t.Errorf("ReadFile empty = %q, %v", got, err)
	}
	var big *ports.FileTooLargeError
	if _, err := b.ReadFile(ctx, in, "/workspace/deep/er/file name.txt", 5); !errors.As(err, &big) || big.Size != int64(len(content)) {
		t.Errorf("ReadFile over the limit = %v, want FileTooLargeError of %d bytes", err, len(content))
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/missing", 10); !errs.Is(err, errs.NotFound) {
		t.Errorf("ReadFile of a missing file = %v, want not_found", err)
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/deep", 10); !errs.Is(err, errs.Validation) {
		t.Errorf("ReadFile of a directory = %v, want validation", err)
	}
	list, err := b.ListFiles(ctx, in, "/workspace", 3)
	if err != nil {
		t.Fatalf("ListFiles: %v", err)
	}
	want := map[string]bool{"deep/": true, "deep/er/": true, "deep/er/file name.txt": true, "empty": true}
	for _, e := range list {
		delete(want, e)
	}
	if len(want) > 0 {
		t.Errorf("ListFiles = %q, missing %v", list, want)
	}
	if shallow, err := b.ListFiles(ctx, in, "/workspace", 1); err != nil || contains(shallow, "deep/er/") {
		t.Errorf("ListFiles depth 1 = %q, %v; want no deeper entries", shallow, err)
	}
	if _, err := b.ListFiles(ctx, in, "/workspace/empty", 1); !errs.Is(err, errs.NotFound) {
		t.Errorf("ListFiles of a file = %v, want not_found", err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/empty"); err != nil {
		t.Fatalf("RemoveFile: %v", err)
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/empty", 10); !errs.Is(err, errs.NotFound) {
		t.Errorf("a removed file reads %v, want not_found", err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/empty"); !errs.Is(err, errs.NotFound) {
		t.Errorf("removing it again = %v, want not_found", err)
	}
	if err := b.RemoveFile(ctx, in, "/workspace/deep"); !errs.Is(err, errs.Validation) {
		t.Errorf("RemoveFile of a directory = %v, want validation", err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func ptyEchoesAndResizes(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	pty, err := h.Backend.OpenPTY(ctx, in, 80, 24)
	if err != nil {
		t.Fatalf("OpenPTY: %v", err)
	}
	defer pty.Close()
	seen := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		var all string
		for {
			n, err := pty.Read(buf)
			all += string(buf[:n])
			seen <- all
			if err != nil {
				close(seen)
				return
			}
		}
	}()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		last := ""
		for {
			select {
			case all, ok := <-seen:
				if strings.Contains(all, want) {
					return
				}
				if !ok {
					t.Fatalf("the PTY closed before %q; it printed %q", want, all)
				}
				last = all
			case <-deadline:
				t.Fatalf("no %q from the PTY; it printed %q", want, last)
			}
		}
	}
	if _, err := io.WriteString(pty, "echo pty-$((40+2))\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	waitFor("pty-42")
	if err := pty.Resize(101, 33); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	if _, err := io.WriteString(pty, "stty size\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	waitFor("33 101")
	if _, err := io.WriteString(pty, "exit 7\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	if code, err := pty.Wait(); err != nil || code != 7 {
		t.Errorf("Wait = %d, %v; want 7", code, err)
	}
}

func exportIsATarOfTheTree(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	if err := h.Backend.WriteFile(ctx, in, "/workspace/dir/exported.txt", []byte("in the tar")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	var buf bytes.Buffer
	if err := h.Backend.Export(ctx, in, &buf); err != nil {
		t.Fatalf("Export: %v", err)
	}
	tr := tar.NewReader(&buf)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("the export has no dir/exported.txt (%v)", err)
		}
		if strings.TrimPrefix(hdr.Name, "./") == "dir/exported.txt" {
			body, _ := io.ReadAll(tr)
			if string(body) != "in the tar" {
				t.Errorf("exported content = %q", body)
			}
			return
		}
	}
}

func stopThenEnsureKeepsFiles(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	b := h.Backend
	if st, err := b.State(ctx, in); err != nil || st != ports.SandboxRunning {
		t.Fatalf("State after Ensure = %q, %v", st, err)
	}
	if err := b.WriteFile(ctx, in, "/workspace/kept.txt", []byte("kept")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if running, err := b.Running(ctx, in.Target); err != nil || !contains(running, in.ProjectID) {
		t.Errorf("Running = %q, %v; want it to include %s", running, err, in.ProjectID)
	}
	if err := b.Stop(ctx, in); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if running, err := b.Running(ctx, in.Target); err != nil || contains(running, in.ProjectID) {
		t.Errorf("Running after Stop = %q, %v; want it without %s", running, err, in.ProjectID)
	}
	if st, err := b.State(ctx, in); err != nil || st != ports.SandboxStopped {
		t.Fatalf("State after Stop = %q, %v", st, err)
	}
	if err := b.Stop(ctx, in); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	if err := b.Ensure(ctx, in); err != nil {
		t.Fatalf("Ensure after Stop: %v", err)
	}
	if got, err := b.ReadFile(ctx, in, "/workspace/kept.txt", 100); err != nil || string(got) != "kept" {
		t.Errorf("after stop and start the file reads %q, %v", got, err)
	}
	if b.Supports().Rebuild {
		if err := b.Rebuild(ctx, in); err != nil {
			t.Fatalf("Rebuild: %v", err)
		}
		if got, err := b.ReadFile(ctx, in, "/workspace/kept.txt", 100); err != nil || string(got) != "kept" {
			t.Errorf("after a rebuild the file reads %q, %v", got, err)
		}
	}
}

func destroyReclaims(t *testing.T, ctx context.Context, h Harness, in ports.ProjectInstance) {
	b := h.Backend
	if err := b.WriteFile(ctx, in, "/workspace/gone.txt", []byte("gone")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if err := b.Destroy(ctx, in); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if st, err := b.State(ctx, in); err != nil || st != ports.SandboxAbsent {
		t.Errorf("State after Destroy = %q, %v; want absent", st, err)
	}
	if err := b.Destroy(ctx, in); err != nil {
		t.Errorf("a second Destroy: %v", err)
	}
	if err := b.Ensure(ctx, in); err != nil {
		t.Fatalf("Ensure after Destroy: %v", err)
	}
	if _, err := b.ReadFile(ctx, in, "/workspace/gone.txt", 100); !errs.Is(err, errs.NotFound) {
		t.Errorf("a reclaimed tree still has its file: %v", err)
	}
}
