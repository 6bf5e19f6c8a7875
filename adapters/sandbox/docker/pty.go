package docker

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/agents-server/agents-server/ports"
)

// loginShell prints its PID (the first line of the stream, taken off by
// OpenPTY so Close can hang the shell up), then becomes bash when the image
// has it, else sh — one exec instead of probing first.
var loginShell = []string{"sh", "-c", `echo "$$"; if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi`}

const ptyOpenTimeout = 15 * time.Second

// OpenPTY starts an interactive login shell (bash, else sh) in the running
// container, in /workspace, sized cols x rows. ctx bounds the opening only;
// the shell lives until it exits or the PTY is closed. A stopped container is
// conflict, an absent one not_found.
func (r *Runtime) OpenPTY(ctx context.Context, pin ports.ProjectInstance, cols, rows uint) (ports.PTY, error) {
	in, err := r.resolve(pin)
	if err != nil {
		return nil, err
	}
	d, err := r.daemonFor(in.Target)
	if err != nil {
		return nil, err
	}
	size := client.ConsoleSize{Height: rows, Width: cols}
	if cols == 0 || rows == 0 {
		size = client.ConsoleSize{}
	}
	created, err := d.api.ExecCreate(ctx, in.Container, client.ExecCreateOptions{
		TTY: true, ConsoleSize: size,
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
		WorkingDir: workspaceDir,
		Env:        append(envList(in.Env), "TERM=xterm-256color"),
		Cmd:        loginShell,
	})
	if err != nil {
		return nil, d.execFailed(err, in.Container)
	}
	att, err := d.api.ExecAttach(ctx, created.ID, client.ExecAttachOptions{TTY: true, ConsoleSize: size})
	if err != nil {
		return nil, d.execFailed(err, in.Container)
	}
	p := &pty{d: d, container: in.Container, execID: created.ID, att: att, eof: make(chan struct{}), closed: make(chan struct{})}
	if err := p.readPID(ctx); err != nil {
		att.Close()
		return nil, d.fail(err, "open a shell in sandbox container %s", in.Container)
	}
	if size.Width > 0 {
		// API 1.41 ignores the size given at creation; set it now that the
		// shell runs (a failure only leaves the default 80x24).
		_ = p.Resize(cols, rows)
	}
	return p, nil
}

// pty is one interactive exec. Reads come from the TTY stream, writes go to
// its stdin.
type pty struct {
	d         *daemon
	container string
	execID    string
	att       client.ExecAttachResult
	pid       int

	eofOnce   sync.Once
	eof       chan struct{} // closed when the stream ended
	closeOnce sync.Once
	closed    chan struct{} // closed by Close
}

// readPID takes the wrapper's PID line off the front of the stream.
func (p *pty) readPID(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ptyOpenTimeout)
	defer cancel()
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := p.att.Reader.ReadString('\n')
		got <- result{line, err}
	}()
	select {
	case res := <-got:
		if res.err != nil {
			return res.err
		}
		n, err := strconv.Atoi(strings.TrimSpace(res.line))
		if err != nil {
			return errors.New("the shell did not start: " + strings.TrimSpace(res.line))
		}
		p.pid = n
		return nil
	case <-ctx.Done():
		p.att.Close()
		<-got
		return ctx.Err()
	}
}

// Read returns the shell's output; io.EOF once it ended or was closed.
func (p *pty) Read(b []byte) (int, error) {
	n, err := p.att.Reader.Read(b)
	if err != nil {
		p.eofOnce.Do(func() { close(p.eof) })
		select {
		case <-p.closed:
			return n, io.EOF
		default:
		}
	}
	return n, err
}

// Write sends keystrokes to the shell.
func (p *pty) Write(b []byte) (int, error) { return p.att.Conn.Write(b) }

// ptyResizeTimeout bounds one resize. It is generous on purpose: a resize
// the client gives up on still reaches the daemon, and may then land after
// a later one, leaving the terminal at the older size; a busy daemon
// answered in over 5 s in CI.
const ptyResizeTimeout = 30 * time.Second

// Resize sets the terminal size.
func (p *pty) Resize(cols, rows uint) error {
	ctx, cancel := context.WithTimeout(context.Background(), ptyResizeTimeout)
	defer cancel()
	_, err := p.d.api.ExecResize(ctx, p.execID, client.ExecResizeOptions{Height: rows, Width: cols})
	return p.d.fail(err, "resize terminal")
}

// Close hangs up the shell (SIGHUP to its process group, as a closing
// terminal would) and drops the connection. Closing the connection alone
// would leave the shell running: the daemon does not end an exec whose
// client went away.
func (p *pty) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.d.signal(p.container, p.pid, "HUP")
		p.att.Close()
	})
	return nil
}

// Wait blocks until the shell exits and returns its exit code, -1 when it
// could not be learned (the daemon went away, or the shell outlived Close).
func (p *pty) Wait() (int, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-p.eof:
			return p.finalCode(), nil
		case <-p.closed:
			return p.finalCode(), nil
		case <-tick.C:
			// Nobody may be reading the stream; ask the daemon directly.
			if code, done := p.inspect(); done {
				return code, nil
			}
		}
	}
}

// finalCode polls briefly for the exit code of a shell that just ended.
func (p *pty) finalCode() int {
	for range 50 {
		if code, done := p.inspect(); done {
			return code
		}
		time.Sleep(100 * time.Millisecond)
	}
	return -1
}

func (p *pty) inspect() (int, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := p.d.api.ExecInspect(ctx, p.execID, client.ExecInspectOptions{})
	if err != nil {
		return -1, true
	}
	return res.ExitCode, !res.Running
}
