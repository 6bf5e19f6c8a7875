package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agents-server/agents-server/ports"
)

func TestExecStreamsExitCodesAndStdin(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)

	code, out, errOut := run(t, rt, in, ports.ExecRequest{}, "sh", "-c", "echo to-out; echo to-err >&2; exit 3")
	if code != 3 || out != "to-out\n" || errOut != "to-err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3, to-out, to-err", code, out, errOut)
	}
	if code, _, _ := run(t, rt, in, ports.ExecRequest{}, "true"); code != 0 {
		t.Errorf("true: exit %d", code)
	}
	if code, _, _ := run(t, rt, in, ports.ExecRequest{}, "no-such-command"); code != 127 {
		t.Errorf("a missing command: exit %d, want 127", code)
	}
	// argv is passed as is, no shell in between.
	if _, out, _ := run(t, rt, in, ports.ExecRequest{}, "echo", "$HOME", "a  b"); out != "$HOME a  b\n" {
		t.Errorf("echo argv = %q", out)
	}
	input := strings.Repeat("line of input\n", 5000)
	if _, out, _ := run(t, rt, in, ports.ExecRequest{Stdin: strings.NewReader(input)}, "cat"); out != input {
		t.Errorf("cat echoed %d bytes of %d", len(out), len(input))
	}
	if _, out, _ := run(t, rt, in, ports.ExecRequest{}, "pwd"); out != "/workspace\n" {
		t.Errorf("default workdir = %q", out)
	}
	if _, out, _ := run(t, rt, in, ports.ExecRequest{WorkDir: "/tmp"}, "pwd"); out != "/tmp\n" {
		t.Errorf("WorkDir /tmp = %q", out)
	}
	// A stderr line that looks like the wrapper's PID line is not eaten.
	if _, _, errOut := run(t, rt, in, ports.ExecRequest{}, "sh", "-c", "echo 42 >&2"); errOut != "42\n" {
		t.Errorf("stderr = %q, want 42", errOut)
	}
}

func TestExecEnvAndUser(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	in.Env = map[string]string{"PROJECT_VAR": "from project", "SHARED": "project"}
	configOf(in).User = "agent"
	ensure(t, rt, in)

	_, out, _ := run(t, rt, in, ports.ExecRequest{Env: map[string]string{"SHARED": "request", "EXTRA": "x"}},
		"sh", "-c", `echo "$PROJECT_VAR|$SHARED|$EXTRA"; id -u; id -g`)
	if out != "from project|request|x\n1000\n1000\n" {
		t.Errorf("env and ids = %q", out)
	}
	// The new volume was handed to the sandbox user, so it can write its tree.
	if got := sh(t, rt, in, "touch /workspace/mine && stat -c %u /workspace/mine"); got != "1000" {
		t.Errorf("file owner = %q, want 1000", got)
	}
}

func TestExecCancelReturnsPromptlyAndKills(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)

	ctx, cancel := context.WithCancel(testContext(t))
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, err := rt.Exec(ctx, in, ports.ExecRequest{Cmd: []string{"sh", "-c", "sleep 300 & sleep 301; wait"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec after cancel: %v, want context.Canceled", err)
	}
	if waited := time.Since(start); waited > 20*time.Second {
		t.Errorf("cancel took %s", waited)
	}
	// The whole process group goes, the background sleep included.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := sh(t, rt, in, "ps -o args | grep -c '^sleep 30[01]' || true")
		if out == "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s sleeps still running after cancel", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestExportWritesWorkspaceTar(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)
	sh(t, rt, in, "mkdir -p /workspace/dir && printf 'hello tar' > /workspace/dir/file.txt")

	var buf bytes.Buffer
	if err := rt.Export(testContext(t), in, &buf); err != nil {
		t.Fatalf("Export: %v", err)
	}
	found := false
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not a valid tar: %v", err)
		}
		if strings.HasPrefix(h.Name, "/") || strings.Contains(h.Name, "..") {
			t.Errorf("entry %q is not relative", h.Name)
		}
		if strings.TrimPrefix(h.Name, "./") == "dir/file.txt" {
			body, _ := io.ReadAll(tr)
			found = string(body) == "hello tar"
		}
	}
	if !found {
		t.Error("dir/file.txt with its content is not in the export")
	}
}

func TestPTYEchoResizeAndExit(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)

	p, err := rt.OpenPTY(testContext(t), in, 80, 24)
	if err != nil {
		t.Fatalf("OpenPTY: %v", err)
	}
	defer p.Close()
	out := &ptyReader{t: t, p: p, data: make(chan []byte, 64)}
	go out.pump()

	write(t, p, "echo \"sum=$((40+2)) shell=${BASH_VERSION:+bash} dir=$PWD\"\n")
	out.waitFor("sum=42 shell=bash dir=/workspace")

	if err := p.Resize(100, 40); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	write(t, p, "stty size\n")
	out.waitFor("40 100")

	write(t, p, "exit 3\n")
	code, err := p.Wait()
	if err != nil || code != 3 {
		t.Fatalf("Wait = %d, %v; want 3", code, err)
	}
}

func TestPTYCloseEndsShell(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t)
	in := newInstance(t, rt)
	ensure(t, rt, in)

	p, err := rt.OpenPTY(testContext(t), in, 0, 0)
	if err != nil {
		t.Fatalf("OpenPTY: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, p) }()
	write(t, p, "sleep 555\n")
	time.Sleep(300 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatalf("Wait after Close: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for sh(t, rt, in, "ps -o args | grep -c -e '^bash -l' -e '^sleep 555' || true") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("the shell outlived Close")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func write(t *testing.T, p ports.PTY, s string) {
	t.Helper()
	if _, err := io.WriteString(p, s); err != nil {
		t.Fatalf("write to PTY: %v", err)
	}
}

// ptyReader collects a PTY's output so a test can wait for a string in it.
type ptyReader struct {
	t    *testing.T
	p    ports.PTY
	data chan []byte
	seen strings.Builder
}

func (r *ptyReader) pump() {
	buf := make([]byte, 4096)
	for {
		n, err := r.p.Read(buf)
		if n > 0 {
			r.data <- append([]byte(nil), buf[:n]...)
		}
		if err != nil {
			close(r.data)
			return
		}
	}
}

func (r *ptyReader) waitFor(want string) {
	r.t.Helper()
	timeout := time.After(20 * time.Second)
	for !strings.Contains(r.seen.String(), want) {
		select {
		case b, ok := <-r.data:
			if !ok {
				r.t.Fatalf("PTY closed before %q; got %q", want, r.seen.String())
			}
			r.seen.Write(b)
		case <-timeout:
			r.t.Fatalf("no %q from the PTY; got %q", want, r.seen.String())
		}
	}
	// Look for the next string only in what comes after this one.
	rest := r.seen.String()[strings.Index(r.seen.String(), want)+len(want):]
	r.seen.Reset()
	r.seen.WriteString(rest)
}
