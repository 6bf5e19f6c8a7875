package docker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// pidWrapper runs argv under sh after writing sh's PID (which exec hands to
// the command) as the first line of stderr. Docker's exec API cannot signal
// an exec, so this PID is how a cancelled command gets killed. Every exec is
// its own session and process-group leader, so killing the group also ends
// what the command started.
var pidWrapper = []string{"sh", "-c", `echo "$$" >&2; exec "$@"`, "sh"}

// killGroup kills a process group, falling back to the process alone.
const killGroup = `kill -s "$1" -- "-$2" 2>/dev/null || kill -s "$1" "$2" 2>/dev/null; exit 0`

// execSpec is one command for daemon.exec.
type execSpec struct {
	cmd     []string
	user    string // "" = the container's user
	workDir string
	env     []string
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
}

// Exec runs req.Cmd in the instance's running container (in /workspace
// unless req.WorkDir says otherwise) and returns its exit code. Cancelling
// ctx kills the command's process group and returns ctx.Err() promptly; so
// does a failing Stdout or Stderr (as upstream). No output is written after
// Exec returns, but a Stdin that blocks may still be read once. An absent
// container is not_found, a stopped one conflict; the container must have a
// POSIX sh (the wrapper that makes cancellation possible).
func (r *Runtime) Exec(ctx context.Context, pin ports.ProjectInstance, req ports.ExecRequest) (int, error) {
	in, err := r.resolve(pin)
	if err != nil {
		return -1, err
	}
	if len(req.Cmd) == 0 {
		return -1, errs.Field("cmd", "is empty")
	}
	d, err := r.daemonFor(in.Target)
	if err != nil {
		return -1, err
	}
	env := in.Env
	if len(req.Env) > 0 {
		env = make(map[string]string, len(in.Env)+len(req.Env))
		for k, v := range in.Env {
			env[k] = v
		}
		for k, v := range req.Env {
			env[k] = v
		}
	}
	workDir := req.WorkDir
	if workDir == "" {
		workDir = workspaceDir
	}
	return d.exec(ctx, in.Container, execSpec{
		cmd: req.Cmd, workDir: workDir, env: envList(env),
		stdin: req.Stdin, stdout: req.Stdout, stderr: req.Stderr,
	})
}

func (d *daemon) exec(ctx context.Context, name string, spec execSpec) (int, error) {
	created, err := d.api.ExecCreate(ctx, name, client.ExecCreateOptions{
		User:         spec.user,
		WorkingDir:   spec.workDir,
		Env:          spec.env,
		Cmd:          append(append([]string{}, pidWrapper...), spec.cmd...),
		AttachStdin:  spec.stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return -1, d.execFailed(err, name)
	}
	att, err := d.api.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		return -1, d.execFailed(err, name)
	}
	defer att.Close()

	stdout, stderr := orDiscard(spec.stdout), orDiscard(spec.stderr)
	pid := &pidSniffer{next: stderr, found: make(chan struct{})}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, pid, att.Reader)
		pid.flush()
		copied <- err
	}()
	if spec.stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, spec.stdin)
			_ = att.CloseWrite()
		}()
	}

	var copyErr error
	finished := false
	select {
	case copyErr = <-copied:
		finished = true
	case <-ctx.Done():
	}
	if ctx.Err() != nil || copyErr != nil {
		// Cancelled, or the output cannot be delivered (the caller's writer
		// failed, the connection broke): the command must not run on unseen.
		d.signal(name, pid.wait(2*time.Second), "KILL")
		att.Close()
		if !finished {
			<-copied // no write to the caller's writers after we return
		}
		if ctx.Err() != nil {
			return -1, ctx.Err()
		}
		return -1, d.fail(copyErr, "stream output of exec in %s", name)
	}
	return d.exitCode(ctx, created.ID)
}

// exitCode waits for the daemon to record an exec's end: the output stream
// can close a moment before the exec's state flips.
func (d *daemon) exitCode(ctx context.Context, execID string) (int, error) {
	delay := 5 * time.Millisecond
	for {
		res, err := d.api.ExecInspect(ctx, execID, client.ExecInspectOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return -1, ctx.Err()
			}
			return -1, d.fail(err, "inspect exec")
		}
		if !res.Running {
			return res.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// signal sends sig to the process group led by pid, on a context of its
// own: the caller's is usually the one that was just cancelled.
func (d *daemon) signal(name string, pid int, sig string) {
	if pid <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	created, err := d.api.ExecCreate(ctx, name, client.ExecCreateOptions{
		User: "0", Cmd: []string{"sh", "-c", killGroup, "sh", sig, strconv.Itoa(pid)},
	})
	if err == nil {
		_, _ = d.api.ExecStart(ctx, created.ID, client.ExecStartOptions{Detach: true})
	}
}

// execFailed maps exec creation errors: the daemon answers 409 when the
// container is not running.
func (d *daemon) execFailed(err error, name string) error {
	if cerrdefs.IsConflict(err) {
		return errs.Wrap(errs.Conflict, err, "sandbox container %s is not running", name)
	}
	return d.fail(err, "exec in sandbox container %s", name)
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// pidSniffer takes the wrapper's PID line off the front of stderr and passes
// everything after it through. Anything that is not a PID line (the wrapper
// never ran: no sh, a bad working directory) is passed through whole.
type pidSniffer struct {
	next  io.Writer
	found chan struct{} // closed once the first line is settled

	mu   sync.Mutex
	head []byte
	done bool
	val  int
}

func (p *pidSniffer) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return p.next.Write(b)
	}
	p.head = append(p.head, b...)
	i := bytes.IndexByte(p.head, '\n')
	if i < 0 && len(p.head) < 24 {
		p.mu.Unlock()
		return len(b), nil
	}
	rest := p.head
	if i >= 0 {
		if n, err := strconv.Atoi(string(p.head[:i])); err == nil && n > 0 {
			p.val, rest = n, p.head[i+1:]
		}
	}
	p.done, p.head = true, nil
	close(p.found)
	p.mu.Unlock()
	if len(rest) > 0 {
		if _, err := p.next.Write(rest); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// flush passes on a short first line that never ended, at end of stream.
func (p *pidSniffer) flush() {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	head := p.head
	p.done, p.head = true, nil
	close(p.found)
	p.mu.Unlock()
	if len(head) > 0 {
		_, _ = p.next.Write(head)
	}
}

// wait returns the PID once the first line is in, 0 when it never comes:
// a command cancelled at once may not have printed it yet.
func (p *pidSniffer) wait(limit time.Duration) int {
	select {
	case <-p.found:
	case <-time.After(limit):
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.val
}

// Export writes /workspace as an uncompressed tar (entries ./name) by
// running tar in the container as root, so files of any owner are included.
// The container must be running — Ensure it first; a stopped one is
// conflict. Bytes already written stay written when it fails midway.
func (r *Runtime) Export(ctx context.Context, pin ports.ProjectInstance, w io.Writer) error {
	in, err := r.resolve(pin)
	if err != nil {
		return err
	}
	d, err := r.daemonFor(in.Target)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	code, err := d.exec(ctx, in.Container, execSpec{
		cmd: []string{"tar", "-cf", "-", "-C", workspaceDir, "."}, user: "0", workDir: "/",
		stdout: w, stderr: &limitedBuffer{buf: &stderr, max: 4096},
	})
	if err != nil {
		return err
	}
	if code != 0 {
		return errs.Wrap(errs.Upstream, errors.New(stderr.String()), "export of %s failed (tar exit %d): %s", in.Container, code, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// limitedBuffer keeps the first max bytes and drops the rest, so a chatty
// failure cannot grow memory without bound.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}
