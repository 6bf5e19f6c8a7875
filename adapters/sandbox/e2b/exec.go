package e2b

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"sync"

	"connectrpc.com/connect"

	"github.com/agents-server/agents-server/adapters/sandbox/e2b/gen/process"
	"github.com/agents-server/agents-server/core/errs"
	"github.com/agents-server/agents-server/ports"
)

// connOf is the project's connected sandbox: the one Ensure connected, or
// (after a restart) the recorded one, connected now.
func (r *Runtime) connOf(ctx context.Context, in ports.ProjectInstance) (*conn, error) {
	if live := r.cached(in.ProjectID); live != nil {
		return live, live.touch(ctx)
	}
	c, err := configOf(in.Target)
	if err != nil {
		return nil, err
	}
	ref := r.refOf(in)
	if ref == "" {
		return nil, errs.E(errs.NotFound, "project %s has no e2b sandbox yet", in.ProjectID)
	}
	m := r.lock(in.ProjectID)
	m.Lock()
	defer m.Unlock()
	live, err := r.connect(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	r.remember(in.ProjectID, live)
	return live, nil
}

// Exec implements ports.SandboxBackend.
func (r *Runtime) Exec(ctx context.Context, in ports.ProjectInstance, req ports.ExecRequest) (int, error) {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return -1, err
	}
	return live.exec(ctx, in.Env, req)
}

// exec runs one command over the daemon's process service: its output
// streams to the request's writers as it comes, stdin is fed in order and
// closed at its end. A context that ends, or a writer that fails, kills
// the command and everything it started (killTree); a stream the daemon
// ends at the deadline the call forwarded is the deadline's error too.
func (c *conn) exec(ctx context.Context, env map[string]string, req ports.ExecRequest) (int, error) {
	if len(req.Cmd) == 0 {
		return -1, errs.E(errs.Validation, "no command to run")
	}
	stop := c.keepAlive(ctx)
	defer stop()
	cwd := req.WorkDir
	if cwd == "" {
		cwd = workspaceDir
	}
	envs := maps.Clone(env)
	if envs == nil {
		envs = map[string]string{}
	}
	maps.Copy(envs, req.Env)
	withStdin := req.Stdin != nil
	name, args := wrapped(req.Cmd)
	stream, err := c.proc.Start(ctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: name, Args: args, Envs: envs, Cwd: &cwd},
		Stdin:   &withStdin,
	}))
	if err != nil {
		return -1, c.cfg.daemonFail(ctx, err, "starting %q in e2b sandbox %s", req.Cmd[0], c.id)
	}
	defer stream.Close()
	stdout, stderr := orDiscard(req.Stdout), orDiscard(req.Stderr)
	var pid uint32
	started := false
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		switch {
		case ev.GetStart() != nil && !started:
			started, pid = true, ev.GetStart().GetPid()
			if withStdin {
				go c.feed(ctx, pid, req.Stdin)
			}
		case ev.GetData() != nil:
			d := ev.GetData()
			if b := d.GetStdout(); len(b) > 0 {
				if _, err := stdout.Write(b); err != nil {
					c.killTree(pid)
					return -1, err
				}
			}
			if b := d.GetStderr(); len(b) > 0 {
				if _, err := stderr.Write(b); err != nil {
					c.killTree(pid)
					return -1, err
				}
			}
		case ev.GetEnd() != nil:
			end := ev.GetEnd()
			if !end.GetExited() && atDeadline(ctx, nil) {
				// The daemon killed the command at the deadline the call
				// forwarded, counted from its own moment: that is the
				// timeout, and what the command started goes too.
				c.killTree(pid)
				return -1, awaitDeadline(ctx)
			}
			if !end.GetExited() && end.GetExitCode() == 0 {
				return -1, nil
			}
			return int(end.GetExitCode()), nil
		}
	}
	if started && ctx.Err() != nil {
		c.killTree(pid)
		return -1, ctx.Err()
	}
	err = stream.Err()
	if atDeadline(ctx, err) {
		if started {
			c.killTree(pid)
		}
		return -1, awaitDeadline(ctx)
	}
	if err != nil {
		return -1, c.cfg.daemonFail(ctx, err, "running %q in e2b sandbox %s", req.Cmd[0], c.id)
	}
	return -1, errs.E(errs.Upstream, "the daemon of e2b sandbox %s ended %q's stream without its exit", c.id, req.Cmd[0])
}

// feed sends stdin to a process in order, chunk by chunk, then closes it.
func (c *conn) feed(ctx context.Context, pid uint32, stdin io.Reader) {
	sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			in := &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: bytes.Clone(buf[:n])}}
			if _, serr := c.proc.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{Process: sel, Input: in})); serr != nil {
				return // the process is gone (or the call cancelled): nobody reads its stdin any more
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				_, _ = c.proc.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{Process: sel}))
			}
			return
		}
	}
}

// Export implements ports.SandboxBackend: tar runs in the sandbox as root
// and its output streams to w.
func (r *Runtime) Export(ctx context.Context, in ports.ProjectInstance, w io.Writer) error {
	live, err := r.connOf(ctx, in)
	if err != nil {
		return err
	}
	var stderr outBuf
	code, err := live.exec(ctx, nil, ports.ExecRequest{Cmd: []string{"tar", "-cf", "-", "-C", workspaceDir, "."}, WorkDir: "/", Stdout: w, Stderr: &stderr})
	if err != nil {
		return err
	}
	if code != 0 {
		return errs.Wrap(errs.Upstream, errors.New(stderr.String()), "export of e2b sandbox %s failed (tar exit %d): %s", live.id, code, bytes.TrimSpace([]byte(stderr.String())))
	}
	return nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// outBuf is a buffer safe for the two streams of one command.
type outBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *outBuf) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *outBuf) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
